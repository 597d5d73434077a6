package pipeline

import (
	"context"
	"math"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
)

// TestGPUMotionMatchesCPU runs the whole pipeline with motion correction
// (nblocks 1 and 5) on the GPU (motion pass, estimate, correction on the
// device window, templates from corrected windows, detection) and on the
// CPU. The two motion passes see windows preprocessed on different
// devices, so their spikes, and thus the shifts, may differ by a
// detection flipped by a last-bit difference: the shifts must agree
// within half a depth bin (2.5 µm) and agree exactly in most windows,
// and the corrected detections must agree as the uncorrected ones do
// (TestGPUPipelineMatchesCPU: 99 % at the same sample and centre). The
// log gives the exact agreement.
func TestGPUMotionMatchesCPU(t *testing.T) {
	dev := gputest.Device(t)
	cpu, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	rec := driftRecording(t, 12, 5, 60)
	for _, nb := range []int{1, 5} {
		run := func(d *compute.Device) *collect {
			cfg := motionConfig(nb)
			cfg.BatchSize = 30000
			p, err := New(d, rec, rec.Probe(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var c collect
			if _, err := p.Run(context.Background(), &c, RunOptions{}); err != nil {
				t.Fatal(err)
			}
			return &c
		}
		c, g := run(cpu), run(dev)
		ec, eg := c.info.Motion, g.info.Motion
		if ec == nil || eg == nil || len(ec.Dshift) != len(eg.Dshift) {
			t.Fatalf("nblocks %d: estimates %v and %v", nb, ec, eg)
		}
		var worst float64
		equal := 0
		for i := range ec.Dshift {
			d := math.Abs(ec.Dshift[i] - eg.Dshift[i])
			worst = max(worst, d)
			if d <= 1e-4 {
				equal++
			}
		}
		set := map[[2]int64]bool{}
		for i := range c.spikes.Sample {
			set[[2]int64{c.spikes.Sample[i], int64(c.spikes.Center[i])}] = true
		}
		same := 0
		for i := range g.spikes.Sample {
			if set[[2]int64{g.spikes.Sample[i], int64(g.spikes.Center[i])}] {
				same++
			}
		}
		n := max(c.spikes.Len(), g.spikes.Len())
		t.Logf("nblocks %d: %d of %d shifts equal to 1e-4 µm, largest difference %.4g µm; CPU %d spikes, GPU %d, %d at the same sample and centre (%.5f)",
			nb, equal, len(ec.Dshift), worst, c.spikes.Len(), g.spikes.Len(), same, float64(same)/float64(max(n, 1)))
		if !(worst <= 2.5) || equal < len(ec.Dshift)*9/10 {
			t.Errorf("nblocks %d: shifts differ by up to %.4g µm, %d of %d equal", nb, worst, equal, len(ec.Dshift))
		}
		if n == 0 || float64(same) < 0.99*float64(n) {
			t.Errorf("nblocks %d: only %d of %d corrected spikes agree", nb, same, n)
		}
	}
}
