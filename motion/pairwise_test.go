package motion

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSolvePairsExact checks the least squares on consistent pairs: with
// D_ij = p_i − p_j for every pair and no temporal prior, the solve returns
// p up to the constant that sets its median to 0; with a tenth of the
// pairs replaced by wild displacements, the robust reweighting still
// returns p within 0.05 bins.
func TestSolvePairsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, nb := range []int{1, 2, 7, 60} {
		p := make([]float64, nb)
		for i := range p {
			p[i] = 8 * (rng.Float64() - 0.5)
		}
		var pairs []pairShift
		for i := range nb {
			for j := i + 1; j < nb; j++ {
				pairs = append(pairs, pairShift{i: i, j: j, d: p[i] - p[j], c: 0.5 + 0.5*rng.Float64()})
			}
		}
		pp := DefaultPairwiseParams()
		pp.Smoothness = 0
		check := func(name string, pairs []pairShift, tol float64) {
			got, err := solvePairs(context.Background(), pairs, nb, pp, nil, 0)
			if err != nil {
				t.Fatalf("nb %d %s: %v", nb, name, err)
			}
			off := got[0] - p[0]
			for i := range nb {
				if d := math.Abs(got[i] - p[i] - off); !(d <= tol) {
					t.Errorf("nb %d %s: window %d: got %.4f, want %.4f (+%.4f)", nb, name, i, got[i], p[i], off)
				}
			}
		}
		check("consistent", pairs, 1e-6)
		if nb >= 7 {
			bad := append([]pairShift(nil), pairs...)
			for k := range bad {
				if rng.IntN(10) == 0 {
					bad[k].d += 15 * (rng.Float64() - 0.5) * 2
				}
			}
			check("with outliers", bad, 0.05)
		}
	}
}

// TestRegisterPairwiseShift checks the pair displacements on histograms
// that are shifted copies of one profile: every pair's displacement is the
// difference of the two shifts, in whole and half bins.
func TestRegisterPairwiseShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	const rows, nb = 97, 5
	base := make([]float64, (rows+40)*AmpBins)
	for i := range base {
		if rng.IntN(6) == 0 {
			base[i] = rng.Float64()
		}
	}
	shifts := []int{0, 3, -4, 7, 1}
	G := make([]float64, nb*rows*AmpBins)
	for w, s := range shifts {
		for r := range rows {
			for c := range AmpBins {
				G[(w*rows+r)*AmpBins+c] = base[(r-s+20)*AmpBins+c]
			}
		}
	}
	spikes := []int{1, 1, 1, 1, 1}
	pairs := blockPairs(context.Background(), G, spikes, rows, 0, rows, 12, 0, 0)
	if len(pairs) != nb*(nb-1)/2 {
		t.Fatalf("%d pairs, want %d", len(pairs), nb*(nb-1)/2)
	}
	for _, q := range pairs {
		want := float64(shifts[q.j] - shifts[q.i])
		if math.Abs(q.d-want) > 0.35 {
			t.Errorf("pair (%d, %d): displacement %.3f bins, want %v (correlation %.3f)", q.i, q.j, q.d, want, q.c)
		}
	}
}

// BenchmarkRegisterPairwise times the pairwise registration of a
// 10-minute NP1 recording's histograms: 300 windows of 770 depth bins
// (3 840 µm at 5 µm) × AmpBins, one rigid block, every pair within the
// default horizon of 150 windows.
func BenchmarkRegisterPairwise(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 8))
	const nb, rows = 300, 770
	G := make([]float64, nb*rows*AmpBins)
	for i := range G {
		if rng.IntN(8) == 0 {
			G[i] = rng.Float64()
		}
	}
	spikes := make([]int, nb)
	for i := range spikes {
		spikes[i] = 1000
	}
	g := &geometry{dy: 5, rows: rows, l: rows, starts: []int{0}, yblk: []float64{1920}}
	pp := DefaultPairwiseParams()
	for b.Loop() {
		if _, err := registerPairwise(context.Background(), G, spikes, g, pp); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSolvePairsStep checks that the default temporal prior leaves a
// sudden step of the probe where it is: 100 windows, a 4-bin (20-µm) step
// between windows 49 and 50, every pair within the horizon with noisy
// displacements and correlations about 0.5, as the pairs of a real
// recording. The windows next to the step must be within 0.2 bins (1 µm)
// of their side; a prior of half a window's weight (0.5) moved them by
// about 1 bin.
func TestSolvePairsStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	const nb = 100
	p := make([]float64, nb)
	for i := 50; i < nb; i++ {
		p[i] = 4
	}
	var pairs []pairShift
	for i := range nb {
		for j := i + 1; j < nb; j++ {
			pairs = append(pairs, pairShift{i: i, j: j, d: p[i] - p[j] + 0.1*rng.NormFloat64(), c: 0.5 + 0.1*rng.NormFloat64()})
		}
	}
	got, err := solvePairs(context.Background(), pairs, nb, DefaultPairwiseParams(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	off := got[0] - p[0]
	for i := 46; i < 54; i++ {
		if d := math.Abs(got[i] - off - p[i]); !(d <= 0.2) {
			t.Errorf("window %d: %.3f bins, want %v (±0.2)", i, got[i]-off, p[i])
		}
	}
}

// TestRegisterPairwiseBiasedStep checks the coarse pass: 40 windows whose
// histograms are sharp peaks, the last 20 the first 20's moved by 4 bins
// (20 µm) with each peak off by 1–3 more or fewer bins and half of them
// one amplitude column up, as the position bias and the sites do to units
// 20 µm away on NP1: at any one shift at most a twelfth of the peaks line
// up. With the coarse pass the step is found within one bin, in six such
// recordings; without it, the sharp pairs across the step give 1.4–6.4
// bins on most of them (logged, not checked: a chance alignment can be
// right).
func TestRegisterPairwiseBiasedStep(t *testing.T) {
	for _, seed := range [][2]uint64{{1, 1}, {2, 5}, {9, 9}, {11, 4}, {7, 2}, {3, 3}} {
		rng := rand.New(rand.NewPCG(seed[0], seed[1]))
		const rows, nb, peaks = 200, 40, 36
		type peak struct{ r, c, jit, dc int }
		ps := make([]peak, peaks)
		jits := []int{1, -1, 2, -2, 3, -3}
		for i := range ps {
			ps[i] = peak{r: 20 + rng.IntN(rows-40), c: rng.IntN(AmpBins - 1), jit: jits[i%6], dc: (i / 6) % 2}
		}
		G := make([]float64, nb*rows*AmpBins)
		spikes := make([]int, nb)
		for w := range nb {
			spikes[w] = 100
			for _, q := range ps {
				r, c := q.r, q.c
				if w >= nb/2 {
					r, c = r+4+q.jit, c+q.dc
				}
				G[(w*rows+r)*AmpBins+c] += 3 + 0.3*rng.NormFloat64()
			}
			for i := range rows * AmpBins {
				G[w*rows*AmpBins+i] += 0.05 * rng.NormFloat64()
			}
		}
		g := &geometry{dy: 5, rows: rows, l: rows, starts: []int{0}, yblk: []float64{500}}
		step := func(pp PairwiseParams) float64 {
			d, err := registerPairwise(context.Background(), G, spikes, g, pp)
			if err != nil {
				t.Fatal(err)
			}
			var a, b float64
			for w := range nb / 2 {
				a += d[w]
				b += d[nb/2+w]
			}
			return (a - b) / float64(nb/2) / g.dy
		}
		pp := DefaultPairwiseParams()
		if s := step(pp); !(math.Abs(math.Abs(s)-4) <= 1) {
			t.Errorf("seed %v: with the coarse pass: step of %.2f bins, want ±4 (±1)", seed, s)
		}
		pp.CoarseSigmaUM = 0
		t.Logf("seed %v: without the coarse pass: step of %.2f bins", seed, step(pp))
	}
}

// TestRegisterPairwiseStops checks that the registration of a 10-minute
// recording's windows ends with the context's cause when the context is
// cancelled before it or while it registers the pairs.
func TestRegisterPairwiseStops(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 3))
	const nb, rows = 300, 400
	G := make([]float64, nb*rows*AmpBins)
	for i := range G {
		if rng.IntN(8) == 0 {
			G[i] = rng.Float64()
		}
	}
	spikes := make([]int, nb)
	for i := range spikes {
		spikes[i] = 1000
	}
	g := &geometry{dy: 5, rows: rows, l: rows, starts: []int{0}, yblk: []float64{1000}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := registerPairwise(ctx, G, spikes, g, DefaultPairwiseParams()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: error %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := registerPairwise(ctx, G, spikes, g, DefaultPairwiseParams()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during: error %v, want context.Canceled", err)
	}
}
