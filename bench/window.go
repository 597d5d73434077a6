package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"dspk/compute"
	"dspk/detect"
	"dspk/kilosort"
	"dspk/linalg"
	"dspk/pipeline"
	"dspk/recording"
	"dspk/sim"
)

// read reads NP1 windows sequentially from a file in the page cache.
func (r *runner) read() error {
	dir, err := os.MkdirTemp("", "dspk-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	const windows = 4
	ks := kilosort.Defaults()
	s, _ := recording.NewSchedule(0, int64(windows*ks.BatchSize), ks.BatchSize, ks.NT)
	data := make([]byte, 385*2*windows*ks.BatchSize)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	path := filepath.Join(dir, "bench.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	rec, err := recording.OpenRaw(path, 385, 30000)
	if err != nil {
		return err
	}
	defer rec.Close()
	buf := make([]int16, s.Len()*385)
	d, err := r.host.Median(r.reps, func() error {
		for i := 0; i < s.Windows; i++ {
			if err := recording.ReadWindow(rec, s, i, buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	bytes := float64(windows * s.Len() * 385 * 2)
	gbps := bytes / d.Seconds() / 1e9
	r.row(Row{Label: "read 4 windows 385×60122 int16", Op: "read", Size: "4 windows 385×60122 int16", Device: "host", Time: d,
		Nums: []Num{{"gb_per_s", gbps}}, Text: fmt.Sprintf("%.2f GB/s", gbps)})
	return nil
}

// secondMoment times the whitening statistic's per-window product on the
// device, with linalg's own accumulator, on a window already where the
// device works.
func (r *runner) secondMoment() error {
	dev := r.dev
	const C, n = 384, 60000
	x := make([]float32, C*n)
	rng := rand.New(rand.NewPCG(1, 3))
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	win, err := dev.NewWindow(C, n, 1)
	if err != nil {
		return err
	}
	defer win.Close()
	if err := setWindowData(win, x); err != nil {
		return err
	}
	sm := linalg.NewSecondMoment(dev, C)
	defer sm.Close()
	d, err := dev.Median(r.reps, func() error { return sm.AddWindow(win, 0, n) })
	if err != nil {
		return err
	}
	flops := 2.0 * C * C * n
	gf, rt := flops/d.Seconds()/1e9, 2/d.Seconds()
	r.row(Row{Label: "second moment 384×60000 float32", Op: "second moment", Size: "384×60000 float32", Device: dev.Spec(), Time: d,
		Nums: []Num{{"gflop_per_s", gf}, {"times_real_time", rt}}, Text: fmt.Sprintf("%.1f GFLOP/s (full product), %.0f× real time", gf, rt)})
	return nil
}

// window times, on the device, the preprocessing (pre) and the detection
// (det) of one NP1 window of a simulated recording with the pipeline's
// own ops, and on a GPU the window's upload and download.
func (r *runner) window(pre, det bool) error {
	dev, reps := r.dev, r.reps
	cfg := sim.DefaultConfig()
	cfg.Seconds = 4.2
	rec, err := sim.Generate(cfg)
	if err != nil {
		return err
	}
	pc := pipeline.DefaultConfig()
	pc.NSkip = 1
	p, err := pipeline.New(dev, rec, rec.Probe(), pc)
	if err != nil {
		return err
	}
	defer p.Close()
	wh, _, _, err := p.Whitening(r.ctx)
	if err != nil {
		return err
	}
	s := p.Schedule()
	pin, err := dev.AllocHost(s.Len() * rec.Channels() * 2)
	if err != nil {
		return err
	}
	defer dev.FreeHost(pin)
	raw := pin.Int16()
	if err := recording.ReadWindow(rec, s, 1, raw); err != nil {
		return err
	}
	pp := p.Preprocessor()
	if err := pp.SetWhitening(wh); err != nil {
		return err
	}
	win, err := dev.NewWindow(pp.Channels(), pp.Len(), pp.FileChannels())
	if err != nil {
		return err
	}
	defer win.Close()
	if err := win.Load(raw); err != nil {
		return err
	}
	gpu := dev.Kind() == compute.CUDA
	if gpu {
		d, err := dev.Median(reps, func() error { return win.Load(raw) })
		if err != nil {
			return err
		}
		gbps := float64(len(raw)*2) / d.Seconds() / 1e9
		r.row(Row{Label: "upload window 385×60122 int16", Op: "upload window", Size: "385×60122 int16", Device: dev.Spec(), Time: d,
			Nums: []Num{{"gb_per_s", gbps}}, Text: fmt.Sprintf("%.1f GB/s (pinned)", gbps)})
	}
	if pre {
		d, err := dev.Median(reps, func() error { return pp.Window(win) })
		if err != nil {
			return err
		}
		r.row(Row{Label: "preprocess 384×60122 (+whitening)", Op: "preprocess (+whitening)", Size: "384×60122", Device: pp.Device().Spec(), Time: d,
			Nums: []Num{{"times_real_time", 2 / d.Seconds()}}, Text: fmt.Sprintf("%.1f× real time", 2/d.Seconds())})
		if st, ok := pp.Stages(); ok {
			// The steps of the last window, each spread over all cores,
			// beside the arithmetic floor at the vector width.
			pk := r.host.Peaks()
			cores := float64(pk.Cores)
			busy := func(d time.Duration) time.Duration { return time.Duration(float64(d) * cores) }
			r.stage("preprocess", "  int16, mean, CAR median", busy(st.Reference), 0, 0, pk)
			r.stage("preprocess", "  high-pass (float64 recursive)", busy(st.Highpass), float64(st.HighpassFlops), pk.FP64, pk)
			r.stage("preprocess", "  whitening apply (float32)", busy(st.Whiten), 2*float64(wh.C)*float64(wh.K)*float64(s.Len()), pk.FP32, pk)
		}
	}
	if err := pp.Window(win); err != nil {
		return err
	}
	var download float64 // bytes per second
	if gpu {
		d, err := dev.Median(reps, func() error {
			win.MarkWritten()
			_, err := win.Data()
			return err
		})
		if err != nil {
			return err
		}
		download = float64(win.Channels()*win.Len()*4) / d.Seconds()
		gbps := download / 1e9
		r.row(Row{Label: "download window 384×60122 float32", Op: "download window", Size: "384×60122 float32", Device: dev.Spec(), Time: d,
			Nums: []Num{{"gb_per_s", gbps}}, Text: fmt.Sprintf("%.1f GB/s (pinned)", gbps)})
	}
	if det {
		return r.detect(p, wh, win, download)
	}
	return nil
}

// detect times the detection of the window win holds (preprocessed,
// whitened by wh) with a detector of p's templates, and its stages: on
// the CPU each stage's summed time beside its arithmetic floor, on a GPU
// each kernel's (download is the measured pinned download rate in bytes
// per second).
func (r *runner) detect(p *pipeline.Pipeline, wh *linalg.Whitening, win *compute.Window, download float64) error {
	dev := r.dev
	tm, _, err := p.LearnTemplates(r.ctx, wh)
	if err != nil {
		return err
	}
	g, err := p.Grid()
	if err != nil {
		return err
	}
	s := p.Schedule()
	dt, err := detect.NewDetector(dev, g, tm, s.Len(), p.DetectParams())
	if err != nil {
		return err
	}
	defer dt.Close()
	var sp detect.Spikes
	var st detect.Stats
	w := s.Window(1)
	d, err := dev.Median(r.reps, func() error {
		sp.Reset()
		st, err = dt.DetectWindow(&sp, win, w.OwnStart, w.Owned())
		return err
	})
	if err != nil {
		return err
	}
	ft := float64(g.F()) * float64(w.Owned())
	size := fmt.Sprintf("384×60122, %d centres", g.F())
	if dev.Kind() != compute.CUDA {
		past := 100 * float64(st.Survivors) / ft
		r.row(Row{Label: "detect " + size, Op: "detect", Size: size, Device: "cpu", Time: d,
			Nums: []Num{{"times_real_time", 2 / d.Seconds()}, {"spikes", float64(st.Spikes)}, {"past_bound_percent", past}},
			Text: fmt.Sprintf("%.1f× real time; %d spikes; %.2f%% of (centre, sample) pairs past the pruning bound", 2/d.Seconds(), st.Spikes, past)})
		// Stages: the goroutines' summed time of the last call, shown
		// per core, beside the arithmetic floor at the vector width.
		pk := r.host.Peaks()
		nc, S := float64(g.NC), float64(g.S)
		resp := float64(st.RespBlocks) * float64(tm.K) * (S + 1) * nc * 8 * 2
		r.stage("detect", "  correlation (FFT, float64)", st.ConvTime, float64(st.FFTFlops), pk.FP64, pk)
		r.stage("detect", "  bounds + responses (float32)", st.EvalTime, resp, pk.FP32, pk)
		r.stage("detect", "  suppression + features", st.SuppressTime, 0, 0, pk)
		return nil
	}
	// On the GPU the window stays on the device; only the spikes come
	// back.
	r.row(Row{Label: "detect " + size, Op: "detect", Size: size, Device: dev.Spec(), Time: d,
		Nums: []Num{{"times_real_time", 2 / d.Seconds()}, {"spikes", float64(st.Spikes)}, {"strong", float64(st.Strong)}},
		Text: fmt.Sprintf("%.0f× real time; %d spikes; %d strong (centre, sample) pairs", 2/d.Seconds(), st.Spikes, st.Strong)})
	return r.detectStages(dt, win, g, tm, s.Len(), p.DetectParams(), w, st, download)
}

// stage reports one CPU stage of a benchmark: busy, its time summed over
// the cores, shown per core; the floor of its flops at peak (the whole
// CPU's rate of pk) on all cores, and the fraction of the floor reached.
func (r *runner) stage(op, name string, busy time.Duration, flops, peak float64, pk compute.Peaks) {
	cores := float64(pk.Cores)
	wall := time.Duration(float64(busy) / cores)
	x := Row{Label: name, Op: op + ": " + strings.TrimSpace(name), Size: "384×60122", Device: "cpu", Time: wall}
	if flops == 0 {
		x.Text = "no arithmetic floor (memory and branches)"
		r.row(x)
		return
	}
	if peak == 0 {
		x.Nums = []Num{{"gflop", flops / 1e9}}
		x.Text = fmt.Sprintf("%.2f GFLOP, no floor (peak rate unknown)", flops/1e9)
		r.row(x)
		return
	}
	perCore := peak / cores
	floor := flops / peak
	x.Floor = seconds(floor)
	x.Nums = []Num{{"gflop", flops / 1e9}, {"peak_gflop_per_s_per_core", perCore / 1e9}}
	x.PeakSource = pk.Source
	x.Text = fmt.Sprintf("%.2f GFLOP, floor %.1f ms at %.0f GFLOP/s per core, %.0f%% of it", flops/1e9, floor*1e3, perCore/1e9, 100*floor/wall.Seconds())
	r.row(x)
}

// setWindowData writes x into the working array of win, where it lives.
func setWindowData(win *compute.Window, x []float32) error {
	if win.Device().Kind() != compute.CUDA {
		d, err := win.Data()
		if err != nil {
			return err
		}
		copy(d, x)
		return nil
	}
	err := win.Device().Do(func(c *compute.Ctx) error { return compute.Upload(c, win.DataMem().Ptr, x) })
	win.MarkWritten()
	return err
}
