package pipeline

import (
	"context"
	"math"
	"os"
	"strconv"
	"testing"

	"dspk/compute"
	"dspk/detect"
	"dspk/internal/gputest"
	"dspk/probe"
	"dspk/recording"
	"dspk/sim"
)

// TestGPUPipelineMatchesCPU runs passes 1–3 on the GPU (preprocessing,
// the whitening statistic and detection on the device) and on the
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
		w, cc, _, err := p.Whitening(ctx)
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

// TestGPUDetectorMatchesCPUOnSim feeds the same CPU-preprocessed, whitened
// windows of a simulated recording to the CPU and the GPU detector, with
// the templates the CPU learned, and requires at least 99.99 % of the
// spikes at the same sample, centre, template and sign, amplitudes and
// features within 1e-4 relative. DSPK_GPU_SIM_SECONDS sets the length
// (default 4.2 s) and DSPK_GPU_SIM_PROBE=np2 the NP2 preset.
func TestGPUDetectorMatchesCPUOnSim(t *testing.T) {
	dev := gputest.Device(t)
	secs := 4.2
	if s := os.Getenv("DSPK_GPU_SIM_SECONDS"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		secs = v
	}
	cfg := sim.DefaultConfig()
	cfg.Seconds = secs
	if os.Getenv("DSPK_GPU_SIM_PROBE") == "np2" {
		cfg.Probe = probe.NP2()
	}
	rec, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cpuDev, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cpuDev, rec, rec.Probe(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	w, _, _, err := p.Whitening(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tm, _, err := p.LearnTemplates(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	prm := p.DetectParams()
	g, err := detect.NewGrid(p.Probe(), prm)
	if err != nil {
		t.Fatal(err)
	}
	T := p.Schedule().Len()
	cpu, err := detect.NewDetector(nil, g, tm, T, prm)
	if err != nil {
		t.Fatal(err)
	}
	gd, err := detect.NewDetector(dev, g, tm, T, prm)
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close()
	gw, err := dev.NewWindow(g.C(), T, rec.Channels())
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	var a, b detect.Spikes
	err = p.Whitened(ctx, "compare", w, func(win recording.Window, x []float32) error {
		cpu.Detect(&a, x, win.OwnStart, win.Owned())
		if err := dev.Do(func(c *compute.Ctx) error { return compute.Upload(c, gw.DataMem().Ptr, x) }); err != nil {
			return err
		}
		gw.MarkWritten()
		_, err := gd.DetectWindow(&b, gw, win.OwnStart, win.Owned())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		s    int64
		f    int32
		q    int16
		sign int8
	}
	idx := map[key]int{}
	for i := range b.Len() {
		idx[key{b.Sample[i], b.Center[i], b.Template[i], b.Sign[i]}] = i
	}
	matched, exact, sameOrder := 0, 0, a.Len() == b.Len()
	var maxAmp, maxFeat, maxPos float64
	nf := a.NC * a.P
	for i := range a.Len() {
		j, ok := idx[key{a.Sample[i], a.Center[i], a.Template[i], a.Sign[i]}]
		if !ok {
			sameOrder = false
			t.Logf("CPU spike not found on the GPU: sample %d centre %d template %d amplitude %g", a.Sample[i], a.Center[i], a.Template[i], a.Amplitude[i])
			continue
		}
		sameOrder = sameOrder && i == j
		matched++
		maxAmp = max(maxAmp, math.Abs(float64(a.Amplitude[i]-b.Amplitude[j]))/float64(a.Amplitude[i]))
		maxPos = max(maxPos, math.Abs(float64(a.X[i]-b.X[j])), math.Abs(float64(a.Y[i]-b.Y[j])))
		var scale float64
		bits := a.Amplitude[i] == b.Amplitude[j] && a.X[i] == b.X[j] && a.Y[i] == b.Y[j]
		for _, v := range a.Features[i*nf : (i+1)*nf] {
			scale = max(scale, math.Abs(float64(v)))
		}
		for q := range nf {
			u, v := a.Features[i*nf+q], b.Features[j*nf+q]
			bits = bits && u == v
			maxFeat = max(maxFeat, math.Abs(float64(u-v))/scale)
		}
		if bits {
			exact++
		}
	}
	n := max(a.Len(), b.Len())
	frac := float64(matched) / float64(max(n, 1))
	t.Logf("%s, %.1f s: CPU %d, GPU %d spikes; %d at the same sample, centre, template and sign (%.6f), %d bit for bit; same order %v; max diff: amplitude %.3g rel., features %.3g rel., position %.3g µm",
		rec.Probe().Name, secs, a.Len(), b.Len(), matched, frac, exact, sameOrder, maxAmp, maxFeat, maxPos)
	if n == 0 || frac < 0.9999 || maxAmp > 1e-4 || maxFeat > 1e-4 || maxPos > 0.01 {
		t.Errorf("GPU and CPU detectors differ")
	}
}
