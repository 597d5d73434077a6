package motion

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFoldMatchesDense compares the folded operator's product with the
// float64 product M_w·(W·x) of the float32 matrices: within BandTol of
// Σ_j|(M·W)_cj|·max|x| plus float32 rounding; and checks the cache.
func TestFoldMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 8))
	for _, tc := range []struct {
		C, B, T int
		rule    Rule
	}{{1, 1, 3, CorrectionKilosort}, {40, 1, 17, CorrectionKilosort}, {96, 3, 11, CorrectionKilosort}, {71, 1, 9, CorrectionSmooth}} {
		x, y := testProbe(tc.C)
		W := noiseZCA(t, x, y)
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
		Wd := W.Dense()
		for w := range 2 {
			F := k.Fold(W, w)
			if k.Fold(W, w) != F {
				t.Error("Fold of the same window and whitening was recomputed")
			}
			F.Apply(dst, src, tc.T)
			M := k.Matrix(w)
			C := tc.C
			for c := range C {
				// Row c of M·W in float64.
				mw := make([]float64, C)
				for j := range C {
					for i := range C {
						mw[i] += float64(M[c*C+j]) * Wd[j*C+i]
					}
				}
				var l1 float64
				for _, v := range mw {
					l1 += math.Abs(v)
				}
				for tt := range tc.T {
					var want float64
					for i := range C {
						want += mw[i] * float64(src[i*tc.T+tt])
					}
					if d := math.Abs(float64(dst[c*tc.T+tt]) - want); !(d <= (BandTol+float64(C)*6e-8+1e-6)*l1*4) {
						t.Fatalf("C %d window %d: [%d, %d] = %v, dense %v", C, w, c, tt, dst[c*tc.T+tt], want)
					}
				}
			}
		}
	}
}

// TestFoldNP1 logs the width of the folded operator on NP1 (entries per
// row against the whitening's 32 and the band of M alone) and fails
// above 96 per row.
func TestFoldNP1(t *testing.T) {
	x, y := testProbe(384)
	W := noiseZCA(t, x, y)
	for _, sh := range []float64{0, 10, 20} {
		est := &Estimate{Windows: 1, Blocks: 1, Dshift: []float64{sh}, Yblk: []float64{1929}, Spikes: []int{1}}
		k, err := NewCorrector(nil, x, y, DefaultParams(), est)
		if err != nil {
			t.Fatal(err)
		}
		F := k.Fold(W, 0)
		t.Logf("shift %g µm: M·W keeps K = %d per row (whitening %d, M alone %d)", sh, F.K, W.K, k.band0K())
		if F.K > 96 {
			t.Errorf("shift %g: K = %d", sh, F.K)
		}
	}
}

// band0K returns the width of Apply's band of the current matrix.
func (k *Corrector) band0K() int {
	if k.band == nil {
		k.band = newBanded(k.m, len(k.x))
	}
	return k.band.K
}

// BenchmarkCorrectionFolded whitens and corrects an NP1 window in one
// sparse product (Fold, 10-µm shift): the cost that replaces the
// whitening's (K = 32) in a CPU pass. Floor: 2·384·K·60 122 FLOP, 185 MB.
func BenchmarkCorrectionFolded(b *testing.B) {
	x, y := testProbe(384)
	W := noiseZCA(b, x, y)
	est := &Estimate{Windows: 1, Blocks: 1, Dshift: []float64{10}, Yblk: []float64{1929}, Spikes: []int{1}}
	k, err := NewCorrector(nil, x, y, DefaultParams(), est)
	if err != nil {
		b.Fatal(err)
	}
	F := k.Fold(W, 0)
	b.Logf("K = %d", F.K)
	src := make([]float32, 384*benchT)
	for i := range src {
		src[i] = float32(i%97) - 48
	}
	dst := make([]float32, len(src))
	b.SetBytes(int64(8 * len(src)))
	for b.Loop() {
		F.Apply(dst, src, benchT)
	}
}

// BenchmarkWhiteningOnly is the whitening alone (K = 32) on the same
// window, for comparison.
func BenchmarkWhiteningOnly(b *testing.B) {
	x, y := testProbe(384)
	W := noiseZCA(b, x, y)
	src := make([]float32, 384*benchT)
	for i := range src {
		src[i] = float32(i%97) - 48
	}
	dst := make([]float32, len(src))
	b.SetBytes(int64(8 * len(src)))
	for b.Loop() {
		W.Apply(dst, src, benchT)
	}
}
