//go:build amd64 && !noasm

package cluster

import "golang.org/x/sys/cpu"

// useDots512 selects the AVX-512 kernel of dotsT (dots_amd64.s); tests
// switch it off to compare with the Go code.
var useDots512 = cpu.X86.HasAVX512F

//go:noescape
func dotsTAVX512(acc, x, tr *float64, d, ld, m int)

// dotsT sets acc[b] = Σ_t x[t]·tr[t·ld + b] for b < m (m a multiple of 8,
// ≤ ld), each sum from 0 in the order t = 0 … len(x)−1, each product
// rounded and then added: the sums of dot, bit for bit.
func dotsT(acc, x, tr []float64, ld, m int) {
	d := len(x)
	if m == 0 || d == 0 {
		clear(acc[:m])
		return
	}
	if m%8 != 0 || m > ld || len(acc) < m || len(tr) < (d-1)*ld+m {
		panic("cluster: dotsT: bad sizes")
	}
	if useDots512 {
		dotsTAVX512(&acc[0], &x[0], &tr[0], d, ld, m)
		return
	}
	dotsTGo(acc, x, tr, ld, m)
}

//go:noescape
func dots2TAVX512(acc0, acc1, x0, x1, tr *float64, d, ld, m int)

// dots2T is dotsT for two rows x0 and x1 (of equal length) at once.
func dots2T(acc0, acc1, x0, x1, tr []float64, ld, m int) {
	d := len(x0)
	if m == 0 || d == 0 {
		clear(acc0[:m])
		clear(acc1[:m])
		return
	}
	if m%8 != 0 || m > ld || len(x1) != d || len(acc0) < m || len(acc1) < m || len(tr) < (d-1)*ld+m {
		panic("cluster: dots2T: bad sizes")
	}
	if useDots512 {
		dots2TAVX512(&acc0[0], &acc1[0], &x0[0], &x1[0], &tr[0], d, ld, m)
		return
	}
	dotsTGo(acc0, x0, tr, ld, m)
	dotsTGo(acc1, x1, tr, ld, m)
}

//go:noescape
func termsAccAVX512(blk, acc, vq *float64, e float64, n int)

// termsAcc adds each candidate's term max((2·acc[q] − vq[q]) − e, 0) into
// blk[q] for q < len(blk) (a multiple of 8 where the kernel runs): the
// sums of termsAccGo bit for bit.
func termsAcc(blk, acc, vq []float64, e float64) {
	n := len(blk)
	if len(acc) < n || len(vq) < n {
		panic("cluster: termsAcc: bad sizes")
	}
	if useDots512 && n%8 == 0 && n > 0 {
		termsAccAVX512(&blk[0], &acc[0], &vq[0], e, n)
		return
	}
	termsAccGo(blk, acc, vq, e)
}

//go:noescape
func dots4TAVX512(acc *[4]*float64, x *[4]*float64, tr *float64, d, ld, m int)

// dots4T is dotsT for four rows x[0…3] (of equal length) at once; where
// the CPU has AVX-512 each load of tr serves all four.
func dots4T(acc [4][]float64, x [4][]float64, tr []float64, ld, m int) {
	d := len(x[0])
	if m == 0 || d == 0 {
		for k := range acc {
			clear(acc[k][:m])
		}
		return
	}
	if m%8 != 0 || m > ld || len(tr) < (d-1)*ld+m {
		panic("cluster: dots4T: bad sizes")
	}
	for k := range 4 {
		if len(x[k]) != d || len(acc[k]) < m {
			panic("cluster: dots4T: bad sizes")
		}
	}
	if useDots512 {
		pa := [4]*float64{&acc[0][0], &acc[1][0], &acc[2][0], &acc[3][0]}
		px := [4]*float64{&x[0][0], &x[1][0], &x[2][0], &x[3][0]}
		dots4TAVX512(&pa, &px, &tr[0], d, ld, m)
		return
	}
	for k := range 4 {
		dotsTGo(acc[k], x[k], tr, ld, m)
	}
}

//go:noescape
func blockTermsAVX512(row, e *float64, vq float64, n int) float64

// blockTerms returns Σ_i max((2·g[i] − vq) − e[i], 0) over i < len(g),
// summed in order from 0: blockTermsGo's sum bit for bit.
func blockTerms(g, e []float64, vq float64) float64 {
	n := len(g)
	e = e[:n]
	n8 := n / 8 * 8
	if !useDots512 || n8 == 0 {
		return blockTermsGo(g, e, vq, 0)
	}
	s := blockTermsAVX512(&g[0], &e[0], vq, n8)
	return blockTermsGo(g[n8:], e[n8:], vq, s)
}
