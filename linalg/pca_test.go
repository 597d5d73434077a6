package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"
)

// jacobiEig is a plain cyclic Jacobi eigensolver for the symmetric n×n
// row-major a (copied), the reference for PCABasis. It returns the
// eigenvalues descending and the eigenvectors as rows.
func jacobiEig(a []float64, n int) (vals []float64, vecs [][]float64) {
	m := slices.Clone(a)
	v := make([]float64, n*n)
	for i := range n {
		v[i*n+i] = 1
	}
	for sweep := 0; sweep < 100; sweep++ {
		var off float64
		for i := range n {
			for j := i + 1; j < n; j++ {
				off += m[i*n+j] * m[i*n+j]
			}
		}
		if off < 1e-30 {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				if math.Abs(m[p*n+q]) < 1e-300 {
					continue
				}
				theta := (m[q*n+q] - m[p*n+p]) / (2 * m[p*n+q])
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n { // columns p, q of m
					mkp, mkq := m[k*n+p], m[k*n+q]
					m[k*n+p] = c*mkp - s*mkq
					m[k*n+q] = s*mkp + c*mkq
				}
				for k := range n { // rows p, q of m
					mpk, mqk := m[p*n+k], m[q*n+k]
					m[p*n+k] = c*mpk - s*mqk
					m[q*n+k] = s*mpk + c*mqk
				}
				for k := range n {
					vkp, vkq := v[k*n+p], v[k*n+q]
					v[k*n+p] = c*vkp - s*vkq
					v[k*n+q] = s*vkp + c*vkq
				}
			}
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return m[idx[a]*n+idx[a]] > m[idx[b]*n+idx[b]] })
	for _, i := range idx {
		vals = append(vals, m[i*n+i])
		col := make([]float64, n)
		for k := range n {
			col[k] = v[k*n+i]
		}
		vecs = append(vecs, col)
	}
	return vals, vecs
}

func randClips(rng *rand.Rand, n, d int) []float32 {
	x := make([]float32, n*d)
	// A few strong directions plus noise, so the spectrum has gaps.
	dirs := make([][]float64, 3)
	for i := range dirs {
		dirs[i] = make([]float64, d)
		for j := range d {
			dirs[i][j] = rng.NormFloat64()
		}
	}
	for i := range n {
		for j := range d {
			v := 0.3 * rng.NormFloat64()
			for k, dir := range dirs {
				v += float64(3-k) * dir[j] * rng.NormFloat64()
			}
			x[i*d+j] = float32(v)
		}
	}
	return x
}

func TestPCABasis(t *testing.T) {
	t.Parallel()
	cases := []struct{ n, d, k int }{
		{1, 1, 1}, {1, 5, 1}, {3, 7, 3}, {50, 13, 13}, {4097, 61, 6}, {10000, 61, 6}, {2 * gramBlockRows, 9, 4},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dx%d_k%d", c.n, c.d, c.k), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.n), uint64(c.d)))
			x := randClips(rng, c.n, c.d)
			basis, sv2 := PCABasis(x, c.n, c.d, c.k)
			if len(basis) != c.k*c.d || len(sv2) != c.k {
				t.Fatalf("got %d basis values and %d singular values", len(basis), len(sv2))
			}
			// Reference: plain Gram matrix, Jacobi eigenvectors.
			g := make([]float64, c.d*c.d)
			for i := range c.n {
				for a := range c.d {
					for b := range c.d {
						g[a*c.d+b] += float64(x[i*c.d+a]) * float64(x[i*c.d+b])
					}
				}
			}
			vals, vecs := jacobiEig(g, c.d)
			scale := vals[0]
			for i := range c.k {
				if math.Abs(sv2[i]-vals[i]) > 1e-10*scale {
					t.Errorf("σ²[%d] = %.15g, reference %.15g", i, sv2[i], vals[i])
				}
				if i > 0 && sv2[i] > sv2[i-1] {
					t.Errorf("σ² not descending at %d: %g > %g", i, sv2[i], sv2[i-1])
				}
				row := basis[i*c.d : (i+1)*c.d]
				// Sign convention: largest-magnitude entry positive.
				big := 0
				for j := range row {
					if math.Abs(row[j]) > math.Abs(row[big]) {
						big = j
					}
				}
				if row[big] <= 0 {
					t.Errorf("vector %d: largest entry %d is %g, want positive", i, big, row[big])
				}
				// Against the reference vector up to sign, where the
				// eigenvalue is separated from its neighbours.
				gap := math.Inf(1)
				if i > 0 {
					gap = min(gap, vals[i-1]-vals[i])
				}
				if i+1 < c.d {
					gap = min(gap, vals[i]-vals[i+1])
				}
				if gap > 1e-6*scale {
					var dot float64
					for j := range row {
						dot += row[j] * vecs[i][j]
					}
					if math.Abs(math.Abs(dot)-1) > 1e-8 {
						t.Errorf("vector %d: |cos| to reference %.12f", i, math.Abs(dot))
					}
				}
				// Orthonormal rows.
				for j := 0; j <= i; j++ {
					var dot float64
					for m := range c.d {
						dot += row[m] * basis[j*c.d+m]
					}
					want := 0.0
					if i == j {
						want = 1
					}
					if math.Abs(dot-want) > 1e-12 {
						t.Errorf("basis rows %d·%d = %g, want %g", i, j, dot, want)
					}
				}
			}
		})
	}
}

func TestPCABasisDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	n, d := 3*gramBlockRows+17, 61
	x := randClips(rng, n, d)
	prev := runtime.GOMAXPROCS(1)
	b1, s1 := PCABasis(x, n, d, 6)
	runtime.GOMAXPROCS(max(prev, 3))
	b2, s2 := PCABasis(x, n, d, 6)
	runtime.GOMAXPROCS(prev)
	if !slices.Equal(b1, b2) || !slices.Equal(s1, s2) {
		t.Error("PCABasis differs between GOMAXPROCS 1 and 3")
	}
}

func TestPCABasisPanics(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		nx, n, d, k int
	}{
		{"length", 10, 3, 3, 1}, {"k0", 9, 3, 3, 0}, {"kbig", 9, 3, 3, 4}, {"d0", 0, 3, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Error("no panic")
				} else if s, ok := r.(string); !ok || s[:7] != "linalg:" {
					t.Errorf("panic %v not prefixed linalg:", r)
				}
			}()
			PCABasis(make([]float32, c.nx), c.n, c.d, c.k)
		})
	}
}

func BenchmarkPCABasis(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, d := 200000, 61
	x := randClips(rng, n, d)
	for b.Loop() {
		PCABasis(x, n, d, 6)
	}
	b.ReportMetric(float64(n)*float64(d*(d+1))/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
}

func TestPCABasisNaN(t *testing.T) {
	t.Parallel()
	x := randClips(rand.New(rand.NewPCG(1, 1)), 20, 5)
	x[7] = float32(math.NaN())
	b, s := PCABasis(x, 20, 5, 2)
	for _, v := range append(b, s...) {
		if !math.IsNaN(v) {
			t.Fatalf("PCABasis of data with a NaN returned %g, want all NaN", v)
		}
	}
}
