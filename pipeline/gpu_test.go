package pipeline

import (
	"context"
	"math"
	"testing"

	"dspk/compute"
	"dspk/detect"
	"dspk/internal/gputest"
	"dspk/recording"
)

// TestGPUPipelineMatchesCPU runs passes 1–3 on the GPU (preprocessing and
// the whitening statistic on the device, detection on the host) and on the
// CPU: the whitening statistic agrees to 1e-5 relative and the detections
// agree except for ties flipped by last-bit differences.
func TestGPUPipelineMatchesCPU(t *testing.T) {
	dev := gputest.Device(t)
	cpu, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	rec := simRecording(t, 4.2, 8)
	ctx := context.Background()
	type result struct {
		cc     []float64
		spikes detect.Spikes
	}
	run := func(gpu bool) result {
		d := cpu
		if gpu {
			d = dev
		}
		p, err := New(d, rec, rec.Probe(), shortConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		w, cc, err := p.Whitening(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tm, _, err := p.LearnTemplates(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		var r result
		r.cc = cc
		if _, err := p.Detect(ctx, w, tm, func(_ recording.Window, s *detect.Spikes) error {
			r.spikes.Append(s)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	c, g := run(false), run(true)
	var num, den float64
	for i := range c.cc {
		num += (c.cc[i] - g.cc[i]) * (c.cc[i] - g.cc[i])
		den += c.cc[i] * c.cc[i]
	}
	if rel := math.Sqrt(num / den); !(rel <= 1e-5) {
		t.Errorf("second moment: GPU differs from CPU by %.3g relative", rel)
	}
	same := 0
	set := map[[2]int64]bool{}
	for i := range c.spikes.Sample {
		set[[2]int64{c.spikes.Sample[i], int64(c.spikes.Center[i])}] = true
	}
	for i := range g.spikes.Sample {
		if set[[2]int64{g.spikes.Sample[i], int64(g.spikes.Center[i])}] {
			same++
		}
	}
	n := max(c.spikes.Len(), g.spikes.Len())
	t.Logf("CPU %d spikes, GPU preprocessing %d, %d at the same sample and centre", c.spikes.Len(), g.spikes.Len(), same)
	if n == 0 || float64(same) < 0.99*float64(n) {
		t.Errorf("only %d of %d spikes agree", same, n)
	}
}
