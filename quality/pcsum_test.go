package quality

import (
	"math"
	"math/rand/v2"
	"testing"

	"dspk/internal/testseed"

	"gonum.org/v1/gonum/mat"
)

// TestScatterQuadForms checks the PC metrics' sums against the direct
// double loops on random rows of odd sizes (more rows than quadForms'
// block, and fewer): the centred scatter's upper triangle, and the
// quadratic forms under a random symmetric matrix, NaN where negative.
func TestScatterQuadForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 51))
	for _, sz := range [][2]int{{1, 1}, {7, 3}, {1023, 13}, {2500, 29}, {3001, 60}} {
		n, d := sz[0], sz[1]
		rows := make([][]float64, n)
		for i := range rows {
			rows[i] = make([]float64, d)
			for j := range rows[i] {
				rows[i][j] = rng.NormFloat64()*3 + float64(j)
			}
		}
		m := make([]float64, d)
		for j := range m {
			m[j] = rng.NormFloat64()
		}
		acc := make([]float64, d*d)
		for i := range acc {
			acc[i] = math.NaN() // below the diagonal stays untouched
		}
		for a := range d {
			for b := a; b < d; b++ {
				acc[a*d+b] = 0
			}
		}
		scatter(acc, rows, m)
		for a := range d {
			for b := range d {
				if b < a {
					if !math.IsNaN(acc[a*d+b]) {
						t.Fatalf("n %d d %d: scatter wrote below the diagonal at (%d, %d)", n, d, a, b)
					}
					continue
				}
				want := 0.0
				for _, v := range rows {
					want += (v[a] - m[a]) * (v[b] - m[b])
				}
				if math.Abs(acc[a*d+b]-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Fatalf("n %d d %d: scatter (%d, %d) = %v, want %v", n, d, a, b, acc[a*d+b], want)
				}
			}
		}
		vi := mat.NewDense(d, d, nil)
		for a := range d {
			for b := a; b < d; b++ {
				v := rng.NormFloat64()
				if a == b {
					v += 0.5 // some forms positive, some negative
				}
				vi.Set(a, b, v)
				vi.Set(b, a, v)
			}
		}
		got := quadForms(rows, m, vi)
		for k, v := range rows {
			s := 0.0
			for a := range d {
				for b := range d {
					s += (v[a] - m[a]) * vi.At(a, b) * (v[b] - m[b])
				}
			}
			want := s
			if s < 0 {
				want = math.NaN()
			}
			g := got[k]
			if math.IsNaN(want) != math.IsNaN(g) || !math.IsNaN(want) && math.Abs(g-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Fatalf("n %d d %d row %d: form %v, want %v", n, d, k, g, want)
			}
		}
	}
}
