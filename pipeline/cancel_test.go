package pipeline

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"dspk/probe"
	"dspk/recording"
)

// TestCancelWithWindowsReady checks that a pass stops at the next window
// once its context is cancelled although the loader always has that
// window ready (a recording in memory, as one in the page cache): the
// window loop then takes windows without waiting (TryNext), so it must
// check the context itself.
func TestCancelWithWindowsReady(t *testing.T) {
	pr := probe.NP1()
	const fs, n = 30000, 45000
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]int16, n*pr.NChanFile)
	for i := range data {
		data[i] = int16(rng.NormFloat64() * 20)
	}
	rec := recording.NewMemory("noise", data, pr.NChanFile, fs, nil)
	cfg := DefaultConfig()
	cfg.BatchSize = 4000
	cfg.NSkip = 4
	p, err := New(nil, rec, pr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Schedule().Windows < 6 {
		t.Fatalf("%d windows; the test needs several", p.Schedule().Windows)
	}
	w, _, _, err := p.Whitening(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := 0
	err = p.Whitened(ctx, "test", w, func(win recording.Window, x []float32) error {
		seen++
		time.Sleep(20 * time.Millisecond) // the loader reads the next windows meanwhile
		if win.Index == 1 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("pass after cancel: %v, want context.Canceled", err)
	}
	if seen != 2 {
		t.Errorf("%d windows handed out, want 2 (the pass went on after the cancel)", seen)
	}
}
