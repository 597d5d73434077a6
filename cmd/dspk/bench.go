package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/cpu"

	"dspk/compute"
	"dspk/detect"
	"dspk/kilosort"
	"dspk/linalg"
	"dspk/ops"
	"dspk/pipeline"
	"dspk/recording"
	"dspk/sim"
)

// npRate is the data rate of a Neuropixels 1.0 AP stream, 385 int16
// channels at 30 kHz, in bytes per second.
const npRate = 385 * 2 * 30000.0

func init() {
	register(&command{
		name:          "bench",
		writesNothing: true,
		short:         "measure the ops on this machine (window reading, covariance, preprocessing, detection, trailing mean, motion, the whole sort by stage)",
		example: `dspk bench
dspk bench -ops covariance,trailing -reps 10
dspk bench -ops motion
dspk bench -ops sort -device cpu
dspk bench -device cuda:0 -json > bench.json`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			which := fs.String("ops", "read,covariance,preprocess,detect,trailing", "comma-separated ops to measure")
			reps := fs.Int("reps", 5, "repetitions per op (the median is reported)")
			file := fs.String("file", "", "with -ops load: a recording to read whole through the window loader, as dspk detect does (read-ahead 2, one and 8 readers);\n"+
				"with -ops file: a recording to run dspk detect on whole (spikes discarded), each pass beside the loader alone")
			device := fs.String("device", "auto", "device the ops run on: auto, cpu or cuda:N (each line names where it ran)")
			asJSON := fs.Bool("json", false, "write the results as one JSON array of objects instead of the table: "+
				"op, device, size, ms (median), floor_ms and fraction (of the floor reached; null where the op has none), "+
				"then the line's other numbers (gb_per_s, copy_gb_per_s, gflop, times_real_time, spikes, …)")
			return func(args []string) error {
				if len(args) != 0 {
					return usagef("bench takes no arguments")
				}
				if *reps < 1 {
					return usagef("-reps must be at least 1")
				}
				dev, reason, err := compute.Open(*device)
				if err != nil {
					return err
				}
				defer dev.Close()
				fmt.Fprintf(cmdErr, "device: %s (%s)\n", dev, reason)
				benchFile = *file
				if !*asJSON {
					return bench(strings.Split(*which, ","), *reps, dev)
				}
				var rows []benchRow
				benchRows = &rows
				defer func() { benchRows = nil }()
				if err := bench(strings.Split(*which, ","), *reps, dev); err != nil {
					return err
				}
				b, err := json.MarshalIndent(rows, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmdOut, "%s\n", b)
				return err
			}
		},
	})
}

func bench(which []string, reps int, dev *compute.Device) error {
	if benchRows == nil {
		fmt.Fprintf(cmdOut, "dspk %s bench, %d repetitions, medians\n\n", version, reps)
		fmt.Fprintf(cmdOut, "%-36s %-8s %12s  %s\n", "op", "device", "time", "throughput")
	}
	for _, op := range which {
		var err error
		switch strings.TrimSpace(op) {
		case "read":
			err = benchRead(reps)
		case "covariance":
			err = benchSecondMoment(dev, reps)
		case "preprocess", "detect":
			if op == "preprocess" || !slices.Contains(which, "preprocess") {
				err = benchWindow(dev, reps, slices.Contains(which, "preprocess"), slices.Contains(which, "detect"))
			}
		case "trailing":
			err = benchTrailing(dev, reps)
		case "motion":
			err = benchMotion(dev, reps)
		case "sort":
			err = benchSort(benchFile, dev)
		case "load":
			err = benchLoad(benchFile)
		case "file":
			err = benchWholeFile(benchFile, dev)
		default:
			return usagef("unknown op %q", op)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// host is the device of the ops that run on the host whatever -device
// says (reading; timing is by the CPU device's Median).
var host, _, _ = compute.Open("cpu")

// benchRead reads NP1 windows sequentially from a file in the page cache.
func benchRead(reps int) error {
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
	d, err := host.Median(reps, func() error {
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
	row(benchRow{label: "read 4 windows 385×60122 int16", op: "read", size: "4 windows 385×60122 int16", device: "host", d: d,
		nums: []benchNum{{"gb_per_s", gbps}}, text: fmt.Sprintf("%.2f GB/s", gbps)})
	return nil
}

// benchSecondMoment times the whitening statistic's per-window product on
// dev, with linalg's own accumulator, on a window already where dev works.
func benchSecondMoment(dev *compute.Device, reps int) error {
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
	if m := win.DataMem(); m.Bytes > 0 {
		if err := dev.Do(func(c *compute.Ctx) error { return compute.Upload(c, m.Ptr, x) }); err != nil {
			return err
		}
		win.MarkWritten()
	} else {
		h, _ := win.Data()
		copy(h, x)
	}
	sm := linalg.NewSecondMoment(dev, C)
	defer sm.Close()
	d, err := dev.Median(reps, func() error { return sm.AddWindow(win, 0, n) })
	if err != nil {
		return err
	}
	flops := 2.0 * C * C * n
	gf, rt := flops/d.Seconds()/1e9, 2/d.Seconds()
	row(benchRow{label: "second moment 384×60000 float32", op: "second moment", size: "384×60000 float32", device: dev.Spec(), d: d,
		nums: []benchNum{{"gflop_per_s", gf}, {"times_real_time", rt}}, text: fmt.Sprintf("%.1f GFLOP/s (full product), %.0f× real time", gf, rt)})
	return nil
}

// benchWindow times, on dev, the preprocessing and the detection of one
// NP1 window of a simulated recording with the pipeline's own ops, and on
// a GPU the window's upload and download.
func benchWindow(dev *compute.Device, reps int, pre, det bool) error {
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
	ctx := context.Background()
	wh, _, _, err := p.Whitening(ctx)
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
		row(benchRow{label: "upload window 385×60122 int16", op: "upload window", size: "385×60122 int16", device: dev.Spec(), d: d,
			nums: []benchNum{{"gb_per_s", gbps}}, text: fmt.Sprintf("%.1f GB/s (pinned)", gbps)})
	}
	if pre {
		d, err := dev.Median(reps, func() error { return pp.Window(win) })
		if err != nil {
			return err
		}
		row(benchRow{label: "preprocess 384×60122 (+whitening)", op: "preprocess (+whitening)", size: "384×60122", device: pp.Device().Spec(), d: d,
			nums: []benchNum{{"times_real_time", 2 / d.Seconds()}}, text: fmt.Sprintf("%.1f× real time", 2/d.Seconds())})
		if st, ok := pp.Stages(); ok {
			// The steps of the last window, each spread over all cores,
			// beside the arithmetic floor at the vector width.
			cores := float64(runtime.GOMAXPROCS(0))
			f64, f32 := vectorPeak()
			busy := func(d time.Duration) time.Duration { return time.Duration(float64(d) * cores) }
			stage("preprocess", "  int16, mean, CAR median", busy(st.Reference), cores, 0, 0)
			stage("preprocess", "  high-pass (float64 recursive)", busy(st.Highpass), cores, float64(st.HighpassFlops), f64)
			stage("preprocess", "  whitening apply (float32)", busy(st.Whiten), cores, 2*float64(wh.C)*float64(wh.K)*float64(s.Len()), f32)
		}
	}
	if err := pp.Window(win); err != nil {
		return err
	}
	if gpu {
		d, err := dev.Median(reps, func() error {
			win.MarkWritten()
			_, err := win.Data()
			return err
		})
		if err != nil {
			return err
		}
		gbps := float64(win.Channels()*win.Len()*4) / d.Seconds() / 1e9
		row(benchRow{label: "download window 384×60122 float32", op: "download window", size: "384×60122 float32", device: dev.Spec(), d: d,
			nums: []benchNum{{"gb_per_s", gbps}}, text: fmt.Sprintf("%.1f GB/s (pinned)", gbps)})
	}
	if det {
		tm, _, err := p.LearnTemplates(ctx, wh)
		if err != nil {
			return err
		}
		g, err := p.Grid()
		if err != nil {
			return err
		}
		dt, err := detect.NewDetector(dev, g, tm, s.Len(), p.DetectParams())
		if err != nil {
			return err
		}
		defer dt.Close()
		var sp detect.Spikes
		var st detect.Stats
		w := s.Window(1)
		d, err := dev.Median(reps, func() error {
			sp.Reset()
			st, err = dt.DetectWindow(&sp, win, w.OwnStart, w.Owned())
			return err
		})
		if err != nil {
			return err
		}
		ft := float64(g.F()) * float64(w.Owned())
		if !gpu {
			size := fmt.Sprintf("384×60122, %d centres", g.F())
			past := 100 * float64(st.Survivors) / ft
			row(benchRow{label: "detect " + size, op: "detect", size: size, device: "cpu", d: d,
				nums: []benchNum{{"times_real_time", 2 / d.Seconds()}, {"spikes", float64(st.Spikes)}, {"past_bound_percent", past}},
				text: fmt.Sprintf("%.1f× real time; %d spikes; %.2f%% of (centre, sample) pairs past the pruning bound", 2/d.Seconds(), st.Spikes, past)})
			// Stages: the goroutines' summed time of the last call, shown
			// per core, beside the arithmetic floor at the vector width.
			cores := float64(runtime.GOMAXPROCS(0))
			f64, f32 := vectorPeak()
			nc, S := float64(g.NC), float64(g.S)
			resp := float64(st.RespBlocks) * float64(tm.K) * (S + 1) * nc * 8 * 2
			stage("detect", "  correlation (FFT, float64)", st.ConvTime, cores, float64(st.FFTFlops), f64)
			stage("detect", "  bounds + responses (float32)", st.EvalTime, cores, resp, f32)
			stage("detect", "  suppression + features", st.SuppressTime, cores, 0, 0)
			return nil
		}
		// On the GPU the window stays on the device; only the spikes
		// come back.
		size := fmt.Sprintf("384×60122, %d centres", g.F())
		row(benchRow{label: "detect " + size, op: "detect", size: size, device: dev.Spec(), d: d,
			nums: []benchNum{{"times_real_time", 2 / d.Seconds()}, {"spikes", float64(st.Spikes)}, {"strong", float64(st.Strong)}},
			text: fmt.Sprintf("%.0f× real time; %d spikes; %d strong (centre, sample) pairs", 2/d.Seconds(), st.Spikes, st.Strong)})
		return benchDetectStages(dt, win, reps, g, tm, s.Len(), p.DetectParams(), w, st)
	}
	return nil
}

// vectorPeak returns the CPU's add + multiply peak per core and second in
// float64 and float32 (no fused multiply-add: the detector has none), at
// the vector width the kernels use and an assumed 2.6 GHz: two vector adds
// and two vector multiplies per cycle of 256 bits (the AVX2 kernels, or
// the AVX-512 ones on a core that runs 512-bit operations as two halves);
// without AVX2 the Go code is scalar.
func vectorPeak() (f64, f32 float64) {
	const ghz = 2.6e9
	if !cpu.X86.HasAVX2 {
		return 4 * ghz, 4 * ghz
	}
	return 4 * 4 * ghz, 4 * 8 * ghz
}

// stage prints one stage of a benchmark: its time per core, the floor of
// its flops at peak on all cores, and the fraction of the floor reached.
func stage(op, name string, busy time.Duration, cores, flops, peak float64) {
	wall := time.Duration(float64(busy) / cores)
	r := benchRow{label: name, op: op + ": " + strings.TrimSpace(name), size: "384×60122", device: "cpu", d: wall}
	if flops == 0 || peak == 0 {
		r.text = "no arithmetic floor (memory and branches)"
		row(r)
		return
	}
	floor := flops / (peak * cores)
	r.floor = seconds(floor)
	r.nums = []benchNum{{"gflop", flops / 1e9}, {"peak_gflop_per_s_per_core", peak / 1e9}}
	r.text = fmt.Sprintf("%.2f GFLOP, floor %.1f ms at %.0f GFLOP/s per core, %.0f%% of it", flops/1e9, floor*1e3, peak/1e9, 100*floor/wall.Seconds())
	row(r)
}

// trailingShapes are the cases of the trailing-mean benchmark: [4096, 8192]
// and [16, 10⁶], float32 and bfloat16.
var trailingShapes = []trailingShape{{4096, 8192, false}, {4096, 8192, true}, {16, 1000000, false}, {16, 1000000, true}}

// trailingShape is one case of the trailing-mean benchmark: rows of n
// samples, float32 or bfloat16.
type trailingShape struct {
	rows, n int
	bf16    bool
}

// benchTrailing measures the causal trailing mean on dev, with the op's
// own constructor, against a copy of the same bytes on the same device.
func benchTrailing(dev *compute.Device, reps int) error {
	for _, c := range trailingShapes {
		var err error
		if c.bf16 {
			err = benchTrailingMean[ops.BFloat16](dev, c.rows, c.n, reps, "bfloat16", ops.BFloat16FromFloat64)
		} else {
			err = benchTrailingMean[float32](dev, c.rows, c.n, reps, "float32", func(v float64) float32 { return float32(v) })
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// gpuLaunches is the number of back-to-back launches one timed run of the
// GPU trailing mean and its copy make inside one Do, so that the hand-off
// and the synchronisation (tens of µs) weigh little against a 60-µs
// kernel.
const gpuLaunches = 10

// benchTrailingMean prints the line of one trailing mean, cf = 100, of a
// [rows, n] array of T holding pseudo-normal samples of mean 1000 and SD 1
// (conv rounds to T): its time, its rate counting one read of the input
// and one write of the output, and its fraction of a copy of the same
// bytes on dev (GPU: device to device, from and to device arrays; CPU: the
// built-in copy on GOMAXPROCS goroutines).
func benchTrailingMean[T float32 | ops.BFloat16](dev *compute.Device, rows, n, reps int, name string, conv func(float64) T) error {
	const cf = 100
	rng := rand.New(rand.NewPCG(uint64(rows*n), 1000))
	x, y := make([]T, rows*n), make([]T, rows*n)
	for i := range x {
		x[i] = conv(1000 + rng.NormFloat64())
	}
	tm, err := ops.NewTrailingMean[T](dev, rows, n, cf)
	if err != nil {
		return err
	}
	defer tm.Close()
	run := func() error { return tm.Apply(y, x) }
	workers := runtime.GOMAXPROCS(0)
	cp := func() error { copyParallel(y, x, workers); return nil }
	launches := 1
	bytes := 2 * len(x) * int(unsafe.Sizeof(x[0]))
	if dev.Kind() == compute.CUDA {
		var bx, by compute.Mem
		err := dev.Do(func(c *compute.Ctx) error {
			var err error
			if bx, err = c.Alloc(bytes / 2); err != nil {
				return err
			}
			if by, err = c.Alloc(bytes / 2); err != nil {
				return err
			}
			return compute.Upload(c, bx.Ptr, x)
		})
		defer dev.Do(func(c *compute.Ctx) error { c.Free(bx); return c.Free(by) })
		if err != nil {
			return err
		}
		launches = gpuLaunches
		repeat := func(f func(c *compute.Ctx) error) func() error {
			return func() error {
				return dev.Do(func(c *compute.Ctx) error {
					for range launches {
						if err := f(c); err != nil {
							return err
						}
					}
					return nil
				})
			}
		}
		run = repeat(func(c *compute.Ctx) error { return tm.ApplyDevice(c, by.Ptr, bx.Ptr) })
		cp = repeat(func(c *compute.Ctx) error { return c.CopyDtoD(by.Ptr, bx.Ptr, bytes/2) })
	}
	d, err := dev.Median(reps, run)
	if err != nil {
		return err
	}
	dc, err := dev.Median(reps, cp)
	if err != nil {
		return err
	}
	d, dc = d/time.Duration(launches), dc/time.Duration(launches)
	bw, copyBW := float64(bytes)/d.Seconds()/1e9, float64(bytes)/dc.Seconds()/1e9
	row(benchRow{label: fmt.Sprintf("trailing mean [%d, %d] %s", rows, n, name), op: "trailing mean",
		size: fmt.Sprintf("%d×%d %s, cf %d", rows, n, name, cf), device: dev.Spec(), d: d, floor: dc,
		nums: []benchNum{{"gb_per_s", bw}, {"copy_gb_per_s", copyBW}},
		text: fmt.Sprintf("%.0f GB/s, %.0f%% of copy (%.0f GB/s)", bw, 100*bw/copyBW, copyBW)})
	return nil
}

// copyParallel copies src to dst in workers contiguous parts, one goroutine
// each.
func copyParallel[T any](dst, src []T, workers int) {
	var wg sync.WaitGroup
	n := len(src)
	for i := range workers {
		lo, hi := i*n/workers, (i+1)*n/workers
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
}

// H200 ceilings of the floors of benchDetectStages: the device-to-device
// copy rate (read + write, gpu.md §7), the FP64 FMA rate (132 SMs × 64
// FMA per clock × 1.98 GHz) and the FP64 tensor-core rate the filter bank
// runs at (twice that: 67 TFLOP/s).
const (
	gpuBytesPerSec     = 4.27e12
	gpuFMAPerSec       = 132 * 64 * 1.98e9
	gpuTensorFMAPerSec = 2 * gpuFMAPerSec
)

// benchDetectStages times each GPU stage of dt's DetectWindow of win and
// prints it next to its floor: the larger of its compulsory bytes at the
// copy rate and its arithmetic at the FP64 rate, and the fraction of the
// floor reached.
func benchDetectStages(dt *detect.Detector, win *compute.Window, reps int, g *detect.Grid, tm *detect.Templates, T int,
	prm detect.Params, w recording.Window, st detect.Stats) error {
	if err := dt.SetStageTiming(true); err != nil {
		return err
	}
	defer dt.SetStageTiming(false)
	times := make([][]float64, len(detect.GPUStageNames))
	var sp detect.Spikes
	for range reps {
		sp.Reset()
		if _, err := dt.DetectWindow(&sp, win, w.OwnStart, w.Owned()); err != nil {
			return err
		}
		ms, err := dt.StageTimes()
		if err != nil {
			return err
		}
		for i, v := range ms {
			times[i] = append(times[i], v)
		}
	}
	C, K, nt := g.C(), tm.K, prm.NT
	Ti := T - 2*nt
	strong, nd := float64(st.Strong), float64(st.Spikes)
	floors := []float64{
		max(float64(C*T*4+C*Ti*(K+1)*4)/gpuBytesPerSec, float64(C*K*Ti*nt)/gpuTensorFMAPerSec), // filter bank
		float64(C*Ti*4) / gpuBytesPerSec,                           // bounds: M once
		strong * 20 / gpuBytesPerSec,                               // centres: the strong list and its cells of the map
		strong * 20 / gpuBytesPerSec,                               // local max: the list and the own row's neighbours
		strong * 16 / gpuBytesPerSec,                               // clear: the list's points, their cells and buckets
		nd * float64(g.NC*(nt*4+K*4)+g.NC*tm.P*4) / gpuBytesPerSec, // records
		nd * float64(6+g.NC*tm.P) * 4 / 55e9,                       // download at the pinned rate
	}
	if benchRows == nil {
		fmt.Fprintf(cmdOut, "\nGPU detection stages, one window: %d centres, %d strong points, %d spikes; medians of %d\n", g.F(), st.Strong, st.Spikes, reps)
		fmt.Fprintf(cmdOut, "%-14s %10s %10s %9s\n", "stage", "ms", "floor ms", "fraction")
	}
	var total, ftotal float64
	stageRow := func(name string, m, floor float64) {
		if benchRows == nil {
			fmt.Fprintf(cmdOut, "%-14s %10.3f %10.4f %9.2f\n", name, m, floor*1e3, floor*1e3/m)
			return
		}
		row(benchRow{op: "detect stage: " + name, size: fmt.Sprintf("384×60122, %d centres", g.F()), device: win.Device().Spec(),
			d: seconds(m / 1e3), floor: seconds(floor)})
	}
	for i, name := range detect.GPUStageNames {
		v := times[i]
		slices.Sort(v)
		m := v[len(v)/2]
		total += m
		ftotal += floors[i]
		stageRow(name, m, floors[i])
	}
	stageRow("sum of stages", total, ftotal)
	return nil
}

// benchFile is the recording of the load benchmark (-file).
var benchFile string

// benchLoad reads every window of the recording at path through the
// window loader (read-ahead 2) into reused buffers, with one and with 8
// reader goroutines per window: the time dspk detect cannot beat.
func benchLoad(path string) error {
	if path == "" {
		return usagef("-ops load needs -file PATH")
	}
	rec, err := recording.Open(path, recording.OpenOptions{})
	if err != nil {
		return err
	}
	defer rec.Close()
	ks := kilosort.Defaults()
	s, err := recording.NewSchedule(0, rec.Samples(), ks.BatchSize, ks.NT)
	if err != nil {
		return err
	}
	bytes := float64(rec.Samples()) * float64(rec.Channels()) * 2
	for _, readers := range []int{1, 8} {
		d, err := loadAll(rec, s, readers)
		if err != nil {
			return err
		}
		gbps, rt := bytes/d.Seconds()/1e9, float64(rec.Samples())/rec.SampleRate()/d.Seconds()
		row(benchRow{label: fmt.Sprintf("load %d windows, %d readers", s.Windows, readers), op: fmt.Sprintf("load, %d readers", readers),
			size: fmt.Sprintf("%d windows", s.Windows), device: "cpu", d: d,
			nums: []benchNum{{"gb_per_s", gbps}, {"times_real_time", rt}}, text: fmt.Sprintf("%.2f GB/s, %.0f× real time", gbps, rt)})
	}
	return nil
}

// loadAll reads every window of s from rec through the window loader
// (read-ahead 2, readers goroutines per window) into reused buffers and
// returns the time it took.
func loadAll(rec recording.Recording, s recording.Schedule, readers int) (time.Duration, error) {
	t0 := time.Now()
	ld := recording.NewLoader(rec, s, recording.LoaderOptions{InFlight: 2, Readers: readers})
	defer ld.Close()
	for {
		b, err := ld.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return time.Since(t0), nil
		}
		if err != nil {
			return 0, err
		}
		ld.Release(b)
	}
}
