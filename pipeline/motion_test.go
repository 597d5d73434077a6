package pipeline

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"dspk/compare"
	"dspk/probe"
	"dspk/sim"
)

// driftRecording simulates seconds of the first 64 sites of Neuropixels
// 1.0 (640 µm) with units drifting up at speed µm/s.
func driftRecording(t *testing.T, seconds, speed float64, units int) *sim.Recording {
	t.Helper()
	np1 := probe.NP1()
	const n = 64
	pr := &probe.Probe{Name: "np1-64", X: np1.X[:n], Y: np1.Y[:n], Shank: np1.Shank[:n], NChanFile: n}
	for i := range n {
		pr.ChanMap = append(pr.ChanMap, i)
	}
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Seed, cfg.Units, cfg.Probe, cfg.DriftUmPerS = seconds, 5, units, pr, speed
	r, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// motionConfig is shortConfig with motion correction of nblocks blocks.
func motionConfig(nblocks int) Config {
	c := shortConfig()
	c.NBlocks = nblocks
	c.NearestTemplates = 50 // fewer centres than on a full probe
	return c
}

// windowMeanY returns, per window of p's schedule, the mean depth of the
// spikes detected in it, and the least-squares slope of those means
// against the windows' times (µm/s).
func windowMeanY(p *Pipeline, c *collect) float64 {
	W := p.Schedule().Windows
	sum, n := make([]float64, W), make([]float64, W)
	bl := int64(p.Schedule().BatchSize)
	for i, s := range c.spikes.Sample {
		w := min(int((s-p.Schedule().Start)/bl), W-1)
		sum[w] += float64(c.spikes.Y[i])
		n[w]++
	}
	times := p.WindowTimes()
	var st, sy, stt, sty, k float64
	for w := range W {
		if n[w] == 0 {
			continue
		}
		y := sum[w] / n[w]
		st, sy, stt, sty, k = st+times[w], sy+y, stt+times[w]*times[w], sty+times[w]*y, k+1
	}
	return (k*sty - st*sy) / (k*stt - st*st)
}

// TestMotionRun runs detection with motion correction on a recording
// drifting 5 µm/s: the estimate follows the true drift (−dshift, RMS
// below 3 µm about its offset, against 10+ µm for no estimate), the
// detections of the corrected pass stay at constant depth where those of
// the uncorrected pass climb at 5 µm/s, the templates are learned again
// from corrected windows, and nblocks 0 estimates nothing.
func TestMotionRun(t *testing.T) {
	const speed = 5.0
	rec := driftRecording(t, 12, speed, 60)
	ctx := context.Background()
	run := func(nblocks int, rule ...string) (*Pipeline, *collect) {
		cfg := motionConfig(nblocks)
		if len(rule) > 0 {
			cfg.Correction = rule[0]
		}
		cfg.BatchSize = 30000
		p, err := New(nil, rec, rec.Probe(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		var c collect
		if _, err := p.Run(ctx, &c, RunOptions{}); err != nil {
			t.Fatal(err)
		}
		return p, &c
	}
	p0, c0 := run(0)
	if c0.info.Motion != nil || c0.info.Correction != "" {
		t.Error("nblocks 0 estimated motion")
	}
	p1, c1 := run(1)
	est := c1.info.Motion
	if est == nil || c1.info.Correction != "kilosort" {
		t.Fatal("nblocks 1: no motion estimate in RunInfo")
	}
	if est.Windows != p1.Schedule().Windows || est.Blocks != 1 || len(c1.info.WindowTimes) != est.Windows {
		t.Fatalf("estimate of %d windows × %d blocks, %d times, for %d windows", est.Windows, est.Blocks, len(c1.info.WindowTimes), p1.Schedule().Windows)
	}
	r, err := compare.ScoreMotion(compare.MotionEstimate{Times: c1.info.WindowTimes, Depths: est.Yblk, Dshift: est.Dshift,
		Span: float64(p1.Schedule().BatchSize) / rec.SampleRate()}, func(t, y float64) float64 { return speed * t })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("motion RMS %.2f µm (max %.2f), no correction %.2f µm; dshift %v", r.RMS, r.MaxAbs, r.Unscored, est.Dshift)
	if !(r.RMS < 3) || !(r.Unscored > 10) {
		t.Errorf("motion RMS error %.2f µm (want < 3), no correction %.2f µm", r.RMS, r.Unscored)
	}
	s0, s1 := windowMeanY(p0, c0), windowMeanY(p1, c1)
	t.Logf("spike depth drifts %.2f µm/s uncorrected, %.2f µm/s corrected; %d and %d spikes", s0, s1, c0.spikes.Len(), c1.spikes.Len())
	if !(math.Abs(s0-speed) < 1.5) || !(math.Abs(s1) < 1.5) {
		t.Errorf("mean spike depth moves %.2f µm/s uncorrected (want ≈ %g), %.2f µm/s corrected (want ≈ 0)", s0, speed, s1)
	}
	if !strings.Contains(c1.info.UniversalSource, "corrected") {
		t.Errorf("templates %q: not learned again from corrected windows", c1.info.UniversalSource)
	}
	if _, ok := p1.Timings["motion"]; !ok {
		t.Errorf("no motion pass timed: %v", p1.Timings)
	}
	// The smooth rule: the same estimate (the motion pass is uncorrected),
	// depths nearly as flat (its 40-µm blur lets them follow the drift a
	// little: 0.6 µm/s here with its thresholds, 1.5 without).
	if testing.Short() {
		return
	}
	p2, c2 := run(1, "smooth")
	if !reflect.DeepEqual(c2.info.Motion.Dshift, est.Dshift) {
		t.Errorf("smooth rule: estimate %v, kilosort rule's %v", c2.info.Motion.Dshift, est.Dshift)
	}
	if s2 := windowMeanY(p2, c2); !(math.Abs(s2) < 2.5) {
		t.Errorf("smooth rule: mean spike depth moves %.2f µm/s", s2)
	} else {
		t.Logf("smooth rule: spike depth drifts %.2f µm/s, %d spikes", s2, c2.spikes.Len())
	}
	// Its blur correlates the whitened noise of neighbouring channels;
	// with its thresholds raised (motion.SmoothThresholdScale) noise
	// crosses them no more often than under Kilosort4's rule, and the
	// spikes are found as well.
	r1, r2 := detectionScore(t, rec, c1), detectionScore(t, rec, c2)
	t.Logf("kilosort rule: recall %.4f, precision %.4f; smooth rule: recall %.4f, precision %.4f", r1.Recall, r1.Precision, r2.Recall, r2.Precision)
	if !(r2.Precision >= r1.Precision-0.01) || !(r2.Recall >= r1.Recall-0.05) {
		t.Errorf("smooth rule: recall %.4f, precision %.4f; Kilosort4's rule %.4f, %.4f", r2.Recall, r2.Precision, r1.Recall, r1.Precision)
	}
}

// detectionScore scores the detections c of rec against its truth.
func detectionScore(t *testing.T, rec *sim.Recording, c *collect) compare.Report {
	t.Helper()
	truth := rec.Truth()
	det := compare.Spikes{Times: c.spikes.Sample, Y: make([]float64, c.spikes.Len())}
	for i, y := range c.spikes.Y {
		det.Y[i] = float64(y)
	}
	r, err := compare.Match(compare.Spikes{Times: truth.SpikeTimes, Y: truth.SpikeY(), Amplitude: truth.SpikeAmplitude()},
		det, compare.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMotionErrors: too few spikes and too many blocks are refused with
// the recording's name and what is needed.
func TestMotionErrors(t *testing.T) {
	ctx := context.Background()
	quiet := driftRecording(t, 2.1, 0, 6)
	for _, tc := range []struct {
		name    string
		nblocks int
		want    []string
	}{
		// Templates learn from peaks above 6 SD; a universal threshold of
		// 60 SD leaves almost nothing for the motion pass.
		{"few spikes", 1, []string{quiet.Name(), "too few spikes", "per window"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := motionConfig(tc.nblocks)
			cfg.ThUniversal = 60
			p, err := New(nil, quiet, quiet.Probe(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var c collect
			_, err = p.Run(ctx, &c, RunOptions{})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if len(c.calls) != 0 {
				t.Errorf("sink called: %v", c.calls)
			}
		})
	}
	// Bad settings are refused before any pass.
	for nb, want := range map[int]string{-1: "nblocks -1", 60: "nblocks 60 is larger than the probe allows", 1: `drift correction "sharp": want one of kilosort, smooth`} {
		cfg := motionConfig(nb)
		if nb == 1 {
			cfg.Correction = "sharp"
		}
		_, err := New(nil, quiet, quiet.Probe(), cfg)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), quiet.Name()) {
			t.Errorf("nblocks %d: %v", nb, err)
		}
	}
}
