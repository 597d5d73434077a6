package cluster

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotsTMatchesDot checks the kernels of one, two and four rows
// (AVX-512 where present) and their Go reference against dot, bit for bit, on float32 values widened: odd
// lengths, strides above m, NaN-poisoned outputs (written below m, left
// alone above).
func TestDotsTMatchesDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	saved := useDots512
	defer func() { useDots512 = saved }()
	for _, vec := range []bool{false, true} {
		useDots512 = vec && saved
		for _, c := range []struct{ d, ld, m int }{{1, 8, 8}, {7, 16, 16}, {90, 104, 104}, {90, 104, 40}, {13, 33, 32}, {5, 64, 56}, {200, 8, 8}, {90, 128, 128}, {17, 100, 96}, {3, 72, 72}} {
			x := randRows(rng, 1, c.d, 0)
			tr := randRows(rng, c.d, c.ld, 0)
			acc := make([]float64, c.m+3)
			for i := range acc {
				acc[i] = math.NaN()
			}
			x1 := randRows(rng, 1, c.d, 0)
			acc1 := make([]float64, c.m+3)
			acc2 := make([]float64, c.m+3)
			for i := range acc {
				acc[i], acc1[i], acc2[i] = math.NaN(), math.NaN(), math.NaN()
			}
			dotsT(acc, x, tr, c.ld, c.m)
			dots2T(acc1, acc2, x, x1, tr, c.ld, c.m)
			var xs, as [4][]float64
			for k := range 4 {
				xs[k] = randRows(rng, 1, c.d, 0)
				as[k] = make([]float64, c.m+3)
				for i := range as[k] {
					as[k][i] = math.NaN()
				}
			}
			dots4T(as, xs, tr, c.ld, c.m)
			col := make([]float64, c.d)
			for b := 0; b < c.m; b++ {
				for t := range col {
					col[t] = tr[t*c.ld+b]
				}
				for k := range 4 {
					if w := dot(xs[k], col); math.Float64bits(as[k][b]) != math.Float64bits(w) {
						t.Fatalf("vector %v %+v: quad %d [%d] = %v, want %v", useDots512, c, k, b, as[k][b], w)
					}
				}
				want, want1 := dot(x, col), dot(x1, col)
				if math.Float64bits(acc[b]) != math.Float64bits(want) {
					t.Fatalf("vector %v %+v: acc[%d] = %v, want %v", useDots512, c, b, acc[b], want)
				}
				if math.Float64bits(acc1[b]) != math.Float64bits(want) || math.Float64bits(acc2[b]) != math.Float64bits(want1) {
					t.Fatalf("vector %v %+v: pair [%d] = %v %v, want %v %v", useDots512, c, b, acc1[b], acc2[b], want, want1)
				}
			}
			for b := c.m; b < len(acc); b++ {
				if !math.IsNaN(acc[b]) || !math.IsNaN(acc1[b]) || !math.IsNaN(acc2[b]) ||
					!math.IsNaN(as[0][b]) || !math.IsNaN(as[1][b]) || !math.IsNaN(as[2][b]) || !math.IsNaN(as[3][b]) {
					t.Fatalf("vector %v %+v: [%d] written", useDots512, c, b)
				}
			}
		}
	}
	if !saved {
		t.Log("no AVX-512 here: only the Go code was compared")
	}
}

// TestTermsAccMatchesGo checks termsAcc (the AVX-512 kernel where the CPU
// has it) against termsAccGo bit for bit, with NaN, ±Inf, ±0 and ties at
// zero among the inputs.
func TestTermsAccMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	special := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e-300}
	for trial := range 200 {
		n := 8 * (1 + rng.IntN(14))
		blk, acc, vq := make([]float64, n), make([]float64, n), make([]float64, n)
		for q := range n {
			blk[q] = rng.Float64() * 10
			acc[q] = rng.NormFloat64() * 5
			vq[q] = rng.Float64() * 20
			switch rng.IntN(10) {
			case 0:
				acc[q] = special[rng.IntN(len(special))]
			case 1:
				vq[q] = 2 * acc[q] // a zero term before e
			}
		}
		e := rng.Float64() * 3
		if trial%7 == 0 {
			e = 0
		}
		got, want := append([]float64(nil), blk...), append([]float64(nil), blk...)
		termsAcc(got, acc, vq, e)
		termsAccGo(want, acc, vq, e)
		for q := range n {
			if math.Float64bits(got[q]) != math.Float64bits(want[q]) {
				t.Fatalf("trial %d: q %d (acc %g, vq %g, e %g): %g, Go %g", trial, q, acc[q], vq[q], e, got[q], want[q])
			}
		}
	}
}

// TestBlockTermsMatchesGo checks blockTerms (the vector kernel where the
// CPU has AVX-512, with its Go tail) against blockTermsGo bit for bit, on
// odd lengths, sparse and dense positive terms, and NaN, ±Inf and ±0.
func TestBlockTermsMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 4))
	special := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e-300}
	for trial := range 300 {
		n := rng.IntN(300)
		g, e := make([]float64, n), make([]float64, n)
		vq := rng.Float64() * 20
		// The share of positive terms, from none to most.
		shift := []float64{-40, -8, 0, 8}[trial%4]
		for i := range n {
			g[i] = rng.NormFloat64()*5 + shift/2 + vq/2
			e[i] = rng.Float64() * 3
			switch rng.IntN(12) {
			case 0:
				g[i] = special[rng.IntN(len(special))]
			case 1:
				e[i] = special[rng.IntN(len(special))]
			case 2:
				g[i] = (vq + e[i]) / 2 // a term of about zero
			}
		}
		got, want := blockTerms(g, e, vq), blockTermsGo(g, e, vq, 0)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("trial %d (n %d): %v, Go %v", trial, n, got, want)
		}
	}
}
