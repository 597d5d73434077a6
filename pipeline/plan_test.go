package pipeline

import (
	"context"
	"slices"
	"strings"
	"testing"

	"dspk/detect"
	"dspk/probe"
	"dspk/recording"
)

// TestPlanMatchesNew checks that a pipeline built from a plan prepared
// ahead (with its loader buffers prepared, which the CPU replaces by Go
// memory) finds, pass for pass, what New's does, and shares the plan's
// grid.
func TestPlanMatchesNew(t *testing.T) {
	rec := simRecording(t, 2.1, 11)
	cfg := shortConfig()
	ctx := context.Background()
	run := func(p *Pipeline) ([]float64, detect.Spikes) {
		t.Helper()
		defer p.Close()
		w, cc, _, err := p.Whitening(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tm, _, err := p.LearnTemplates(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		var all detect.Spikes
		if _, err := p.Detect(ctx, w, tm, func(_ recording.Window, s *detect.Spikes) error {
			all.Append(s)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return cc, all
	}
	p, err := New(nil, rec, rec.Probe(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ccA, spA := run(p)

	pl, err := Prepare(rec, rec.Probe(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	pl.PrepareBuffers()
	pl.PrepareBuffers() // once only
	if len(pl.hosts) != inFlight(cfg)+1 {
		t.Fatalf("%d buffers prepared, want %d", len(pl.hosts), inFlight(cfg)+1)
	}
	if pl.Schedule() != p.Schedule() {
		t.Errorf("plan's schedule %+v, New's %+v", pl.Schedule(), p.Schedule())
	}
	q, err := pl.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if pl.hosts != nil {
		t.Error("New left the prepared buffers with the plan")
	}
	g1, err1 := q.Grid()
	g2, err2 := pl.grid()
	if err1 != nil || err2 != nil || g1 != g2 {
		t.Errorf("the pipeline's grid is not the plan's: %v %v", err1, err2)
	}
	ccB, spB := run(q)
	if !slices.Equal(ccA, ccB) {
		t.Error("second moments differ")
	}
	if spA.Len() == 0 || !slices.Equal(spA.Sample, spB.Sample) || !slices.Equal(spA.Center, spB.Center) ||
		!slices.Equal(spA.Amplitude, spB.Amplitude) {
		t.Errorf("spikes differ: %d from New, %d from the plan", spA.Len(), spB.Len())
	}
	pl.Close() // after New: nothing left to free
}

// TestPlanOnce checks that a plan builds one pipeline: New after New or
// after Close panics, and Close frees prepared buffers no New took.
func TestPlanOnce(t *testing.T) {
	rec := simRecording(t, 1.1, 12)
	cfg := shortConfig()
	mustPanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", what)
			}
		}()
		f()
	}
	pl, err := Prepare(rec, rec.Probe(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pl.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	mustPanic("New after New", func() { pl.New(nil) })

	pl, err = Prepare(rec, rec.Probe(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	pl.PrepareBuffers()
	pl.Close()
	if pl.hosts != nil {
		t.Error("Close kept the prepared buffers")
	}
	pl.PrepareBuffers() // on a closed plan: nothing
	if pl.hosts != nil {
		t.Error("PrepareBuffers on a closed plan prepared buffers")
	}
	mustPanic("New after Close", func() { pl.New(nil) })
}

// TestPrepareRefusesBadInput checks that Prepare gives New's errors that
// need no device.
func TestPrepareRefusesBadInput(t *testing.T) {
	rec := recording.NewMemory("short.bin", make([]int16, 385*1000), 385, 30000, nil)
	if _, err := Prepare(rec, probe.NP1(), DefaultConfig()); err == nil || !strings.Contains(err.Error(), "short.bin") ||
		!strings.Contains(err.Error(), "two") {
		t.Errorf("one-window recording: %v", err)
	}
	rec = recording.NewMemory("ok.bin", make([]int16, 64*130000), 64, 30000, nil)
	if _, err := Prepare(rec, probe.NP1(), DefaultConfig()); err == nil || !strings.Contains(err.Error(), "385") {
		t.Errorf("probe/channel mismatch: %v", err)
	}
}
