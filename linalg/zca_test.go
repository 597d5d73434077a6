package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"dspk/kilosort"

	"gonum.org/v1/gonum/mat"
)

// np1 returns the Neuropixels 1.0 site positions (kilosort4.md §14) of the
// first C sites.
func np1(C int) (x, y []float64) {
	x, y = make([]float64, C), make([]float64, C)
	for i := range x {
		x[i] = []float64{43, 11, 59, 27}[i%4]
		y[i] = 20 * float64(i/2+1)
	}
	return x, y
}

// expCov returns Σ_ij = s²·exp(−d_ij/ell) over the sites, a positive
// definite covariance decaying with distance.
func expCov(x, y []float64, s, ell float64) []float64 {
	C := len(x)
	cov := make([]float64, C*C)
	for i := 0; i < C; i++ {
		for j := 0; j < C; j++ {
			cov[i*C+j] = s * s * math.Exp(-math.Hypot(x[i]-x[j], y[i]-y[j])/ell)
		}
	}
	return cov
}

// gaussian draws n samples of N(0, cov) as a C×n float32 window.
func gaussian(rng *rand.Rand, cov []float64, C, n int) []float32 {
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(C, append([]float64(nil), cov...))) {
		panic("covariance not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	z := mat.NewDense(C, n, nil)
	for i := 0; i < C; i++ {
		for t := 0; t < n; t++ {
			z.Set(i, t, rng.NormFloat64())
		}
	}
	var xd mat.Dense
	xd.Mul(&l, z)
	x := make([]float32, C*n)
	for i := 0; i < C; i++ {
		for t := 0; t < n; t++ {
			x[i*n+t] = float32(xd.At(i, t))
		}
	}
	return x
}

// refLocalRow is an independent float64 computation of one row of the
// local ZCA: neighbours by repeated minimum search (self first, then
// (distance, index) order), the block's SVD through gonum (as Kilosort4's
// svd), W_c = U·diag((s+eps)^−½)·Uᵀ, row 0.
func refLocalRow(cc []float64, C int, x, y []float64, nrange int, eps float64, c int) (idx []int, row []float64) {
	n := min(nrange, C)
	used := make([]bool, C)
	idx = []int{c}
	used[c] = true
	for len(idx) < n {
		best, bd := -1, math.Inf(1)
		for i := 0; i < C; i++ {
			d := (x[i]-x[c])*(x[i]-x[c]) + (y[i]-y[c])*(y[i]-y[c])
			if !used[i] && d < bd {
				best, bd = i, d
			}
		}
		used[best] = true
		idx = append(idx, best)
	}
	b := mat.NewDense(n, n, nil)
	for a, i := range idx {
		for k, j := range idx {
			b.Set(a, k, cc[i*C+j])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(b, mat.SVDFull) {
		panic("svd failed")
	}
	s := svd.Values(nil)
	var u mat.Dense
	svd.UTo(&u)
	row = make([]float64, n)
	for k := 0; k < n; k++ {
		for q := 0; q < n; q++ {
			row[k] += u.At(0, q) / math.Sqrt(s[q]+eps) * u.At(k, q)
		}
	}
	return idx, row
}

// TestLocalZCAReference compares LocalZCA with refLocalRow for every
// channel: same columns in the same order, values within float32 rounding
// plus 1e-9 of the row's largest value. Cases cover NP1 (ties in distance
// everywhere), nrange clipped to C, nrange 1, and a dead channel (zero row
// and column: a zero eigenvalue floored by eps).
func TestLocalZCAReference(t *testing.T) {
	cases := []struct {
		name      string
		C, nrange int
		dead      int
		eps       float64
	}{
		{"NP1", 384, 32, -1, kilosort.WhiteningEps},
		{"NP1_dead", 96, 32, 40, kilosort.WhiteningEps},
		{"clipped", 10, 32, -1, kilosort.WhiteningEps},
		{"nrange1", 7, 1, -1, kilosort.WhiteningEps},
		{"single", 1, 32, -1, 0.5},
		{"odd", 37, 9, -1, 1e-3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.C), uint64(tc.nrange)))
			x, y := np1(tc.C)
			X := gaussian(rng, expCov(x, y, 10, 30), tc.C, 2000)
			if tc.dead >= 0 {
				clear(X[tc.dead*2000 : (tc.dead+1)*2000])
			}
			m := NewSecondMoment(nil, tc.C)
			m.Add32(X, 2000, 0, 2000)
			cc := result(m)
			w, err := LocalZCA(cc, tc.C, x, y, tc.nrange, tc.eps)
			if err != nil {
				t.Fatal(err)
			}
			n := min(tc.nrange, tc.C)
			if w.C != tc.C || w.K != n {
				t.Fatalf("C=%d K=%d, want %d, %d", w.C, w.K, tc.C, n)
			}
			for c := 0; c < tc.C; c++ {
				idx, row := refLocalRow(cc, tc.C, x, y, tc.nrange, tc.eps, c)
				var big float64
				for _, v := range row {
					big = math.Max(big, math.Abs(v))
				}
				for j := 0; j < n; j++ {
					got := float64(w.Value[c*n+j])
					if int(w.Index[c*n+j]) != idx[j] {
						t.Fatalf("channel %d: Index[%d] = %d, want %d", c, j, w.Index[c*n+j], idx[j])
					}
					if math.Abs(got-row[j]) > 0x1p-24*math.Abs(row[j])+1e-9*big {
						t.Fatalf("channel %d: Value[%d] = %v, want %v", c, j, got, row[j])
					}
				}
			}
		})
	}
}

// secondMomentOf returns the float64 second moment of a C×n float32 window.
func secondMomentOf(x []float32, C, n int) []float64 {
	m := NewSecondMoment(nil, C)
	m.Add32(x, n, 0, n)
	return result(m)
}

// TestLocalZCAWhitens draws Gaussian data of known covariance, decaying
// exponentially with distance on NP1 geometry, and whitens it.
//
// Global case (nrange ≥ C, 64 channels): W is the full ZCA of the sample
// second moment, so the second moment of W·X (float32 apply) is the
// identity: every entry within 1e-5 (measured 2e-7: float32 rounding).
//
// Local case (NP1, 384 channels, nrange 32): each output has unit variance
// (W's row c whitens c's own neighbourhood exactly: within 1e-5), and the
// second moments of outputs of sites ≤ 40 µm apart, correlations of about
// 0.55 before whitening, fall below 1e-2 (measured 2e-4; the rows come from
// different neighbourhoods, so they are not exactly zero).
func TestLocalZCAWhitens(t *testing.T) {
	for _, tc := range []struct {
		name      string
		C, nrange int
		n         int
	}{{"global", 64, 64, 20000}, {"local", 384, 32, 8192}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.C), 77))
			x, y := np1(tc.C)
			X := gaussian(rng, expCov(x, y, 10, 40), tc.C, tc.n)
			cc := secondMomentOf(X, tc.C, tc.n)
			w, err := LocalZCA(cc, tc.C, x, y, tc.nrange, kilosort.WhiteningEps)
			if err != nil {
				t.Fatal(err)
			}
			Y := nan32(tc.C * tc.n)
			w.Apply(Y, X, tc.n)
			cy := secondMomentOf(Y, tc.C, tc.n)
			var maxDiag, maxOff, maxOffBefore float64
			for i := 0; i < tc.C; i++ {
				maxDiag = math.Max(maxDiag, math.Abs(cy[i*tc.C+i]-1))
				for j := 0; j < tc.C; j++ {
					near := math.Hypot(x[i]-x[j], y[i]-y[j]) <= 40
					if j == i || (tc.nrange < tc.C && !near) {
						continue
					}
					maxOff = math.Max(maxOff, math.Abs(cy[i*tc.C+j]))
					r := cc[i*tc.C+j] / math.Sqrt(cc[i*tc.C+i]*cc[j*tc.C+j])
					maxOffBefore = math.Max(maxOffBefore, math.Abs(r))
				}
			}
			t.Logf("max |diag−1| %.3g, max |off-diagonal| %.3g (correlation before %.3g)", maxDiag, maxOff, maxOffBefore)
			offTol := 1e-2
			if tc.nrange >= tc.C {
				offTol = 1e-5
			}
			if !(maxDiag <= 1e-5) || !(maxOff <= offTol) || !(maxOffBefore > 0.5) {
				t.Errorf("diag tolerance 1e-5, off-diagonal tolerance %g", offTol)
			}
		})
	}
}

func TestLocalZCAErrors(t *testing.T) {
	x, y := np1(4)
	m := NewSecondMoment(nil, 4)
	if _, err := LocalZCA(result(m), 4, x, y, 32, kilosort.WhiteningEps); err == nil {
		t.Error("no windows (NaN): no error")
	}
	cc := make([]float64, 16)
	for i := range 4 {
		cc[i*5] = 1
	}
	cc[6] = math.Inf(1)
	_, err := LocalZCA(cc, 4, x, y, 32, kilosort.WhiteningEps)
	if err == nil {
		t.Error("Inf: no error")
	} else {
		t.Log(err)
	}
	cases := map[string]func(){
		"len cc":   func() { LocalZCA(cc[:15], 4, x, y, 32, 0) },
		"len x":    func() { LocalZCA(cc, 4, x[:3], y, 32, 0) },
		"nrange 0": func() { LocalZCA(cc, 4, x, y, 0, 0) },
		"eps < 0":  func() { LocalZCA(cc, 4, x, y, 4, -1) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

func BenchmarkLocalZCA(b *testing.B) {
	x, y := np1(384)
	rng := rand.New(rand.NewPCG(1, 2))
	X := gaussian(rng, expCov(x, y, 10, 40), 384, 2000)
	cc := secondMomentOf(X, 384, 2000)
	for b.Loop() {
		if _, err := LocalZCA(cc, 384, x, y, kilosort.Defaults().WhiteningRange, kilosort.WhiteningEps); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleLocalZCA() {
	// Two sites 20 µm apart with unit variance and correlation 0.6:
	// eigenvalues 1.6 and 0.4, row 0 of the inverse square root is
	// ((1.6^−½ + 0.4^−½)/2, (1.6^−½ − 0.4^−½)/2).
	cc := []float64{1, 0.6, 0.6, 1}
	w, err := LocalZCA(cc, 2, []float64{0, 0}, []float64{0, 20}, kilosort.Defaults().WhiteningRange, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("K=%d row 0: %.4f at %d, %.4f at %d\n", w.K, w.Value[0], w.Index[0], w.Value[1], w.Index[1])
	// Output: K=2 row 0: 1.1859 at 0, -0.3953 at 1
}
