package pipeline

import (
	"context"
	"os"
	"strconv"
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

func TestSortExperiment(t *testing.T) {
	if os.Getenv("DSPK_SORTEXP") == "" {
		t.Skip("experiment")
	}
	rec := sortSim(t, 20, 20, 64, 3)
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

// np1Sites returns the first n sites of the NP1 layout in a file of n+1
// channels.
func np1Sites(n int) *probe.Probe {
	p := probe.NP1()
	p.Name = "np1-" + strconv.Itoa(n)
	p.X, p.Y, p.Shank, p.ChanMap = p.X[:n], p.Y[:n], p.Shank[:n], p.ChanMap[:n]
	p.NChanFile = n + 1
	return p
}
