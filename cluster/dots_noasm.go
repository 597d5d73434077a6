//go:build !amd64 || noasm

package cluster

// useDots512 is false without the amd64 assembly.
var useDots512 = false

// dotsT sets acc[b] = Σ_t x[t]·tr[t·ld + b] for b < m, each sum in order
// (see dotsTGo).
func dotsT(acc, x, tr []float64, ld, m int) { dotsTGo(acc, x, tr, ld, m) }

// dots2T is dotsT for two rows at once.
func dots2T(acc0, acc1, x0, x1, tr []float64, ld, m int) {
	dotsTGo(acc0, x0, tr, ld, m)
	dotsTGo(acc1, x1, tr, ld, m)
}

// termsAcc adds each candidate's term into blk (see termsAccGo).
func termsAcc(blk, acc, vq []float64, e float64) { termsAccGo(blk, acc, vq, e) }

// dots4T is dotsT for four rows at once.
func dots4T(acc [4][]float64, x [4][]float64, tr []float64, ld, m int) {
	for k := range 4 {
		dotsTGo(acc[k], x[k], tr, ld, m)
	}
}

// blockTerms returns the in-order sum of a block's terms (see
// blockTermsGo).
func blockTerms(g, e []float64, vq float64) float64 { return blockTermsGo(g, e, vq, 0) }
