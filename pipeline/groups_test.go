package pipeline

import (
	"context"
	"math"
	"testing"

	"dspk/compare"
	"dspk/detect"
	"dspk/probe"
	"dspk/recording"
	"dspk/sim"
)

// stereotrodes returns 8 stereotrodes 250 µm apart: wires 20 µm apart at
// the same depth, one group (shank) each, in a 16-channel file.
func stereotrodes() *probe.Probe {
	p := &probe.Probe{Name: "8 stereotrodes", NChanFile: 16}
	for g := range 8 {
		for w := range 2 {
			p.ChanMap = append(p.ChanMap, 2*g+w)
			p.X = append(p.X, 250*float64(g)+20*float64(w))
			p.Y = append(p.Y, 0)
			p.Shank = append(p.Shank, g)
		}
	}
	return p
}

// groupRun detects the simulated recording with or without groups and
// returns the spikes' times and groups (the group of each spike's
// nearest channel).
func groupRun(t *testing.T, rec recording.Recording, pr *probe.Probe, groups bool) (times []int64, group []int) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NSkip = 1
	cfg.DoCAR = false // a median of two wires is one of them
	cfg.Groups = groups
	p, err := New(nil, rec, pr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, tm := passes12(t, p)
	_, err = p.Detect(ctx, w, tm, func(_ recording.Window, s *detect.Spikes) error {
		for i := range s.Len() {
			times = append(times, s.Sample[i])
			group = append(group, pr.Shank[s.Channels[i*s.NC]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return times, group
}

// TestGroupsStereotrodes checks -groups on a probe of separate groups
// against ground truth: spikes of different stereotrodes that coincide
// within Kilosort4's ±nt0min suppression window are all found with
// groups (recall ≥ 0.9 on every stereotrode), while Kilosort4's rule,
// whose 100 nearest centres span the whole array, keeps one of them.
func TestGroupsStereotrodes(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	pr := stereotrodes()
	cfg := sim.DefaultConfig()
	cfg.Seconds = 8
	cfg.Units = 16
	cfg.Probe = pr
	cfg.Seed = 2
	cfg.AmplitudeMin, cfg.AmplitudeMax = 12, 20
	cfg.RateMin, cfg.RateMax = 15, 25
	rec, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Truth()
	// Each unit's group: the shank of its nearest wire.
	unitGroup := make([]int, len(tr.UnitX))
	for u := range unitGroup {
		best := math.Inf(1)
		for i := range pr.Len() {
			if d := math.Hypot(tr.UnitX[u]-pr.X[i], tr.UnitY[u]-pr.Y[i]); d < best {
				best, unitGroup[u] = d, pr.Shank[i]
			}
		}
	}
	// Truth spikes that have another group's spike within ±20 samples.
	coincident := make([]bool, len(tr.SpikeTimes))
	for i, ti := range tr.SpikeTimes {
		for j := i + 1; j < len(tr.SpikeTimes) && tr.SpikeTimes[j]-ti <= 20; j++ {
			if unitGroup[tr.SpikeClusters[i]] != unitGroup[tr.SpikeClusters[j]] {
				coincident[i], coincident[j] = true, true
			}
		}
	}
	recall := func(times []int64, group []int) (perGroup [8]float64, coincFound int, nCoinc int) {
		opt := compare.DefaultOptions()
		opt.Bands = nil
		for g := range 8 {
			var truth, det compare.Spikes
			var idx []int
			for i, ti := range tr.SpikeTimes {
				if unitGroup[tr.SpikeClusters[i]] == g {
					truth.Times = append(truth.Times, ti)
					truth.Y = append(truth.Y, 0)
					idx = append(idx, i)
				}
			}
			for i, dt := range times {
				if group[i] == g {
					det.Times = append(det.Times, dt)
					det.Y = append(det.Y, 0)
				}
			}
			if len(truth.Times) == 0 {
				perGroup[g] = math.NaN()
				continue
			}
			r, err := compare.Match(truth, det, opt)
			if err != nil {
				t.Fatal(err)
			}
			perGroup[g] = r.Recall
			for k, m := range r.TruthMatch {
				if coincident[idx[k]] {
					nCoinc++
					if m >= 0 {
						coincFound++
					}
				}
			}
		}
		return
	}
	gt, gg := groupRun(t, rec, pr, true)
	kt, kg := groupRun(t, rec, pr, false)
	withG, coincG, nCoinc := recall(gt, gg)
	withK, coincK, _ := recall(kt, kg)
	t.Logf("%d true spikes, %d coincident across groups; -groups: %d detections, coincident found %d; Kilosort4's rule: %d, %d",
		len(tr.SpikeTimes), nCoinc, len(gt), coincG, len(kt), coincK)
	t.Logf("recall per group with -groups %.3f, without %.3f", withG, withK)
	if nCoinc < 100 {
		t.Fatalf("only %d coincident spikes: the fixture does not test suppression", nCoinc)
	}
	for g, r := range withG {
		if math.IsNaN(r) {
			t.Fatalf("group %d has no unit: the fixture does not test every group", g)
		}
		if r < 0.9 {
			t.Errorf("group %d: recall %.3f with -groups, want ≥ 0.9", g, r)
		}
	}
	if coincG < int(0.9*float64(nCoinc)) || coincK > coincG-nCoinc/10 {
		t.Errorf("coincident spikes found: %d of %d with -groups, %d without; want ≥ 90%% and clearly more than Kilosort4's rule", coincG, nCoinc, coincK)
	}
}
