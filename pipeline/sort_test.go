package pipeline

import (
	"context"
	"os"
	"testing"
	"time"

	"dspk/compare"
	"dspk/sim"
)

// sortSim simulates seconds of an NP1 recording with units units.
func sortSim(t *testing.T, seconds float64, units int, seed uint64) *sim.Recording {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Units, cfg.Seed = seconds, units, seed
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

func TestSortExperiment(t *testing.T) {
	if os.Getenv("DSPK_SORTEXP") == "" {
		t.Skip("experiment")
	}
	rec := sortSim(t, 20, 40, 3)
	p, err := New(nil, rec, rec.Probe(), DefaultConfig())
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
	rep := scoreSort(t, rec, res)
	t.Logf("units %d, well detected %d/%d, outside %d", res.Curated.Units.N, rep.WellDetected, rep.NTruth, res.Outside)
}
