package motion

import (
	"math"
	"math/rand/v2"
	"testing"
)

// scoreCase is one call of a scorer: nb windows of rows depth bins,
// blocks of l rows at starts, shifts ±smax; ties draws G and R from sparse
// count histograms, whose few distinct values make exactly tied scores
// (in exact arithmetic) common, so a difference in summation order would
// show.
type scoreCase struct {
	nb, rows, l, smax int
	starts            []int
	ties              bool
}

// scoreCases are odd sizes: one cell row (20 cells, fewer than the 256
// lanes), blocks whose cell count is and is not a multiple of 256, rigid
// NP1 (766 rows), cumulative shifts beyond ±rows.
var scoreCases = []scoreCase{
	{1, 1, 1, 15, []int{0}, false}, {1, 13, 13, 15, []int{0}, false}, {2, 46, 46, 15, []int{0}, true},
	{1, 67, 22, 5, []int{0, 11, 22, 34, 45}, false}, {3, 64, 64, 15, []int{0}, true},
	{1, 766, 766, 15, []int{0}, true}, {2, 766, 153, 5, []int{0, 77, 153, 230, 306, 383, 460, 536, 613}, true},
}

// randomScoreInput returns G [nb][rows][AmpBins], R [rows][AmpBins] and
// cumulative shifts S for tc.
func randomScoreInput(rng *rand.Rand, tc scoreCase) (G, R []float64, S []int32) {
	cells := tc.rows * AmpBins
	if tc.ties {
		counts := make([]uint32, (tc.nb+1)*cells)
		for i := range counts {
			if rng.IntN(5) == 0 {
				counts[i] = uint32(rng.IntN(3))
			}
		}
		all := histograms(counts, tc.nb+1, tc.rows)
		G, R = all[:tc.nb*cells], all[tc.nb*cells:]
	} else {
		G = make([]float64, tc.nb*cells)
		R = make([]float64, cells)
		for i := range G {
			G[i] = rng.NormFloat64()
		}
		for i := range R {
			R[i] = rng.NormFloat64()
		}
	}
	S = make([]int32, tc.nb)
	for i := range S {
		S[i] = int32(rng.IntN(2*tc.rows+301) - tc.rows - 150)
	}
	return G, R, S
}

// TestScoresMatchReference checks the CPU scorer bit for bit against
// refScore on physically rolled arrays (the fixed order of scoreLanes
// spelled out), and that it repeats itself bit for bit.
func TestScoresMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 23))
	for _, tc := range scoreCases {
		G, R, S := randomScoreInput(rng, tc)
		ns := 2*tc.smax + 1
		got := make([]float64, len(tc.starts)*ns*tc.nb)
		cpuScorer{G: G, nb: tc.nb, rows: tc.rows}.scores(got, tc.starts, tc.l, tc.smax, S, R)
		again := make([]float64, len(got))
		cpuScorer{G: G, nb: tc.nb, rows: tc.rows}.scores(again, tc.starts, tc.l, tc.smax, S, R)
		cells := tc.rows * AmpBins
		rr := make([][20]float64, tc.rows)
		for r := range rr {
			copy(rr[r][:], R[r*AmpBins:])
		}
		for w := range tc.nb {
			// G[w] rolled by S[w] over all rows: content moves to higher rows.
			h := make([][20]float64, tc.rows)
			for r := range h {
				copy(h[mod(r+int(S[w]), tc.rows)][:], G[w*cells+r*AmpBins:])
			}
			for j, b := range tc.starts {
				for si := range ns {
					blk := make([][20]float64, tc.l)
					for r := range blk {
						blk[mod(r+si-tc.smax, tc.l)] = h[b+r]
					}
					want := refScore(blk, rr[b:b+tc.l])
					i := (j*ns+si)*tc.nb + w
					if math.Float64bits(got[i]) != math.Float64bits(want) {
						t.Fatalf("case %+v: window %d block %d shift %d: %v, reference %v", tc, w, j, si-tc.smax, got[i], want)
					}
					if math.Float64bits(again[i]) != math.Float64bits(got[i]) {
						t.Fatalf("case %+v: score %d: %v then %v", tc, i, got[i], again[i])
					}
				}
			}
		}
	}
}

// TestScoreOrderMatters checks that the bitwise comparisons above can
// fail: on random inputs, a plain sequential sum of the products differs
// in some bit from the fixed order for some score.
func TestScoreOrderMatters(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 23))
	tc := scoreCase{2, 766, 766, 15, []int{0}, false}
	G, R, S := randomScoreInput(rng, tc)
	ns := 2*tc.smax + 1
	got := make([]float64, ns*tc.nb)
	cpuScorer{G: G, nb: tc.nb, rows: tc.rows}.scores(got, tc.starts, tc.l, tc.smax, S, R)
	differ := 0
	for w := range tc.nb {
		for si := range ns {
			var sum float64
			for r := range tc.rows {
				src := mod(mod(r-(si-tc.smax), tc.l)-int(S[w]), tc.rows) * AmpBins
				for k := range AmpBins {
					sum += float64(G[w*tc.rows*AmpBins+src+k] * R[r*AmpBins+k])
				}
			}
			if sum/float64(tc.rows*AmpBins) != got[si*tc.nb+w] {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Error("the sequential sum equals the fixed order everywhere: the bitwise tests could not tell orders apart")
	}
	t.Logf("%d of %d scores differ between the orders", differ, ns*tc.nb)
}
