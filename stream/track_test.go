package stream

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/kilosort"
	"dspk/match"
	"dspk/motion"
)

// trackModel is a 32-channel column of NP1's layout (two sites a row,
// rows 20 µm apart, staggered) with templates whose energy falls off as a
// Gaussian of 25 µm around their depths, the P coefficients of a channel
// a fixed vector; the feature channels of a template are the 10 nearest
// its depth.
func trackModel(depths []float64) (*Model, func(k int) []int32) {
	const C, P = 32, 3
	m := &Model{Dir: "test", X: make([]float64, C), Y: make([]float64, C), SigInterp: 20, BatchSize: 100, Rule: motion.CorrectionKilosort}
	for c := range C {
		m.X[c], m.Y[c] = []float64{43, 11, 59, 27}[c%4], float64(20*(c/2))
	}
	m.Templates = match.Templates{N: len(depths), C: C, P: P, U: make([]float32, len(depths)*C*P)}
	for k, y0 := range depths {
		for c := range C {
			g := math.Exp(-(m.Y[c] - y0) * (m.Y[c] - y0) / (2 * 25 * 25))
			for p := range P {
				m.Templates.U[(k*C+c)*P+p] = float32(g * float64(p+1))
			}
		}
	}
	chans := func(k int) []int32 {
		idx := make([]int32, C)
		for c := range idx {
			idx[c] = int32(c)
		}
		slices.SortStableFunc(idx, func(a, b int32) int {
			return int(math.Abs(m.Y[a]-depths[k]) - math.Abs(m.Y[b]-depths[k]))
		})
		return idx[:10]
	}
	return m, chans
}

// displaced returns template k's features on its channels as the
// correction's kriging displaces it by d µm (read at depth y − d), times
// amplitude a, plus unit noise.
func displaced(m *Model, k int, chans []int32, d, a float64, rng *rand.Rand) []float32 {
	tm := m.Templates
	est := &motion.Estimate{Windows: 1, Blocks: 1, Dshift: []float64{d}, Yblk: []float64{0}}
	kc, err := motion.NewCorrectorRule(nil, m.X, m.Y, motion.Params{Motion: kilosort.Motion{SigInterp: m.SigInterp}}, est, m.Rule)
	if err != nil {
		panic(err)
	}
	defer kc.Close()
	M := kc.Matrix(0)
	f := make([]float32, 0, len(chans)*tm.P)
	for _, c := range chans {
		for p := range tm.P {
			var v float64
			for j := range tm.C {
				v += float64(M[int(c)*tm.C+j]) * float64(tm.U[(k*tm.C+j)*tm.P+p])
			}
			f = append(f, float32(a*v+rng.NormFloat64()))
		}
	}
	return f
}

// TestTracker scores spikes displaced along the probe from their
// templates by the correction's own kriging: the residual is the
// displacement (within 0.5 µm, sub-grid ones included), needs
// trackMinSpikes spikes, and leaves out spikes under trackMinAmplitude.
func TestTracker(t *testing.T) {
	depths := []float64{100, 153, 207, 250}
	m, chans := trackModel(depths)
	tk, err := newTracker(m, chans)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	feed := func(d float64, n int, a float64) {
		for i := range n {
			k := i % len(depths)
			tk.add(int32(k), float32(a), displaced(m, k, chans(k), d, a, rng))
		}
	}
	for _, d := range []float64{0, 3.3, -5, 7} {
		feed(d, 80, 12)
		if r, ok := tk.residual(); !ok || math.Abs(r-d) > 0.5 {
			t.Errorf("displacement %v µm: residual %.2f µm (%v)", d, r, ok)
		}
	}
	feed(3, trackMinSpikes-1, 12)
	if _, ok := tk.residual(); ok {
		t.Errorf("a residual from %d spikes", trackMinSpikes-1)
	}
	feed(3, 100, trackMinAmplitude/2)
	if _, ok := tk.residual(); ok {
		t.Error("spikes under trackMinAmplitude were scored")
	}
	feed(3, 100, 12)
	tk.forget()
	if _, ok := tk.residual(); ok {
		t.Error("forget kept the scores")
	}
}

// TestTrackExtend extends a sort's estimate from the stream's residual:
// spikes displaced deeper than their templates (a positive residual) move
// the next window's shifts down by trackGain of it, every block alike; a
// window without enough spikes, or windows the stream skipped, hold the
// last shifts; the sort's estimate in the model is not changed.
func TestTrackExtend(t *testing.T) {
	m, chans := trackModel([]float64{100})
	m.Motion = &motion.Estimate{Windows: 2, Blocks: 2, Dshift: []float64{1, 2, 1, 3}, Yblk: []float64{50, 250}, Spikes: []int{5, 5}}
	tk, err := newTracker(m, chans)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := newMotionCorrection(m, tk)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.close()
	rng := rand.New(rand.NewPCG(5, 6))
	for range trackMinSpikes {
		tk.add(0, 12, displaced(m, 0, chans(0), 2, 12, rng))
	}
	mc.extend(2)
	mc.extend(4) // no residual: held
	g := 2 * trackGain
	want := []float64{1, 2, 1, 3, 1 - g, 3 - g, 1 - g, 3 - g, 1 - g, 3 - g}
	for i := range want {
		if math.Abs(mc.est.Dshift[i]-want[i]) > 0.3 {
			t.Fatalf("extended estimate %v (%d windows), want about %v", mc.est.Dshift, mc.est.Windows, want)
		}
	}
	if mc.est.Windows != 5 || len(m.Motion.Dshift) != 4 {
		t.Errorf("%d windows; the model's estimate has %d values", mc.est.Windows, len(m.Motion.Dshift))
	}
	if sh := mc.shifts(); len(sh) != 5 || sh[0] != 1.5 {
		t.Errorf("mean shifts %v", sh)
	}
}
