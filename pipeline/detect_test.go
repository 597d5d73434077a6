package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"dspk/compare"
	"dspk/detect"
	"dspk/export"
	"dspk/probe"
	"dspk/recording"
	"dspk/sim"
)

// TestDetectionQuality is the acceptance test of detection: on a simulated
// 60-s Neuropixels 1.0 recording with 120 units (seed 1), recall ≥ 0.90
// and precision ≥ 0.97 (Kilosort4's own detection: 0.92 and 0.98 on a
// comparable simulation, kilosort4.md §11.3).
func TestDetectionQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("60-s recording: skipped in -short mode")
	}
	rec := simRecording(t, 60, 1)
	p, err := New(rec, rec.Probe(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	sum, err := p.WriteDetections(context.Background(), FolderOptions{Out: filepath.Join(t.TempDir(), "det")})
	if err != nil {
		t.Fatal(err)
	}
	truth := rec.Truth()
	det := compare.Spikes{Times: sum.Times, Y: make([]float64, len(sum.Y))}
	for i, y := range sum.Y {
		det.Y[i] = float64(y)
	}
	r, err := compare.Match(compare.Spikes{Times: truth.SpikeTimes, Y: truth.SpikeY(), Amplitude: truth.SpikeAmplitude()},
		det, compare.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d true, %d detected: recall %.4f, precision %.4f, bands %+v, %.1f s (%.2f× real time)",
		r.NTruth, r.NDetected, r.Recall, r.Precision, r.Bands, sum.WallSeconds, sum.TimesRealTime)
	if r.Recall < 0.90 || r.Precision < 0.97 {
		t.Errorf("recall %.4f (want ≥ 0.90), precision %.4f (want ≥ 0.97)", r.Recall, r.Precision)
	}
}

// shortConfig makes windows small so that short recordings have several.
func shortConfig() Config {
	c := DefaultConfig()
	c.NT = 15000
	c.NSkip = 2
	return c
}

// TestWholeEqualsWindowByWindow checks that the streamed pass 3 (read
// ahead, reused buffers, one detector for all windows) gives exactly the
// spikes of detecting each window on its own with a fresh detector.
func TestWholeEqualsWindowByWindow(t *testing.T) {
	rec := simRecording(t, 2.1, 5)
	p, err := New(rec, rec.Probe(), shortConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, _, err := p.Whitening(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tm, _, err := p.LearnTemplates(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	var whole detect.Spikes
	if _, err := p.Detect(ctx, w, tm, func(_ recording.Window, s *detect.Spikes) error {
		whole.Append(s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if whole.Len() == 0 {
		t.Fatal("no spikes")
	}

	s := p.Schedule()
	prm := p.DetectParams()
	g, err := p.Grid()
	if err != nil {
		t.Fatal(err)
	}
	var byWindow detect.Spikes
	raw := make([]int16, s.Len()*rec.Channels())
	x := make([]float32, rec.Probe().Len()*s.Len())
	for i := 0; i < s.Windows; i++ {
		if err := recording.ReadWindow(rec, s, i, raw); err != nil {
			t.Fatal(err)
		}
		p.pre.Run(x, raw, w)
		d := detect.NewDetector(g, tm, s.Len(), prm)
		win := s.Window(i)
		var one detect.Spikes
		d.Detect(&one, x, win.OwnStart, win.Owned())
		byWindow.Append(&one)
	}
	if !reflect.DeepEqual(whole, byWindow) {
		t.Fatalf("streamed detection (%d spikes) differs from window-by-window (%d spikes)", whole.Len(), byWindow.Len())
	}
	for i := 1; i < len(whole.Sample); i++ {
		if whole.Sample[i] < whole.Sample[i-1] {
			t.Fatalf("spike %d at %d precedes spike %d at %d", i, whole.Sample[i], i-1, whole.Sample[i-1])
		}
	}
}

// TestSecondRunIdentical checks that two runs write identical files
// (dspk.json differs only in timings and is left out).
func TestSecondRunIdentical(t *testing.T) {
	rec := simRecording(t, 2.1, 6)
	dir := t.TempDir()
	var outs []string
	for i := 0; i < 2; i++ {
		p, err := New(rec, rec.Probe(), shortConfig())
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, string(rune('a'+i)))
		if _, err := p.WriteDetections(context.Background(), FolderOptions{Out: out}); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	entries, err := os.ReadDir(outs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 15 {
		t.Fatalf("only %d files written", len(entries))
	}
	for _, e := range entries {
		if e.Name() == "dspk.json" || e.Name() == export.ManifestName {
			continue // times differ
		}
		a, _ := os.ReadFile(filepath.Join(outs[0], e.Name()))
		b, err := os.ReadFile(filepath.Join(outs[1], e.Name()))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs (%v)", e.Name(), err)
		}
	}
}

// TestBadInputLeavesNothing checks that failing runs leave no folder,
// temporary or final, and keep an existing one intact.
func TestBadInputLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// Noise-free data: no clips to learn templates from.
	rec := recording.NewMemory("flat.bin", make([]int16, 385*40000), 385, 30000, nil)
	p, err := New(rec, simRecording(t, 0.1, 1).Probe(), shortConfig())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "det")
	_, err = p.WriteDetections(context.Background(), FolderOptions{Out: out})
	if err == nil || !strings.Contains(err.Error(), "flat.bin") {
		t.Fatalf("flat recording: %v", err)
	}
	t.Logf("flat recording: %v", err)
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("failed run left %v", left)
	}
	// An existing folder is refused before any work and left intact.
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "keep"), []byte("x"), 0o644)
	_, err = p.WriteDetections(context.Background(), FolderOptions{Out: out})
	if err == nil || !strings.Contains(err.Error(), "overwrite") {
		t.Fatalf("existing folder: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "keep")); err != nil || string(b) != "x" {
		t.Fatal("existing folder damaged")
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Fatalf("refused run left %v", left)
	}
}

// TestFewChannels runs the whole detection on a tetrode-like probe, where
// Kilosort4's 10 nearest channels are clipped to the 4 there are: the
// per-spike arrays must have 4 channel columns.
func TestFewChannels(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seconds = 6
	cfg.Seed = 2
	cfg.Units = 30
	cfg.Probe = &probe.Probe{Name: "tetrode", X: []float64{0, 10, 0, 10}, Y: []float64{0, 0, 10, 10},
		Shank: []int{0, 0, 0, 0}, ChanMap: []int{0, 1, 2, 3}, NChanFile: 5}
	rec, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := shortConfig()
	c.NSkip = 1
	p, err := New(rec, rec.Probe(), c)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "det")
	sum, err := p.WriteDetections(context.Background(), FolderOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Spikes == 0 {
		t.Fatal("no spikes on the tetrode")
	}
	for name, want := range map[string][]int{
		"pc_features.npy":    {sum.Spikes, 6, 4},
		"spike_channels.npy": {sum.Spikes, 4},
		"channel_map.npy":    {4},
	} {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		_, _, shape, err := export.ReadNPYHeader(f)
		f.Close()
		if err != nil || !reflect.DeepEqual(shape, want) {
			t.Errorf("%s: shape %v (%v), want %v", name, shape, err, want)
		}
	}
}
