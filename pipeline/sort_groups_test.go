package pipeline

import (
	"context"
	"testing"

	"dspk/compare"
	"dspk/probe"
	"dspk/sim"
)

// sortProbeSim sorts 20 s of units simulated on probe p (rates 20–40 Hz,
// seed) with configuration c and the default sort options, and scores the
// units against the truth.
func sortProbeSim(t *testing.T, p *probe.Probe, units int, seed uint64, c Config) (*SortResult, *compare.UnitReport) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Units, cfg.Seed, cfg.Probe = 20, units, seed, p
	cfg.RateMin, cfg.RateMax = 20, 40
	rec, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := New(nil, rec, rec.Probe(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	res, err := pl.Sort(context.Background(), DefaultSortOptions())
	if err != nil {
		t.Fatal(err)
	}
	rep := scoreSort(t, rec, res)
	t.Logf("%d units, well detected %d/%d", res.Curated.Units.N, rep.WellDetected, rep.NTruth)
	return res, rep
}

// TestSortTetrodes sorts 20 s of 8 units on four tetrodes 300 µm apart,
// each group on its own (Config.Groups, nearest_chans 4): all 8 well
// detected on 2026-12-03; at least 7 must be.
func TestSortTetrodes(t *testing.T) {
	p := &probe.Probe{Name: "tetrodes", NChanFile: 17}
	for g := range 4 {
		for i := range 4 {
			p.X = append(p.X, float64(300*g+20*(i%2)))
			p.Y = append(p.Y, float64(20*(i/2)))
			p.Shank = append(p.Shank, g)
			p.ChanMap = append(p.ChanMap, 4*g+i)
		}
	}
	c := DefaultConfig()
	c.Groups = true
	c.NearestChans, c.NearestTemplates = 4, 4
	_, rep := sortProbeSim(t, p, 8, 3, c)
	if rep.WellDetected < 7 {
		t.Errorf("well detected %d of 8 units, want at least 7", rep.WellDetected)
	}
}

// TestSortOneTetrodeDefaults sorts 20 s of 3 units on one tetrode with
// the default nearest_chans (10, more than its 4 sites: detection and
// matching take every site) and no motion correction (a tetrode is too
// short to estimate motion on): the sort runs and keeps at least 2.
func TestSortOneTetrodeDefaults(t *testing.T) {
	p := &probe.Probe{Name: "tetrode", NChanFile: 5}
	for i := range 4 {
		p.X = append(p.X, float64(20*(i%2)))
		p.Y = append(p.Y, float64(20*(i/2)))
		p.Shank = append(p.Shank, 0)
		p.ChanMap = append(p.ChanMap, i)
	}
	c := DefaultConfig()
	if c.NearestChans <= p.Len() {
		t.Fatalf("default nearest_chans %d: the test needs more than the tetrode's %d sites", c.NearestChans, p.Len())
	}
	c.NBlocks = 0
	_, rep := sortProbeSim(t, p, 3, 5, c)
	if rep.WellDetected < 2 {
		t.Errorf("well detected %d of 3 units, want at least 2", rep.WellDetected)
	}
}
