package motion

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomEstimate returns an estimate of nb windows and B blocks with
// random shifts within ±40 µm over the depths of yc.
func randomEstimate(rng *rand.Rand, nb, B int, yc []float64) *Estimate {
	est := &Estimate{Windows: nb, Blocks: B, Dshift: make([]float64, nb*B), Yblk: make([]float64, B), Spikes: make([]int, nb)}
	lo, hi := yc[0], yc[len(yc)-1]
	for j := range B {
		est.Yblk[j] = lo + (hi-lo)*(float64(j)+0.5)/float64(B)
	}
	for i := range est.Dshift {
		est.Dshift[i] = math.Round((rng.Float64()*80-40)*2) / 2
	}
	return est
}

// refShift is the per-channel shift of §3.4 written plainly.
func refShift(est *Estimate, w int, y float64) float64 {
	d := est.Dshift[w*est.Blocks : (w+1)*est.Blocks]
	if est.Blocks == 1 {
		return d[0]
	}
	yb := est.Yblk
	k := 0
	switch {
	case y <= yb[0]:
		k = 0
	case y >= yb[len(yb)-1]:
		k = len(yb) - 2
	default:
		for y > yb[k+1] {
			k++
		}
	}
	return d[k] + (d[k+1]-d[k])*(y-yb[k])/(yb[k+1]-yb[k])
}

// TestMatrixMatchesReference compares M_w with the float64 reference for
// odd channel counts, rigid and block shifts.
func TestMatrixMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 5))
	for _, tc := range []struct {
		C, B int
		rule Rule
	}{{1, 1, CorrectionKilosort}, {7, 1, CorrectionKilosort}, {33, 3, CorrectionKilosort}, {96, 5, CorrectionKilosort}, {61, 1, CorrectionKilosort},
		{1, 1, CorrectionSmooth}, {45, 3, CorrectionSmooth}, {64, 1, CorrectionSmooth}} {
		x, y := testProbe(tc.C)
		est := randomEstimate(rng, 3, tc.B, y)
		k, err := NewCorrectorRule(nil, x, y, DefaultParams(), est, tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		for w := range 3 {
			sh := make([]float64, tc.C)
			for c := range sh {
				sh[c] = refShift(est, w, y[c])
			}
			sigma, ridge, norm := 20.0, 0.01, false
			if tc.rule == CorrectionSmooth {
				sigma, ridge, norm = 40, 0.1, true
			}
			want := refMatrix(x, y, sh, sigma, ridge, norm)
			got := k.Matrix(w)
			for c := range tc.C {
				for j := range tc.C {
					if d := math.Abs(float64(got[c*tc.C+j]) - want[c][j]); d > 1e-6*(1+math.Abs(want[c][j])) {
						t.Fatalf("C %d B %d window %d: M[%d, %d] = %v, reference %v", tc.C, tc.B, w, c, j, got[c*tc.C+j], want[c][j])
					}
				}
			}
		}
	}
}

// TestApplyMatchesDense compares the banded CPU product with the dense
// float64 product of the float32 matrix: every sample within BandTol
// relative (plus float32 rounding) of Σ_j |M_cj|·max|x|.
func TestApplyMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 6))
	for _, tc := range []struct {
		C, B, T int
		rule    Rule
	}{{1, 1, 5, CorrectionKilosort}, {9, 1, 1, CorrectionKilosort}, {64, 3, 37, CorrectionKilosort}, {131, 1, 101, CorrectionKilosort}, {77, 3, 29, CorrectionSmooth}} {
		x, y := testProbe(tc.C)
		est := randomEstimate(rng, 2, tc.B, y)
		k, err := NewCorrectorRule(nil, x, y, DefaultParams(), est, tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		src := make([]float32, tc.C*tc.T)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		dst := make([]float32, len(src))
		for i := range dst {
			dst[i] = float32(math.NaN())
		}
		for w := range 2 {
			k.Apply(dst, src, w)
			M := k.Matrix(w)
			for c := range tc.C {
				var l1 float64
				for j := range tc.C {
					l1 += math.Abs(float64(M[c*tc.C+j]))
				}
				for tt := range tc.T {
					var want float64
					for j := range tc.C {
						want += float64(M[c*tc.C+j]) * float64(src[j*tc.T+tt])
					}
					got := float64(dst[c*tc.T+tt])
					if d := math.Abs(got - want); !(d <= (BandTol+1e-6)*l1*4) {
						t.Fatalf("C %d window %d: dst[%d, %d] = %v, dense %v (row L1 %v)", tc.C, w, c, tt, got, want, l1)
					}
				}
			}
		}
	}
}
