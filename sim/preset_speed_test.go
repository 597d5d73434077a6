package sim

import (
	"io"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestPresetSpeed generates a preset (DSPK_SIM_PRESET, ladder-hard by
// default) into io.Discard and logs the wall and CPU time per part: the
// model (units, spike trains, truth with motion grid and spike positions)
// and the samples. DSPK_SIM_SECONDS shortens it (600 s, the preset's
// length, by default). It runs only with DSPK_LONG=1.
func TestPresetSpeed(t *testing.T) {
	if os.Getenv("DSPK_LONG") == "" {
		t.Skip("DSPK_LONG=1 runs it (minutes on 2 cores)")
	}
	name := os.Getenv("DSPK_SIM_PRESET")
	if name == "" {
		name = "ladder-hard"
	}
	cfg, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	if s := os.Getenv("DSPK_SIM_SECONDS"); s != "" {
		if cfg.Seconds, err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatal(err)
		}
	}
	w0, c0 := time.Now(), cpuTime()
	rec, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w1, c1 := time.Now(), cpuTime()
	if _, err := rec.WriteTo(io.Discard); err != nil {
		t.Fatal(err)
	}
	w2, c2 := time.Now(), cpuTime()
	tr := rec.Truth()
	t.Logf("%s, %g s, %d units, %d spikes, GOMAXPROCS %d: model %.2f s wall (%.2f CPU-s), samples %.2f s wall (%.2f CPU-s): %.1f× real time, %.2f× real time per CPU-s",
		name, cfg.Seconds, cfg.Units, len(tr.SpikeTimes), workers(), w1.Sub(w0).Seconds(), (c1 - c0).Seconds(),
		w2.Sub(w1).Seconds(), (c2 - c1).Seconds(), cfg.Seconds/w2.Sub(w0).Seconds(), cfg.Seconds/(c2-c0).Seconds())
}
