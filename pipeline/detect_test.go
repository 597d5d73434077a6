package pipeline

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"dspk/detect"
	"dspk/linalg"
	"dspk/recording"
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
	p, err := New(nil, rec, rec.Probe(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var c collect
	sum, err := p.Run(context.Background(), &c, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := detectionScore(t, rec, &c)
	t.Logf("%d true, %d detected: recall %.4f, precision %.4f, bands %+v, %s",
		r.NTruth, r.NDetected, r.Recall, r.Precision, r.Bands, sum.Speed())
	if r.Recall < 0.90 || r.Precision < 0.97 {
		t.Errorf("recall %.4f (want ≥ 0.90), precision %.4f (want ≥ 0.97)", r.Recall, r.Precision)
	}
}

// shortConfig makes windows small so that short recordings have several.
func shortConfig() Config {
	c := DefaultConfig()
	c.BatchSize = 15000
	c.NSkip = 2
	return c
}

// TestWholeEqualsWindowByWindow checks that the streamed pass 3 (read
// ahead, reused buffers, one detector for all windows) gives exactly the
// spikes of detecting each window on its own with a fresh detector.
func TestWholeEqualsWindowByWindow(t *testing.T) {
	rec := simRecording(t, 2.1, 5)
	p, err := New(nil, rec, rec.Probe(), shortConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, tm := passes12(t, p)
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
		if err := p.pre.Run(x, raw, w); err != nil {
			t.Fatal(err)
		}
		d, err := detect.NewDetector(nil, g, tm, s.Len(), prm)
		if err != nil {
			t.Fatal(err)
		}
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

// collect is a Sink that keeps every spike and checks the call order.
type collect struct {
	info   *RunInfo
	spikes detect.Spikes
	sum    *Summary
	calls  []string
}

func (c *collect) Begin(info *RunInfo) error {
	c.info = info
	c.calls = append(c.calls, "begin")
	return nil
}

func (c *collect) Window(_ recording.Window, s *detect.Spikes) error {
	c.spikes.Append(s)
	if len(c.calls) == 0 || c.calls[len(c.calls)-1] != "window" {
		c.calls = append(c.calls, "window")
	}
	return nil
}

func (c *collect) End(sum *Summary) error {
	c.sum = sum
	c.calls = append(c.calls, "end")
	return nil
}

// TestRunCallsSink checks that Run hands the sink Begin, the windows'
// spikes and End in that order, with a summary that agrees with them,
// and that an error of the sink stops the run.
func TestRunCallsSink(t *testing.T) {
	rec := simRecording(t, 2.1, 6)
	p, err := New(nil, rec, rec.Probe(), shortConfig())
	if err != nil {
		t.Fatal(err)
	}
	var c collect
	sum, err := p.Run(context.Background(), &c, RunOptions{Device: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.calls, []string{"begin", "window", "end"}) {
		t.Errorf("calls %v", c.calls)
	}
	if c.sum != sum || sum.Spikes != c.spikes.Len() || sum.Spikes == 0 || sum.Windows != p.Schedule().Windows {
		t.Errorf("summary %+v for %d spikes", sum, c.spikes.Len())
	}
	if c.info.Grid.F() != sum.Centres || c.info.Universal == nil || c.info.Whitening == nil || c.info.Device != "cpu" {
		t.Errorf("run info %+v", c.info)
	}
	if s := sum.Speed(); !strings.Contains(s, "real time (") {
		t.Errorf("speed %q", s)
	}
	prov := Provenance(c.info, sum)
	if prov["summary"] != sum || prov["templates"] != "learned from the data" {
		t.Errorf("provenance %v", prov)
	}
	fail := &failing{}
	if _, err := p.Run(context.Background(), fail, RunOptions{}); err == nil || fail.windows != 1 || fail.ended {
		t.Errorf("failing sink: %v after %d windows (ended %v)", err, fail.windows, fail.ended)
	}
}

// failing is a Sink whose first Window call fails.
type failing struct {
	windows int
	ended   bool
}

func (f *failing) Begin(*RunInfo) error { return nil }
func (f *failing) Window(recording.Window, *detect.Spikes) error {
	f.windows++
	return errors.New("disk full")
}
func (f *failing) End(*Summary) error { f.ended = true; return nil }

func TestSpeedWording(t *testing.T) {
	for _, c := range []struct {
		s    Summary
		want string
	}{
		{Summary{Seconds: 60, WallSeconds: 123, TimesRealTime: 60.0 / 123}, "60.0 s of recording in 123.0 s: 0.49× real time (slower than real time)"},
		{Summary{Seconds: 60, WallSeconds: 20, TimesRealTime: 3}, "60.0 s of recording in 20.0 s: 3.00× real time (faster than real time)"},
	} {
		if got := c.s.Speed(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// TestDetectSinkOrderAndError checks the sink of pass 3, which runs behind
// detection on its own goroutine: it sees every window once, in order, and
// its first error stops the pass and is what Detect returns.
func TestDetectSinkOrderAndError(t *testing.T) {
	rec := simRecording(t, 2.1, 5)
	p, err := New(nil, rec, rec.Probe(), shortConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, tm := passes12(t, p)
	var seen []int
	if _, err := p.Detect(ctx, w, tm, func(win recording.Window, _ *detect.Spikes) error {
		seen = append(seen, win.Index)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := p.Schedule().Windows; len(seen) != n {
		t.Fatalf("sink saw %d windows of %d", len(seen), n)
	}
	for i, v := range seen {
		if v != i {
			t.Fatalf("sink saw windows %v, want 0, 1, …", seen)
		}
	}
	boom := errors.New("disk full")
	calls := 0
	_, err = p.Detect(ctx, w, tm, func(win recording.Window, _ *detect.Spikes) error {
		calls++
		if win.Index == 1 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Detect returned %v, want the sink's error", err)
	}
	if calls != 2 {
		t.Errorf("sink called %d times after failing at the second window", calls)
	}
}

// passes12 runs the whitening and template passes of p.
func passes12(t *testing.T, p *Pipeline) (*linalg.Whitening, *detect.Templates) {
	t.Helper()
	w, _, _, err := p.Whitening(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tm, _, err := p.LearnTemplates(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return w, tm
}
