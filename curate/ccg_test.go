package curate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refCCG is the brute-force correlogram: every pair (i, j) with t1[i] in
// (t2[j] − 0.5, t2[j] + 0.5], binned at round-half-even((t2 − t1)/0.001).
func refCCG(t1, t2 []float64) []int64 {
	K := make([]int64, 1001)
	for _, b := range t2 {
		for _, a := range t1 {
			if a > b-0.5 && a <= b+0.5 {
				K[int(math.RoundToEven((b-a)/0.001))+500]++
			}
		}
	}
	return K
}

// refMetrics computes Kilosort4's statistics from K as the description
// states them, with index sets written out as K positions.
func refMetrics(K []int64, n1, n2 int, T float64) (r12, q12, r00, r01, q00 float64) {
	k := make([]float64, len(K))
	for i, v := range K {
		k[i] = float64(v)
	}
	var far, left, right float64
	for i := 1; i < 250; i++ {
		far += k[i]
	}
	for i := 750; i < 1000; i++ {
		far += k[i]
	}
	for i := 450; i < 490; i++ {
		left += k[i]
	}
	for i := 510; i < 550; i++ {
		right += k[i]
	}
	E := float64(n1*n2) * 0.001 / T
	r00 = far / 499 / E
	r01 = math.Max(left, right) / 40 / E
	q00 = math.Max(far/499, math.Max(left/40, right/40))
	k[500] = 0
	r12, q12 = math.Inf(1), math.Inf(1)
	for i := 1; i <= 10; i++ {
		var s float64
		for b := 500 - i; b <= 500+i; b++ {
			s += k[b]
		}
		n := s / 2
		r12 = math.Min(r12, 2*n/(2*float64(i)*E))
		q12 = math.Min(q12, 0.5*(1+math.Erf((n-float64(i)*q00)/math.Sqrt(2*float64(i)*q00+1e-10))))
	}
	r12 /= 1e-10 + math.Max(r00, r01)
	return
}

// randomTrain returns n sorted times in seconds on a 30-kHz grid over
// [0, dur) with some equal times and some lags of exactly 15 samples
// (0.5 ms, a round-half-even tie).
func randomTrain(rng *rand.Rand, n int, dur float64) []float64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = rng.Int64N(int64(dur * 30000))
		if i > 0 && rng.IntN(5) == 0 {
			s[i] = s[i-1] + []int64{0, 15, 45, 15000}[rng.IntN(4)]
		}
	}
	slices.Sort(s)
	return Seconds(s, 30000)
}

func TestCCGMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n1, n2 := rng.IntN(40), rng.IntN(40)
		if trial < 4 {
			n1, n2 = trial%2, trial/2 // empty and single-spike trains
		}
		dur := []float64{0.01, 0.7, 3}[trial%3]
		t1, t2 := randomTrain(rng, n1, dur), randomTrain(rng, n2, dur)
		if trial%7 == 0 {
			t2 = t1 // autocorrelogram, i = j counted
		}
		got, want := CCG(nil, t1, t2), refCCG(t1, t2)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n1=%d n2=%d): correlograms differ", trial, n1, n2)
		}
		// Unsorted input gives the same counts.
		sh := slices.Clone(t1)
		rng.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
		if !slices.Equal(CCG(nil, sh, t2), want) {
			t.Fatalf("trial %d: shuffled train changes the correlogram", trial)
		}
	}
}

func TestCCGHalfBinTies(t *testing.T) {
	// Bins are round-half-even((t2 − t1)/0.001) on float64 seconds, in
	// that order, so whether a 15-sample lag (0.5 ms) is a tie depends on
	// the rounding of the seconds: from sample 0 it is exactly 0.5 (bin 0),
	// from sample 1000 it is 0.5000000000000004 (bin 1; Python computes
	// the same float64 values).
	for _, c := range []struct {
		t1, t2 int64
		bin    int
	}{{0, 15, 0}, {15, 0, 0}, {1000, 1015, 1}, {1015, 1000, -1}, {1000, 1075, 3}, {0, 30, 1}, {0, 45, 2}} {
		K := CCG(nil, Seconds([]int64{c.t1}, 30000), Seconds([]int64{c.t2}, 30000))
		if K[c.bin+CCGBins] != 1 {
			t.Errorf("samples %d → %d: want bin %d, got %v", c.t1, c.t2, c.bin, nonzero(K))
		}
	}
}

func nonzero(K []int64) map[int]int64 {
	m := map[int]int64{}
	for i, v := range K {
		if v != 0 {
			m[i-CCGBins] = v
		}
	}
	return m
}

func TestMetricsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 100 {
		n1, n2 := 1+rng.IntN(300), 1+rng.IntN(300)
		t1, t2 := randomTrain(rng, n1, 5), randomTrain(rng, n2, 5)
		K := CCG(nil, t1, t2)
		T := max(t1[n1-1], t2[n2-1]) - min(t1[0], t2[0])
		if T == 0 {
			continue
		}
		m := MetricsOf(K, n1, n2, T)
		r12, q12, r00, r01, q00 := refMetrics(K, n1, n2, T)
		for _, c := range [][2]float64{{m.R12, r12}, {m.Q12, q12}, {m.R00, r00}, {m.R01, r01}, {m.Q00, q00}} {
			if math.Abs(c[0]-c[1]) > 1e-12*math.Max(1, math.Abs(c[1])) {
				t.Fatalf("trial %d: %+v, want R12 %g Q12 %g R00 %g R01 %g Q00 %g", trial, m, r12, q12, r00, r01, q00)
			}
		}
		if pm := PairMetrics(t1, t2); pm != m {
			t.Fatalf("trial %d: PairMetrics %+v, MetricsOf %+v", trial, pm, m)
		}
	}
}

func TestMetricsSpanZero(t *testing.T) {
	// Kilosort4 raises ZeroDivisionError here; dspk reports invalid
	// metrics that pass no test.
	tr := Seconds([]int64{500, 500, 500}, 30000)
	for _, m := range []Metrics{PairMetrics(tr, tr), PairMetrics(nil, tr), PairMetrics(tr, nil)} {
		if m.Valid || m.Refractory(0.2) || m.CrossRefractory(0.25) || math.IsNaN(m.R12) {
			t.Fatalf("span 0: %+v", m)
		}
	}
}

// refractoryTrain returns sorted spike samples of a renewal process with
// rate hz over dur seconds and a dead time of dead samples.
func refractoryTrain(rng *rand.Rand, hz, dur float64, dead int64) []int64 {
	var s []int64
	t := int64(0)
	for {
		t += dead + int64(rng.ExpFloat64()/hz*30000)
		if t >= int64(dur*30000) {
			return s
		}
		s = append(s, t)
	}
}

func TestRefractClassifies(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var times []int64
	var labels []int32
	add := func(s []int64, l int32) {
		for _, v := range s {
			times = append(times, v)
			labels = append(labels, l)
		}
	}
	add(refractoryTrain(rng, 20, 300, 90), 0) // 3-ms dead time: good
	add(refractoryTrain(rng, 20, 300, 0), 1)  // Poisson: mua
	add([]int64{10, 500, 900}, 2)             // ≤ 10 spikes
	add(make([]int64, 12), 4)                 // 12 spikes at one time: span 0
	good, contam := Refract(labels, Seconds(times, 30000), DefaultParams())
	if len(good) != 5 {
		t.Fatalf("%d labels", len(good))
	}
	if !good[0] || contam[0] > 0.05 {
		t.Errorf("refractory train: good %v contam %g", good[0], contam[0])
	}
	if good[1] || contam[1] < 0.5 {
		t.Errorf("Poisson train: good %v contam %g", good[1], contam[1])
	}
	for _, k := range []int{2, 3, 4} {
		if good[k] || contam[k] != 0 {
			t.Errorf("label %d: good %v contam %g, want false, 0", k, good[k], contam[k])
		}
	}
	// The contamination equals the metrics of the cluster's own ACG.
	var tr []float64
	for i, l := range labels {
		if l == 1 {
			tr = append(tr, float64(times[i])/30000)
		}
	}
	if m := PairMetrics(tr, tr); m.R12 != contam[1] {
		t.Errorf("contam %g, ACG R12 %g", contam[1], m.R12)
	}
}

// TestCrossRefractoryNeedsOverlap pins two properties of Kilosort4's
// merge test that decide whether split units can be joined: halves of a
// refractory (2-ms dead time) neuron split at random pass it only at
// rates of several Hz over 10 minutes, and halves split in time (the
// neuron drifted from one cluster to the other) do not pass it, since
// their correlogram is nearly empty (counts only near the hand-over), so
// Q12 stays far above 0.05.
func TestCrossRefractoryNeedsOverlap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	split := func(hz float64, byTime bool) Metrics {
		var a, b []int64
		for _, s := range refractoryTrain(rng, hz, 600, 60) {
			if (byTime && s < 300*30000) || (!byTime && rng.IntN(2) == 0) {
				a = append(a, s)
			} else {
				b = append(b, s)
			}
		}
		return PairMetrics(Seconds(a, 30000), Seconds(b, 30000))
	}
	if m := split(10, false); !m.CrossRefractory(0.25) {
		t.Errorf("10-Hz neuron split at random: %+v, want cross-refractory", m)
	}
	if m := split(0.5, false); m.CrossRefractory(0.25) {
		t.Errorf("0.5-Hz neuron split at random: %+v, want too few spikes to tell", m)
	}
	if m := split(10, true); m.CrossRefractory(0.25) || m.Q12 < 0.3 {
		t.Errorf("10-Hz neuron split in time: %+v, want Q12 ≥ 0.3", m)
	}
}

func TestParamsValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	nan := math.NaN()
	for name, edit := range map[string]func(p *Params){
		"fs 0":             func(p *Params) { p.FS = 0 },
		"acg NaN":          func(p *Params) { p.ACGThreshold = nan },
		"ccg negative":     func(p *Params) { p.CCGThreshold = -0.1 },
		"r_thresh 1.5":     func(p *Params) { p.RThresh = 1.5 },
		"same-waveform 2":  func(p *Params) { p.SameWaveform = 2 },
		"same-waveform -1": func(p *Params) { p.SameWaveform = -1 },
		"duplicate Inf":    func(p *Params) { p.DuplicateSpikeMs = math.Inf(1) },
		"position 0":       func(p *Params) { p.PositionLimit = 0 },
	} {
		p := DefaultParams()
		edit(&p)
		if err := p.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	p := DefaultParams()
	p.SameWaveform, p.DuplicateSpikeMs = 0, 0 // both turn a step off
	if err := p.Validate(); err != nil {
		t.Errorf("rules off refused: %v", err)
	}
}
