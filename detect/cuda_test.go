package detect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
	"dspk/probe"
)

// spikeAgreement compares two spike lists: spikes match at the same
// sample, centre and template (and sign); matched spikes' amplitudes,
// positions and features are compared relative to the spike's amplitude
// and feature scale.
type spikeAgreement struct {
	cpu, gpu, matched, exact int
	orderOK                  bool
	maxAmp, maxPos, maxFeat  float64
}

func (a spikeAgreement) String() string {
	return fmt.Sprintf("CPU %d, GPU %d spikes; %d at the same sample, centre, template and sign (%d bit for bit); order same %v; max rel. diff: amplitude %.3g, position %.3g µm, features %.3g",
		a.cpu, a.gpu, a.matched, a.exact, a.orderOK, a.maxAmp, a.maxPos, a.maxFeat)
}

// fraction returns matched / max(cpu, gpu) (1 for two empty lists).
func (a spikeAgreement) fraction() float64 {
	n := max(a.cpu, a.gpu)
	if n == 0 {
		return 1
	}
	return float64(a.matched) / float64(n)
}

func compareSpikes(c, g *Spikes) spikeAgreement {
	a := spikeAgreement{cpu: c.Len(), gpu: g.Len(), orderOK: c.Len() == g.Len()}
	type key struct {
		s    int64
		f    int32
		q    int16
		sign int8
	}
	idx := map[key]int{}
	for i := range g.Len() {
		idx[key{g.Sample[i], g.Center[i], g.Template[i], g.Sign[i]}] = i
	}
	nf := c.NC * c.P
	for i := range c.Len() {
		j, ok := idx[key{c.Sample[i], c.Center[i], c.Template[i], c.Sign[i]}]
		if !ok {
			a.orderOK = false
			continue
		}
		if j != i {
			a.orderOK = false
		}
		a.matched++
		exact := c.Amplitude[i] == g.Amplitude[j] && c.X[i] == g.X[j] && c.Y[i] == g.Y[j]
		a.maxAmp = max(a.maxAmp, math.Abs(float64(c.Amplitude[i]-g.Amplitude[j]))/float64(c.Amplitude[i]))
		a.maxPos = max(a.maxPos, math.Abs(float64(c.X[i]-g.X[j])), math.Abs(float64(c.Y[i]-g.Y[j])))
		var scale float64
		for _, v := range c.Features[i*nf : (i+1)*nf] {
			scale = max(scale, math.Abs(float64(v)))
		}
		for q := range nf {
			u, v := c.Features[i*nf+q], g.Features[j*nf+q]
			if u != v {
				exact = false
			}
			a.maxFeat = max(a.maxFeat, math.Abs(float64(u-v))/scale)
		}
		for q := range c.NC {
			if c.Channels[i*c.NC+q] != g.Channels[j*g.NC+q] {
				a.maxPos = math.Inf(1)
			}
		}
		if exact {
			a.exact++
		}
	}
	return a
}

// poisonGPU fills the detector's work buffers with NaN bits, so that a
// value read before a kernel wrote it shows up.
func poisonGPU(t *testing.T, d *gpuDetector) {
	err := d.dev.Do(func(c *compute.Ctx) error {
		for _, b := range []compute.Mem{d.b, d.m, d.sf, d.stp, d.sa, d.det, d.slots[0].rec, d.slots[1].rec} {
			if err := c.Memset8(b.Ptr, 0xff, b.Bytes); err != nil {
				return err
			}
		}
		return c.Sync()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGPUDetectMatchesCPU runs the GPU and CPU detectors on the synthetic
// windows of the CPU tests (odd sizes, K = 2…6, S = 3, 1 channel, one
// owned column, a last window) and requires the same spikes in the same
// order, amplitudes, positions and features to 1e-6 (bit for bit but for
// float32 rounding ties of the filter bank).
func TestGPUDetectMatchesCPU(t *testing.T) {
	dev := gputest.Device(t)
	for _, c := range detCases() {
		t.Run(c.name, func(t *testing.T) {
			for seed := range uint64(3) {
				prm, g, tm, x, T := buildCase(c, seed+1)
				cpu, err := NewDetector(nil, g, tm, T, prm)
				if err != nil {
					t.Fatal(err)
				}
				cfg := []gpuDetectConfig{{mma: 8, ng: 4}, {mma: 16, ng: 2, noUnion: true}, {}}[seed]
				gd, err := newGPUDetector(dev, g, tm, T, prm, cfg)
				if err != nil {
					t.Fatal(err)
				}
				poisonGPU(t, gd)
				const ownStart = 1_000_000
				var want, got Spikes
				cpu.Detect(&want, x, ownStart, c.owned)
				st, err := gd.Detect(&got, x, ownStart, c.owned)
				gd.Close()
				if err != nil {
					t.Fatal(err)
				}
				a := compareSpikes(&want, &got)
				t.Logf("seed %d: %v; GPU stats %+v", seed, a, st)
				if a.matched != a.cpu || a.matched != a.gpu || !a.orderOK || a.maxAmp > 1e-6 || a.maxPos > 1e-3 || a.maxFeat > 1e-6 {
					t.Errorf("seed %d: GPU and CPU differ: %v", seed, a)
				}
				if int(st.Spikes) != got.Len() {
					t.Errorf("Stats.Spikes %d for %d spikes", st.Spikes, got.Len())
				}
			}
		})
	}
}

// np1Probe is the Neuropixels 1.0 checkerboard: 384 sites in four
// columns (x 43, 11, 59, 27 µm), two per 20-µm row.
func np1Probe() *probe.Probe {
	p := &probe.Probe{Name: "np1", NChanFile: 384}
	xs := []float64{43, 11, 59, 27}
	for i := range 384 {
		p.X = append(p.X, xs[i%4])
		p.Y = append(p.Y, float64(20*(i/2+1)))
		p.Shank = append(p.Shank, 0)
		p.ChanMap = append(p.ChanMap, i)
	}
	return p
}

// TestGPUDetectNP1Window compares the detectors on full NP1 windows (384
// channels × 60 122 columns, 1532 centres) with thousands of injected
// spikes, the list overflow path included: at least 99.99 % of spikes
// agree and amplitudes and features to 1e-4.
func TestGPUDetectNP1Window(t *testing.T) {
	dev := gputest.Device(t)
	if testing.Short() {
		t.Skip("short")
	}
	p := np1Probe()
	prm := DefaultParams()
	g, err := NewGrid(p, prm)
	if err != nil {
		t.Fatal(err)
	}
	tm := synthTemplates(prm.NTemplates, prm.NPCs, prm.NT, prm.NT0Min)
	T := 60000 + 2*prm.NT
	shapes := synthShapes(prm.NTemplates, prm.NT, prm.NT0Min)
	cpu, err := NewDetector(nil, g, tm, T, prm)
	if err != nil {
		t.Fatal(err)
	}
	var total spikeAgreement
	total.orderOK = true
	// The filter bank of each seed: the default, the other tensor-core
	// shape (with the one-column bounds), the m8n8k4 shape with each
	// centre's bound from its own channels.
	cfgs := []gpuDetectConfig{defaultGPUDetectConfig, {mma: 16, scalarBounds: true}, {mma: 8, noUnion: true}}
	for seed := range uint64(3) {
		gd, err := newGPUDetector(dev, g, tm, T, prm, cfgs[seed])
		if err != nil {
			t.Fatal(err)
		}
		defer gd.Close()
		rng := rand.New(rand.NewPCG(seed+10, 3))
		sp := randomSpikes(rng, p, 4000, 0, T, 6, 40, prm.NTemplates, true)
		x := synthWindow(rng, p, T, shapes, prm.NT0Min, sp, 1, 20)
		owned := 60000 - int(seed)*7001
		if seed == 2 {
			// Lists too small: the window is redone with larger ones.
			err := dev.Do(func(c *compute.Ctx) error {
				if err := gd.growPairs(c, 1000); err != nil {
					return err
				}
				if err := gd.growStrong(c, 100); err != nil {
					return err
				}
				return gd.growDets(c, 3)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		poisonGPU(t, gd)
		var want, got Spikes
		cpu.Detect(&want, x, 5000, owned)
		st, err := gd.Detect(&got, x, 5000, owned)
		if err != nil {
			t.Fatal(err)
		}
		a := compareSpikes(&want, &got)
		t.Logf("seed %d, owned %d: %v; GPU stats %+v", seed, owned, a, st)
		total.cpu += a.cpu
		total.gpu += a.gpu
		total.matched += a.matched
		total.exact += a.exact
		total.orderOK = total.orderOK && a.orderOK
		total.maxAmp = max(total.maxAmp, a.maxAmp)
		total.maxPos = max(total.maxPos, a.maxPos)
		total.maxFeat = max(total.maxFeat, a.maxFeat)
	}
	t.Logf("all: %v; agreement %.6f", total, total.fraction())
	if total.cpu < 3000 || total.fraction() < 0.9999 || total.maxAmp > 1e-4 || total.maxFeat > 1e-4 || total.maxPos > 0.01 {
		t.Errorf("GPU and CPU differ: %v", total)
	}
}

// TestGPUDetectorNoGPU checks that the GPU back end on the CPU device is
// an error, not a panic, and that NewDetector(nil, …) has none.
func TestGPUDetectorNoGPU(t *testing.T) {
	prm, g, tm, _, T := buildCase(detCases()[0], 1)
	if _, err := newGPUDetector(nil, g, tm, T, prm, defaultGPUDetectConfig); err == nil {
		t.Error("newGPUDetector(nil) succeeded")
	}
	d, err := NewDetector(nil, g, tm, T, prm)
	if err != nil {
		t.Fatal(err)
	}
	if d.gpu != nil {
		t.Error("a CPU detector has a GPU back end")
	}
	if err := d.SetStageTiming(true); err == nil {
		t.Error("stage timing on the CPU succeeded")
	}
}

// TestGPUDetectWindow runs NewDetector on the GPU through DetectWindow
// (the window's working array on the device, nothing downloaded) and on
// a host window through Detect (the CPU path of the same detector), and
// compares both with a CPU detector.
func TestGPUDetectWindow(t *testing.T) {
	dev := gputest.Device(t)
	c := detCases()[2] // 64ch_lastwindow
	prm, g, tm, x, T := buildCase(c, 5)
	cpu, err := NewDetector(nil, g, tm, T, prm)
	if err != nil {
		t.Fatal(err)
	}
	gd, err := NewDetector(dev, g, tm, T, prm)
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close()
	win := deviceWindow(t, dev, g.C(), T, x)
	var want, got, host Spikes
	cpu.Detect(&want, x, 777, c.owned)
	if _, err := gd.DetectWindow(&got, win, 777, c.owned); err != nil {
		t.Fatal(err)
	}
	gd.Detect(&host, x, 777, c.owned)
	for name, s := range map[string]*Spikes{"DetectWindow": &got, "Detect": &host} {
		a := compareSpikes(&want, s)
		t.Logf("%s: %v", name, a)
		if a.matched != a.cpu || a.matched != a.gpu || a.exact != a.cpu || !a.orderOK || a.cpu == 0 {
			t.Errorf("%s differs from the CPU detector: %v", name, a)
		}
	}
	if err := gd.SetStageTiming(true); err != nil {
		t.Fatal(err)
	}
	got.Reset()
	if _, err := gd.DetectWindow(&got, win, 777, c.owned); err != nil {
		t.Fatal(err)
	}
	ms, err := gd.StageTimes()
	if err != nil || len(ms) != len(GPUStageNames) {
		t.Fatalf("stage times %v, %v", ms, err)
	}
	t.Logf("stages %v ms", ms)
}

// TestChannelUnions checks the channel unions of adjacent centres that
// bounds_u reads (no GPU needed): every centre's mask names exactly its
// nC channels, each union lists distinct channels, and NP1's unions are
// about a third as many rows as the centres' own.
func TestChannelUnions(t *testing.T) {
	p := np1Probe()
	prm := DefaultParams()
	g, err := NewGrid(p, prm)
	if err != nil {
		t.Fatal(err)
	}
	d := &gpuDetector{g: g, f: g.F(), nc: g.NC}
	ulist, ucnt, umask := d.channelUnions()
	umax := unionGroup * g.NC
	rows := 0
	for f := range g.F() {
		grp := f / unionGroup
		u := ulist[grp*umax : grp*umax+int(ucnt[grp])]
		var got []int32
		for i, ch := range u {
			if umask[f]>>i&1 != 0 {
				got = append(got, ch)
			}
		}
		want := slices.Clone(g.IC[f*g.NC : (f+1)*g.NC])
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("centre %d: mask names %v, channels %v", f, got, want)
		}
		if f%unionGroup == 0 {
			rows += len(u)
			s := slices.Clone(u)
			slices.Sort(s)
			if len(slices.Compact(s)) != len(u) {
				t.Fatalf("group %d lists a channel twice: %v", grp, u)
			}
		}
	}
	per := float64(rows) / float64(g.F())
	t.Logf("%.2f rows of M per centre (own channels: %d)", per, g.NC)
	if per > 0.4*float64(g.NC) {
		t.Errorf("%.2f rows per centre", per)
	}
}

// TestGPUStartInFlight starts windows two deep on one GPU detector (each
// uploaded into the same device window, which Start copies), finishes
// them in order and compares each window's spikes with the CPU
// detector's: once with the lists as allocated, once with lists so small
// that every window is redone, the oldest's redo with a later window in
// flight. A third Start before a Finish panics.
func TestGPUStartInFlight(t *testing.T) {
	dev := gputest.Device(t)
	c := detCases()[0]
	prm, g, tm, x0, T := buildCase(c, 1)
	xs := [][]float32{x0}
	for seed := uint64(2); seed <= 5; seed++ {
		_, _, _, x, _ := buildCase(c, seed)
		xs = append(xs, x)
	}
	cpu, err := NewDetector(nil, g, tm, T, prm)
	if err != nil {
		t.Fatal(err)
	}
	for _, small := range []bool{false, true} {
		gd, err := NewDetector(dev, g, tm, T, prm)
		if err != nil {
			t.Fatal(err)
		}
		defer gd.Close()
		if small {
			err := dev.Do(func(cc *compute.Ctx) error {
				if err := gd.gpu.growPairs(cc, 40); err != nil {
					return err
				}
				if err := gd.gpu.growStrong(cc, 20); err != nil {
					return err
				}
				return gd.gpu.growDets(cc, 2)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		poisonGPU(t, gd.gpu)
		win, err := dev.NewWindow(g.C(), T, g.C())
		if err != nil {
			t.Fatal(err)
		}
		defer win.Close()
		got := make([]Spikes, len(xs))
		done := 0
		finish := func() {
			if _, err := gd.Finish(&got[done]); err != nil {
				t.Fatal(err)
			}
			done++
		}
		for i, x := range xs {
			if err := dev.Do(func(cc *compute.Ctx) error { return compute.Upload(cc, win.DataMem().Ptr, x) }); err != nil {
				t.Fatal(err)
			}
			win.MarkWritten()
			if err := gd.Start(win, int64(10_000*i), c.owned); err != nil {
				t.Fatal(err)
			}
			if i == 1 {
				func() {
					defer func() {
						if recover() == nil {
							t.Error("a third Start before Finish did not panic")
						}
					}()
					gd.Start(win, 0, c.owned)
				}()
			}
			if i >= 1 {
				finish()
			}
		}
		for done < len(xs) {
			finish()
		}
		for i, x := range xs {
			var want Spikes
			cpu.Detect(&want, x, int64(10_000*i), c.owned)
			a := compareSpikes(&want, &got[i])
			t.Logf("small lists %v, window %d: %v", small, i, a)
			if a.matched != a.cpu || a.matched != a.gpu || a.exact != a.cpu || !a.orderOK || a.cpu == 0 {
				t.Errorf("small lists %v, window %d differs from the CPU detector: %v", small, i, a)
			}
		}
	}
}

// BenchmarkGPUDetect times the detection of one NP1 window already on the
// device (384 × 60 122, 1532 centres, 4000 injected spikes) and reports
// each stage's milliseconds.
func BenchmarkGPUDetect(b *testing.B) {
	for _, cfg := range []gpuDetectConfig{
		{}, {mma: 8}, {mma: 16}, {mma: 16, ng: 4},
	} {
		b.Run(fmt.Sprintf("mma%d_ng%d", cfg.mma, max(cfg.ng, 1)), func(b *testing.B) { benchGPUDetect(b, cfg) })
	}
}

// benchX is the window of benchGPUDetect, made once.
var (
	benchOnce sync.Once
	benchX    []float32
)

func benchGPUDetect(b *testing.B, cfg gpuDetectConfig) {
	dev := gputest.Device(b)
	p := np1Probe()
	prm := DefaultParams()
	g, err := NewGrid(p, prm)
	if err != nil {
		b.Fatal(err)
	}
	tm := synthTemplates(prm.NTemplates, prm.NPCs, prm.NT, prm.NT0Min)
	T := 60000 + 2*prm.NT
	benchOnce.Do(func() {
		rng := rand.New(rand.NewPCG(1, 3))
		sp := randomSpikes(rng, p, 4000, 0, T, 6, 40, prm.NTemplates, true)
		benchX = synthWindow(rng, p, T, synthShapes(prm.NTemplates, prm.NT, prm.NT0Min), prm.NT0Min, sp, 1, 20)
	})
	x := benchX
	gd, err := newGPUDetector(dev, g, tm, T, prm, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer gd.Close()
	var s Spikes
	if _, err := gd.Detect(&s, x, 0, 60000); err != nil {
		b.Fatal(err)
	}
	sums := make([]float64, len(GPUStageNames))
	b.ResetTimer()
	err = dev.Do(func(c *compute.Ctx) error {
		if err := gd.SetTiming(c, true); err != nil {
			return err
		}
		for range b.N {
			s.Reset()
			if _, err := gd.DetectDevice(c, &s, gd.slots[0].xin.Ptr, 0, 60000); err != nil {
				return err
			}
			ms, err := gd.StageTimes(c)
			if err != nil {
				return err
			}
			for i, v := range ms {
				sums[i] += v
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for i, n := range GPUStageNames {
		b.ReportMetric(sums[i]/float64(b.N), strings.ReplaceAll(n, " ", "-")+"-ms")
	}
	b.ReportMetric(float64(s.Len()), "spikes")
}

// TestGPUDetectConfigFor checks the filter bank chosen per architecture.
func TestGPUDetectConfigFor(t *testing.T) {
	for _, c := range []struct{ major, minor, mma int }{{7, 5, 0}, {8, 0, 8}, {8, 9, 8}, {9, 0, 16}, {10, 0, 16}} {
		if got := gpuDetectConfigFor(c.major, c.minor).mma; got != c.mma {
			t.Errorf("sm_%d%d: mma %d, want %d", c.major, c.minor, got, c.mma)
		}
	}
}
