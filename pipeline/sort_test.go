package pipeline

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"dspk/compare"
	"dspk/probe"
	"dspk/sim"
)

// sortSim simulates seconds of a recording with units units on the
// first sites sites of an NP1 probe (all 384 when sites is 0).
func sortSim(t *testing.T, seconds float64, units, sites int, seed uint64) *sim.Recording {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Units, cfg.Seed = seconds, units, seed
	if sites > 0 {
		cfg.Probe = np1Sites(sites)
		// Short recordings on few sites: rates high enough that groups
		// reach the clustering's 1000 spikes.
		cfg.RateMin, cfg.RateMax = 20, 40
	}
	r, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// scoreSort scores a sort against the truth of rec.
func scoreSort(t *testing.T, rec *sim.Recording, res *SortResult) *compare.UnitReport {
	t.Helper()
	truth := rec.Truth()
	s := res.Curated.Spikes
	rep, err := compare.MatchUnits(compare.Sorting{Times: truth.SpikeTimes, Labels: truth.SpikeClusters},
		compare.Sorting{Times: s.Time, Labels: s.Cluster}, compare.DefaultUnitOptions(rec.SampleRate()))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestSortUnits sorts a 20-s recording of 20 units on 64 NP1 sites and
// scores the units against the truth: 19 of 20 are well detected
// (accuracy ≥ 0.8) on 2026-12-03; at least 16 must be. It also checks
// the stages ran in order with their counts and the arrays agree.
func TestSortUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("20-s sort: skipped in -short mode")
	}
	rec := sortSim(t, 20, 20, 64, 3)
	p, err := New(nil, rec, rec.Probe(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var stages []string
	opt := DefaultSortOptions()
	opt.Stage = func(s string) { stages = append(stages, s) }
	res, err := p.Sort(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Stages {
		t.Logf("%-22s %7.2f s  %d %s", s.Name, s.Seconds, s.Count, s.What)
	}
	checkSortResult(t, rec, res)
	if len(stages) != 3 {
		t.Errorf("announced stages %v", stages)
	}
	cr := res.Curated
	N := cr.Units.N
	rep := scoreSort(t, rec, res)
	t.Logf("%d detected, %d matched, %d units (%d before merges), well detected %d/%d, mean accuracy %.3f",
		res.Detected, res.Matched, N, res.Clusters1, rep.WellDetected, rep.NTruth, rep.MeanAccuracy)
	if rep.WellDetected < 16 {
		t.Errorf("well detected %d of 20 units, want at least 16 (19 measured)", rep.WellDetected)
	}
}

// TestSortSixteenChannels sorts 20 s of 6 units on a 16-site probe (the
// first 16 NP1 sites): all 6 well detected on 2026-12-03; at least 5 must
// be.
func TestSortSixteenChannels(t *testing.T) {
	rec := sortSim(t, 20, 6, 16, 3)
	p, err := New(nil, rec, rec.Probe(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	res, err := p.Sort(context.Background(), DefaultSortOptions())
	if err != nil {
		t.Fatal(err)
	}
	rep := scoreSort(t, rec, res)
	t.Logf("%d units, well detected %d/%d", res.Curated.Units.N, rep.WellDetected, rep.NTruth)
	if rep.WellDetected < 5 {
		t.Errorf("well detected %d of 6 units, want at least 5", rep.WellDetected)
	}
}

// TestSortTooFewSpikes checks the error of a recording with too few
// spikes to cluster: it says how many were found and how many are needed.
func TestSortTooFewSpikes(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Units, cfg.Seed, cfg.Probe = 2, 6, 4, np1Sites(32)
	cfg.RateMin, cfg.RateMax = 20, 40
	rec, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.BatchSize = 20000
	c.NSkip = 1
	c.ThUniversal = 60 // templates are learned, few spikes are detected
	p, err := New(nil, rec, rec.Probe(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Sort(context.Background(), DefaultSortOptions())
	if err == nil || !strings.Contains(err.Error(), "needs at least 100") {
		t.Fatalf("error %v, want one saying a sort needs at least 100 spikes", err)
	}
	t.Log(err)
}

// TestTransposePC checks the [n][P][C] → [n][C][P] layout change.
func TestTransposePC(t *testing.T) {
	n, P, C := 2, 3, 5
	u := make([]float32, n*P*C)
	for i := range u {
		u[i] = float32(i)
	}
	v := transposePC(u, n, P, C)
	for k := range n {
		for p := range P {
			for c := range C {
				if v[(k*C+c)*P+p] != u[(k*P+p)*C+c] {
					t.Fatalf("k=%d p=%d c=%d", k, p, c)
				}
			}
		}
	}
}

// TestSortExperiment is an experiment, skipped unless DSPK_SORTEXP is
// set: DSPK_SORTEXP=seconds,units,sites[,nblocks] (or 1 for 20 s, 20
// units, 64 sites, nblocks 0) sorts such a simulation of seed 3
// (DSPK_TEST_SEED overrides it) and logs the stages' times and the
// scores against the truth. Whatever the settings it checks what
// TestSortUnits checks of the output (stage order, array sizes, spike
// times sorted and within the recording), that every true unit was
// scored, and that the sort recovered at least one unit well.
func TestSortExperiment(t *testing.T) {
	env := os.Getenv("DSPK_SORTEXP")
	if env == "" {
		t.Skip("an experiment: DSPK_SORTEXP=seconds,units,sites[,nblocks] sorts such a simulation and logs its scores")
	}
	secs, units, sites, nb := 20.0, 20, 64, 0
	if env != "1" {
		f := strings.Split(env, ",")
		var err error
		if len(f) < 3 || len(f) > 4 {
			t.Fatalf("DSPK_SORTEXP=%q: want seconds,units,sites[,nblocks] or 1", env)
		}
		secs, err = strconv.ParseFloat(f[0], 64)
		for i, v := range []*int{&units, &sites, &nb}[:len(f)-1] {
			if err == nil {
				*v, err = strconv.Atoi(f[i+1])
			}
		}
		if err != nil {
			t.Fatalf("DSPK_SORTEXP=%q: %v", env, err)
		}
		if !(secs > 0) || units < 1 || sites < 0 || nb < 0 {
			t.Fatalf("DSPK_SORTEXP=%q: want seconds > 0, units ≥ 1, sites ≥ 0 (0: all 384), nblocks ≥ 0", env)
		}
	}
	seed := uint64(3)
	if v := os.Getenv("DSPK_TEST_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 0, 64); err != nil {
			t.Fatalf("DSPK_TEST_SEED=%q: %v", v, err)
		}
	}
	t.Logf("%g s, %d units, %d sites, nblocks %d, seed %d", secs, units, sites, nb, seed)
	rec := sortSim(t, secs, units, sites, seed)
	cfg := DefaultConfig()
	cfg.NBlocks = nb
	p, err := New(nil, rec, rec.Probe(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	t0 := time.Now()
	res, err := p.Sort(context.Background(), DefaultSortOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v", time.Since(t0))
	for _, s := range res.Stages {
		t.Logf("%-22s %7.2f s  %d %s", s.Name, s.Seconds, s.Count, s.What)
	}
	checkSortResult(t, rec, res)
	rep := scoreSort(t, rec, res)
	t.Logf("units %d, well detected %d/%d, mean accuracy %.3f, outside %d",
		res.Curated.Units.N, rep.WellDetected, rep.NTruth, rep.MeanAccuracy, res.Outside)
	if rep.NTruth != units {
		t.Errorf("%d true units scored, want %d", rep.NTruth, units)
	}
	if rep.WellDetected < 1 {
		t.Errorf("no unit of %d well detected", rep.NTruth)
	}
}

// checkSortResult checks what any sort's result must satisfy: the stages
// in order (with motion's two when it corrected) with times ≥ 0 that the summary repeats, the curated arrays'
// sizes agreeing with the spike and unit counts (templates dense over the
// probe's sites, 61 samples), and the spike times sorted and within the
// recording.
func checkSortResult(t *testing.T, rec *sim.Recording, res *SortResult) {
	t.Helper()
	want := []string{"whitening", "templates", "detection", "clustering spikes", "learned templates", "matching",
		"clustering templates", "curation"}
	if res.Correction != "" {
		want = slices.Insert(want, 2, "motion", "templates corrected")
	}
	if len(res.Stages) != len(want) {
		t.Fatalf("%d stages, want %d", len(res.Stages), len(want))
	}
	for i, s := range res.Stages {
		if s.Name != want[i] || !(s.Seconds >= 0) || res.Summary.PassSeconds[s.Name] != s.Seconds {
			t.Errorf("stage %d: %+v, want %s", i, s, want[i])
		}
	}
	cr := res.Curated
	n, N, C := cr.Spikes.Len(), cr.Units.N, len(rec.Probe().X)
	if len(cr.Positions) != 2*n || len(cr.Amplitudes) != n || len(cr.PCFeatures) != n*cr.Spikes.NC*cr.Spikes.P ||
		len(cr.Good) != N || len(cr.Similar) != N*N || len(cr.Templates) != N*61*C {
		t.Fatalf("array sizes disagree: n=%d N=%d C=%d", n, N, C)
	}
	for i := 1; i < n; i++ {
		if cr.Spikes.Time[i] < cr.Spikes.Time[i-1] {
			t.Fatalf("spike %d before spike %d", i, i-1)
		}
	}
	if n > 0 && (cr.Spikes.Time[0] < 0 || cr.Spikes.Time[n-1] >= rec.Samples()) {
		t.Errorf("spike times %d…%d outside the recording of %d samples", cr.Spikes.Time[0], cr.Spikes.Time[n-1], rec.Samples())
	}
}

// np1Sites returns the first n sites of the NP1 layout in a file of n+1
// channels.
func np1Sites(n int) *probe.Probe {
	p := probe.NP1()
	p.Name = "np1-" + strconv.Itoa(n)
	p.X, p.Y, p.Shank, p.ChanMap = p.X[:n], p.Y[:n], p.Shank[:n], p.ChanMap[:n]
	p.NChanFile = n + 1
	return p
}
