package pipeline

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"dspk/curate"
	"dspk/detect"
	"dspk/match"
	"dspk/sim"
)

// gobBytes encodes v with gob: equal bytes mean equal values, every
// float bit (NaN included) and every slice element.
func gobBytes(t *testing.T, v any) []byte {
	t.Helper()
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return []byte("nil")
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// counts returns w without its times.
func counts(w detect.Stats) detect.Stats {
	w.ConvTime, w.EvalTime, w.SuppressTime = 0, 0, 0
	return w
}

// appendSpikes appends src's spikes to dst.
func appendSpikes(dst, src *match.Spikes) {
	dst.NC, dst.P = src.NC, src.P
	dst.Sample = append(dst.Sample, src.Sample...)
	dst.Template = append(dst.Template, src.Template...)
	dst.Amplitude = append(dst.Amplitude, src.Amplitude...)
	dst.Coef = append(dst.Coef, src.Coef...)
	dst.Features = append(dst.Features, src.Features...)
}

// TestSortSteps checks that a sort split into its steps — SortGlobal,
// MatchWindows over three window ranges, each in a pipeline of its own,
// and SortFinish of their spikes in a fourth — gives Sort's result, with
// and without motion correction: the ranges' spikes concatenated equal
// one MatchWindows over every window, and the curated result, templates,
// counts, groups and stage names equal Sort's. It also checks that
// MatchWindows refuses an empty or outside range and global results of
// another nblocks.
func TestSortSteps(t *testing.T) {
	scfg := sim.DefaultConfig()
	scfg.Seconds, scfg.Units, scfg.Seed, scfg.Probe = 10, 8, 5, np1Sites(32)
	scfg.RateMin, scfg.RateMax = 20, 40
	rec, err := sim.Generate(scfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opt := DefaultSortOptions()
	opt.Match.ThLearned = 7
	for _, nblocks := range []int{1, 0} {
		t.Run(fmt.Sprintf("nblocks%d", nblocks), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.NBlocks = nblocks
			cfg.Correction = CorrectionAuto
			newP := func() *Pipeline {
				p, err := New(nil, rec, rec.Probe(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { p.Close() })
				return p
			}
			whole, err := newP().Sort(ctx, opt)
			if err != nil {
				t.Fatal(err)
			}
			g, err := newP().SortGlobal(ctx, opt)
			if err != nil {
				t.Fatal(err)
			}
			if (g.Motion != nil) != (nblocks > 0) || g.Correction != whole.Correction {
				t.Fatalf("global motion %v, correction %q; Sort's %q", g.Motion != nil, g.Correction, whole.Correction)
			}
			windows := whole.Summary.Windows
			if windows < 4 {
				t.Fatalf("%d windows: too few for three shards", windows)
			}
			var shards match.Spikes
			for _, r := range [][2]int{{0, 1}, {1, windows - 1}, {windows - 1, windows}} {
				ms, err := newP().MatchWindows(ctx, g, opt, r[0], r[1])
				if err != nil {
					t.Fatal(err)
				}
				appendSpikes(&shards, ms)
			}
			all, err := newP().MatchWindows(ctx, g, opt, 0, windows)
			if err != nil {
				t.Fatal(err)
			}
			if all.Len() != whole.Matched || shards.Len() != all.Len() {
				t.Fatalf("%d spikes in the shards, %d in one pass, Sort matched %d", shards.Len(), all.Len(), whole.Matched)
			}
			if !bytes.Equal(gobBytes(t, &shards), gobBytes(t, all)) {
				t.Fatal("the shards' spikes differ from one pass's")
			}
			// The matcher's Coef is not kept between steps: the finish
			// must not need it.
			shards.Coef = nil
			res, err := newP().SortFinish(ctx, g, opt, &shards, 1.5)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gobBytes(t, res.Curated), gobBytes(t, whole.Curated)) {
				t.Error("the curated result differs from Sort's")
			}
			for _, c := range []struct {
				name string
				a, b any
			}{
				{"learned templates", res.Learned, whole.Learned},
				{"channels", res.Channels, whole.Channels},
				{"groups0", res.Groups0, whole.Groups0},
				{"groups1", res.Groups1, whole.Groups1},
				{"counts", []int{res.Detected, res.Clusters0, res.Learned.N, res.Matched, res.Clusters1, res.Outside},
					[]int{whole.Detected, whole.Clusters0, whole.Learned.N, whole.Matched, whole.Clusters1, whole.Outside}},
				{"whitening", res.Info.Whitening, whole.Info.Whitening},
				{"universal", res.Info.Universal, whole.Info.Universal},
				{"motion", res.Info.Motion, whole.Info.Motion},
				{"window times", res.Info.WindowTimes, whole.Info.WindowTimes},
				{"summary", Summary{Work: counts(res.Summary.Work), Clips: res.Summary.Clips, Spikes: res.Summary.Spikes, Warnings: res.Summary.Warnings,
					Windows: res.Summary.Windows, Samples: res.Summary.Samples, Centres: res.Summary.Centres},
					Summary{Work: counts(whole.Summary.Work), Clips: whole.Summary.Clips, Spikes: whole.Summary.Spikes, Warnings: whole.Summary.Warnings,
						Windows: whole.Summary.Windows, Samples: whole.Summary.Samples, Centres: whole.Summary.Centres}},
				{"correction", res.Correction, whole.Correction},
			} {
				if !bytes.Equal(gobBytes(t, c.a), gobBytes(t, c.b)) {
					t.Errorf("%s differ: %+v, Sort's %+v", c.name, c.a, c.b)
				}
			}
			var names, wantNames []string
			for i, s := range res.Stages {
				names, wantNames = append(names, s.Name), append(wantNames, whole.Stages[i].Name)
			}
			if !slices.Equal(names, wantNames) || len(res.Stages) != len(whole.Stages) {
				t.Errorf("stages %v, Sort's %v", names, wantNames)
			}
			if m := res.Summary.PassSeconds["matching"]; m != 1.5 {
				t.Errorf("matching took %g s, SortFinish was told 1.5", m)
			}
			if res.Summary.WallSeconds < 1.5 {
				t.Errorf("wall %g s, less than the matching's 1.5", res.Summary.WallSeconds)
			}

			if nblocks > 0 {
				// The matching corrects the windows by g's estimate: moved
				// by 7 µm it finds other spikes.
				moved := *g
				est := *g.Motion
				est.Dshift = slices.Clone(est.Dshift)
				for i := range est.Dshift {
					est.Dshift[i] += 7
				}
				moved.Motion = &est
				ms, err := newP().MatchWindows(ctx, &moved, opt, 0, windows)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Equal(gobBytes(t, ms), gobBytes(t, all)) {
					t.Error("matching with a motion estimate moved by 7 µm found the same spikes")
				}
			}

			p := newP()
			for _, r := range [][2]int{{0, 0}, {-1, 2}, {2, windows + 1}, {3, 2}} {
				if _, err := p.MatchWindows(ctx, g, opt, r[0], r[1]); err == nil {
					t.Errorf("MatchWindows %v: no error", r)
				}
			}
			other := cfg
			other.NBlocks = 1 - nblocks
			q, err := New(nil, rec, rec.Probe(), other)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if _, err := q.MatchWindows(ctx, g, opt, 0, 1); err == nil {
				t.Errorf("MatchWindows with nblocks %d of global results of nblocks %d: no error", other.NBlocks, nblocks)
			}
		})
	}
}

// TestSortFinishTwice checks that SortFinish leaves the spikes it is
// given as they were and so gives the same result from them again, on a
// recording whose curation merges units at a lag (the merges shift the
// spikes' times and features).
func TestSortFinishTwice(t *testing.T) {
	scfg := sim.DefaultConfig()
	scfg.Seconds, scfg.Units, scfg.Seed, scfg.Probe = 10, 30, 1, np1Sites(32)
	scfg.RateMin, scfg.RateMax = 20, 40
	rec, err := sim.Generate(scfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opt := DefaultSortOptions()
	opt.Match.ThLearned = 7
	opt.Curate.SameWaveform = 0.5
	cfg := DefaultConfig()
	cfg.NBlocks = 0
	p, err := New(nil, rec, rec.Probe(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g, err := p.SortGlobal(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := p.MatchWindows(ctx, g, opt, 0, p.sched.Windows)
	if err != nil {
		t.Fatal(err)
	}
	given := gobBytes(t, ms)
	first, err := p.SortFinish(ctx, g, opt, ms, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(first.Curated.Merges, func(m curate.MergeStep) bool { return m.Shift != 0 }) {
		t.Fatalf("merges %+v: none at a lag, so the spikes were not shifted", first.Curated.Merges)
	}
	if !bytes.Equal(gobBytes(t, ms), given) {
		t.Error("SortFinish changed the spikes it was given")
	}
	second, err := p.SortFinish(ctx, g, opt, ms, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gobBytes(t, second.Curated), gobBytes(t, first.Curated)) {
		t.Error("a second SortFinish of the same spikes differs from the first")
	}
}

// TestDropOutside checks that the spikes shifted outside the recording
// leave every per-spike array and kept_spikes' marks, so that the marks
// left are the spikes kept.
func TestDropOutside(t *testing.T) {
	r := &curate.Result{
		Spikes: &curate.Spikes{NC: 1, P: 2, Time: []int64{-2, 5, 10, 12}, Template: []int32{0, 1, 2, 3}, Cluster: []int32{4, 5, 6, 7},
			Features: []float32{0, 1, 2, 3, 4, 5, 6, 7}},
		Kept:      []bool{true, false, true, true, false, true},
		Positions: []float32{0, 0, 1, 1, 2, 2, 3, 3}, Amplitudes: []float32{0, 1, 2, 3}, PCFeatures: []float32{0, 1, 2, 3, 4, 5, 6, 7},
	}
	if n := dropOutside(r, 11); n != 2 {
		t.Errorf("dropped %d, want 2", n)
	}
	s := r.Spikes
	if !slices.Equal(s.Time, []int64{5, 10}) || !slices.Equal(s.Cluster, []int32{5, 6}) || !slices.Equal(r.Amplitudes, []float32{1, 2}) ||
		!slices.Equal(r.Positions, []float32{1, 1, 2, 2}) || !slices.Equal(r.PCFeatures, []float32{2, 3, 4, 5}) {
		t.Errorf("kept %+v, %+v", s, r)
	}
	if want := []bool{false, false, true, true, false, false}; !slices.Equal(r.Kept, want) {
		t.Errorf("kept_spikes %v, want %v", r.Kept, want)
	}
}
