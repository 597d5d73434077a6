package pipeline

import (
	"context"
	"strings"
	"testing"

	"dspk/compute"
	"dspk/detect"
	"dspk/internal/gputest"
	"dspk/probe"
	"dspk/recording"
	"dspk/sim"
)

// TestCARGroupsRule checks the CAR rule of groups: with Groups alone the
// CAR spans all channels (no per-group CAR, no warning on 16 wires);
// CARGroups needs Groups and CAR, and every group of at least
// MinCARChannels channels.
func TestCARGroupsRule(t *testing.T) {
	rec := recording.NewMemory("stereo", make([]int16, 16*200000), 16, 30000, nil)
	pr := stereotrodes()
	cfg := DefaultConfig()
	cfg.Groups = true
	p, err := New(nil, rec, pr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.pre.Params().Groups != nil || len(p.Warnings()) != 0 {
		t.Errorf("-groups: preprocessing groups %v, warnings %q; want a CAR over all channels and no warning", p.pre.Params().Groups, p.Warnings())
	}
	p.Close()
	cfg.CARGroups = true
	if _, err := New(nil, rec, pr, cfg); err == nil || !strings.Contains(err.Error(), "group 0 of probe 8 stereotrodes has 2") {
		t.Errorf("CAR within stereotrodes: %v", err)
	}
	for _, c := range []Config{{Settings: cfg.Settings, CARGroups: true}, func() Config { c := cfg; c.DoCAR = false; return c }()} {
		if _, err := New(nil, rec, pr, c); err == nil || !strings.Contains(err.Error(), "-car-groups needs -groups") {
			t.Errorf("CARGroups with Groups %v, DoCAR %v: %v", c.Groups, c.DoCAR, err)
		}
	}
	// Two shanks of 16 sites (and one of 15) around the limit.
	for _, n := range []int{16, 15} {
		q := &probe.Probe{Name: "two shanks", NChanFile: 16 + n}
		for i := range 16 + n {
			s := 0
			if i >= 16 {
				s = 1
			}
			q.ChanMap = append(q.ChanMap, i)
			q.X = append(q.X, 300*float64(s))
			q.Y = append(q.Y, 20*float64(i%16))
			q.Shank = append(q.Shank, s)
		}
		r := recording.NewMemory("two", make([]int16, (16+n)*200000), 16+n, 30000, nil)
		p, err := New(nil, r, q, cfg)
		if n == 16 {
			if err != nil {
				t.Fatalf("two shanks of 16: %v", err)
			}
			if g := p.pre.Params().Groups; len(g) != 32 || g[0] != 0 || g[31] != 1 {
				t.Errorf("two shanks of 16: preprocessing groups %v", g)
			}
			p.Close()
		} else if err == nil || !strings.Contains(err.Error(), "group 1 of probe two shanks has 15") {
			t.Errorf("a shank of 15: %v", err)
		}
	}
}

// TestGPUGroupsMatchesCPU runs the three passes with -groups and the
// default CAR over all channels (which the GPU preprocessing runs; a CAR
// within groups is CPU only) on 8 simulated stereotrodes, on the GPU and
// on the CPU: at least 99 % of the spikes agree in sample and centre.
func TestGPUGroupsMatchesCPU(t *testing.T) {
	dev := gputest.Device(t)
	cpu, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	pr := stereotrodes()
	sc := sim.DefaultConfig()
	sc.Seconds, sc.Units, sc.Probe, sc.Seed = 6, 16, pr, 3
	sc.AmplitudeMin, sc.AmplitudeMax = 10, 20
	rec, err := sim.Generate(sc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := shortConfig()
	cfg.Groups = true
	run := func(d *compute.Device) detect.Spikes {
		p, err := New(d, rec, pr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		w, tm := passes12(t, p)
		var s detect.Spikes
		if _, err := p.Detect(context.Background(), w, tm, func(_ recording.Window, x *detect.Spikes) error {
			s.Append(x)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	c, g := run(cpu), run(dev)
	set := map[[2]int64]bool{}
	for i := range c.Sample {
		set[[2]int64{c.Sample[i], int64(c.Center[i])}] = true
	}
	same := 0
	for i := range g.Sample {
		if set[[2]int64{g.Sample[i], int64(g.Center[i])}] {
			same++
		}
	}
	n := max(c.Len(), g.Len())
	t.Logf("CPU %d spikes, GPU %d, %d at the same sample and centre", c.Len(), g.Len(), same)
	if n < 100 || float64(same) < 0.99*float64(n) {
		t.Errorf("only %d of %d spikes agree", same, n)
	}
}
