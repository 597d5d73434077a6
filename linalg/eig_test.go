package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func randomSym(rng *rand.Rand, n int) []float64 {
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := rng.NormFloat64()
			a[i*n+j], a[j*n+i] = v, v
		}
	}
	return a
}

// checkSign fails unless the first entry of largest magnitude is positive.
func checkSign(t *testing.T, v []float64) {
	t.Helper()
	best := 0
	for i, e := range v {
		if math.Abs(e) > math.Abs(v[best]) {
			best = i
		}
	}
	if !(v[best] > 0) {
		t.Errorf("sign convention: largest entry v[%d] = %v", best, v[best])
	}
}

// TestEigSym checks A·v_k = λ_k·v_k (residual ≤ 1e-12·‖A‖_F·n), unit
// orthogonal vectors (1e-12), descending eigenvalues, Σ λ = trace, and the
// sign convention, on random symmetric matrices whose lower triangle is
// garbage (only the upper triangle is read).
func TestEigSym(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 32, 61} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(n), 1))
			a := randomSym(rng, n)
			in := slices.Clone(a)
			for i := 0; i < n; i++ {
				for j := 0; j < i; j++ {
					in[i*n+j] = 1e6 * rng.NormFloat64()
				}
			}
			vals, vecs := EigSym(in, n)
			var norm, trace, sum float64
			for i, v := range a {
				norm += v * v
				if i%(n+1) == 0 {
					trace += v
				}
			}
			norm = math.Sqrt(norm)
			for k := 0; k < n; k++ {
				sum += vals[k]
				if k > 0 && vals[k] > vals[k-1] {
					t.Errorf("vals[%d] = %v > vals[%d] = %v", k, vals[k], k-1, vals[k-1])
				}
				v := vecs[k*n : (k+1)*n]
				checkSign(t, v)
				for i := 0; i < n; i++ {
					var s float64
					for j := 0; j < n; j++ {
						s += a[i*n+j] * v[j]
					}
					if r := math.Abs(s - vals[k]*v[i]); r > 1e-12*norm*float64(n) {
						t.Fatalf("residual %g for k=%d i=%d", r, k, i)
					}
				}
				for l := 0; l <= k; l++ {
					var d float64
					for j := 0; j < n; j++ {
						d += v[j] * vecs[l*n+j]
					}
					want := 0.0
					if l == k {
						want = 1
					}
					if math.Abs(d-want) > 1e-12 {
						t.Fatalf("v%d·v%d = %v", k, l, d)
					}
				}
			}
			if math.Abs(sum-trace) > 1e-12*norm*float64(n) {
				t.Errorf("Σλ = %v, trace = %v", sum, trace)
			}
		})
	}
}

func TestEigSymKnown(t *testing.T) {
	// diag(1, 3, 2): vectors are unit axes, negative-signed ones are flipped.
	vals, vecs := EigSym([]float64{1, 0, 0, 0, 3, 0, 0, 0, 2}, 3)
	if !slices.Equal(vals, []float64{3, 2, 1}) || !slices.Equal(vecs, []float64{0, 1, 0, 0, 0, 1, 1, 0, 0}) {
		t.Errorf("vals = %v, vecs = %v", vals, vecs)
	}
	// [[2, 1], [1, 2]]: λ = 3 with (1, 1)/√2, λ = 1 with ±(1, −1)/√2; the
	// equal magnitudes make the first entry decide the sign.
	vals, vecs = EigSym([]float64{2, 1, 1, 2}, 2)
	r := 1 / math.Sqrt2
	want := []float64{r, r, r, -r}
	for i := range want {
		if math.Abs(vecs[i]-want[i]) > 1e-15 {
			t.Errorf("vecs = %v, want %v", vecs, want)
			break
		}
	}
	if math.Abs(vals[0]-3) > 1e-15 || math.Abs(vals[1]-1) > 1e-15 {
		t.Errorf("vals = %v", vals)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
		vals, vecs = EigSym([]float64{1, bad, bad, 1}, 2)
		for _, v := range append(vals, vecs...) {
			if !math.IsNaN(v) {
				t.Errorf("input %v: got %v, want all NaN", bad, append(vals, vecs...))
				break
			}
		}
	}
}

// TestTopRightSingular compares with the eigenvectors of XᵀX (EigSym) on
// random matrices with distinct singular values: |v − v_ref| ≤ 1e-8.
func TestTopRightSingular(t *testing.T) {
	for _, s := range []struct{ n, d, k int }{{1, 1, 1}, {5, 3, 3}, {3, 5, 2}, {200, 12, 4}} {
		rng := rand.New(rand.NewPCG(uint64(s.n), uint64(s.d)))
		x := make([]float64, s.n*s.d)
		for i := range x {
			x[i] = rng.NormFloat64() * float64(1+i%s.d) // distinct column scales
		}
		got := TopRightSingular(x, s.n, s.d, s.k)
		g := make([]float64, s.d*s.d)
		for i := 0; i < s.d; i++ {
			for j := 0; j < s.d; j++ {
				for r := 0; r < s.n; r++ {
					g[i*s.d+j] += x[r*s.d+i] * x[r*s.d+j]
				}
			}
		}
		_, vecs := EigSym(g, s.d)
		for i := 0; i < s.k*s.d; i++ {
			if math.Abs(got[i]-vecs[i]) > 1e-8 {
				t.Errorf("n=%d d=%d k=%d: got %v, want %v", s.n, s.d, s.k, got, vecs[:s.k*s.d])
				break
			}
		}
	}
}

func TestEigPanics(t *testing.T) {
	cases := map[string]func(){
		"EigSym n=0":     func() { EigSym(nil, 0) },
		"EigSym len":     func() { EigSym(make([]float64, 3), 2) },
		"TopRight k>min": func() { TopRightSingular(make([]float64, 6), 2, 3, 3) },
		"TopRight len":   func() { TopRightSingular(make([]float64, 5), 2, 3, 1) },
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

// TestEigWorkMatchesEigenSym checks that the reused scratch gives the bits
// of gonum's mat.EigenSym, as LocalZCA's golden results require: random
// symmetric matrices of several sizes (each size's scratch reused, the
// lower triangle garbage, which must not be read), a covariance-like block
// and a matrix with repeated eigenvalues.
func TestEigWorkMatchesEigenSym(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	viaMat := func(a []float64, n int) (vals, vecs []float64) {
		var es mat.EigenSym
		if !es.Factorize(mat.NewSymDense(n, slices.Clone(a)), true) {
			t.Fatalf("n=%d: mat.EigenSym failed", n)
		}
		asc := es.Values(nil)
		var v mat.Dense
		es.VectorsTo(&v)
		vals, vecs = make([]float64, n), make([]float64, n*n)
		for k := range n {
			vals[k] = asc[n-1-k]
			row := vecs[k*n : (k+1)*n]
			mat.Col(row, n-1-k, &v)
			fixSign(row)
		}
		return vals, vecs
	}
	for _, n := range []int{1, 2, 3, 7, 31, 32, 33, 64} {
		e := newEigWork(n)
		vals, vecs := make([]float64, n), make([]float64, n*n)
		for trial := range 4 {
			a := randomSym(rng, n)
			switch trial {
			case 1: // a second-moment block: positive definite, correlated
				g := randomSym(rng, n)
				for i := range n {
					for j := range n {
						var s float64
						for k := range n {
							s += g[i*n+k] * g[j*n+k]
						}
						a[i*n+j] = s
					}
				}
			case 2: // repeated eigenvalues
				clear(a)
				for i := range n {
					a[i*n+i] = float64(1 + i%2)
				}
			}
			wantVals, wantVecs := viaMat(a, n)
			in := slices.Clone(a)
			for i := range n { // the lower triangle is never read
				for j := range i {
					in[i*n+j] = math.NaN()
				}
			}
			if !e.eigSym(vals, vecs, in) {
				t.Fatalf("n=%d trial %d: eigSym failed", n, trial)
			}
			for i := range vals {
				if math.Float64bits(vals[i]) != math.Float64bits(wantVals[i]) {
					t.Fatalf("n=%d trial %d: value %d %v, mat.EigenSym %v", n, trial, i, vals[i], wantVals[i])
				}
			}
			for i := range vecs {
				if math.Float64bits(vecs[i]) != math.Float64bits(wantVecs[i]) {
					t.Fatalf("n=%d trial %d: vector entry %d %v, mat.EigenSym %v", n, trial, i, vecs[i], wantVecs[i])
				}
			}
		}
	}
}
