package main

import (
	"context"
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
	"time"

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
		name:  "bench",
		short: "measure the ops on this machine (window reading, covariance, preprocessing, detection, trailing mean)",
		example: `dspk bench
dspk bench -ops covariance,trailing -reps 10`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			which := fs.String("ops", "read,covariance,preprocess,detect,trailing", "comma-separated ops to measure")
			reps := fs.Int("reps", 5, "repetitions per op (the median is reported)")
			file := fs.String("file", "", "with -ops load: a recording to read whole through the window loader, as dspk detect does (read-ahead 2, one and 8 readers)")
			device := fs.String("device", "auto", "device the ops run on: auto, cpu or cuda:N (each line names where it ran)")
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
				return bench(strings.Split(*which, ","), *reps, dev)
			}
		},
	})
}

func bench(which []string, reps int, dev *compute.Device) error {
	w := cmdOut
	fmt.Fprintf(w, "dspk %s bench, %d repetitions, medians\n\n", version, reps)
	fmt.Fprintf(w, "%-36s %-8s %12s  %s\n", "op", "device", "time", "throughput")
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
		case "load":
			err = benchLoad(benchFile)
		default:
			return usagef("unknown op %q", op)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// row prints one result: the op, where it ran, its median time and its
// throughput.
func row(op, where string, d time.Duration, thr string) {
	fmt.Fprintf(cmdOut, "%-36s %-8s %10.3f ms  %s\n", op, where, float64(d.Microseconds())/1000, thr)
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
	row("read 4 windows 385×60122 int16", "host", d, fmt.Sprintf("%.2f GB/s", bytes/d.Seconds()/1e9))
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
	row("second moment 384×60000 float32", dev.Spec(), d, fmt.Sprintf("%.1f GFLOP/s (full product), %.0f× real time",
		flops/d.Seconds()/1e9, 2/d.Seconds()))
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
	wh, _, err := p.Whitening(ctx)
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
		row("upload window 385×60122 int16", dev.Spec(), d, fmt.Sprintf("%.1f GB/s (pinned)", float64(len(raw)*2)/d.Seconds()/1e9))
	}
	if pre {
		d, err := dev.Median(reps, func() error { return pp.Window(win) })
		if err != nil {
			return err
		}
		row("preprocess 384×60122 (+whitening)", pp.Device().Spec(), d, fmt.Sprintf("%.1f× real time", 2/d.Seconds()))
		if st, ok := pp.Stages(); ok {
			// The steps of the last window, each spread over all cores,
			// beside the arithmetic floor at the vector width.
			cores := float64(runtime.GOMAXPROCS(0))
			f64, f32 := vectorPeak()
			busy := func(d time.Duration) time.Duration { return time.Duration(float64(d) * cores) }
			stage("  int16, mean, CAR median", busy(st.Reference), cores, 0, 0)
			stage("  high-pass (float64 recursive)", busy(st.Highpass), cores, float64(st.HighpassFlops), f64)
			stage("  whitening apply (float32)", busy(st.Whiten), cores, 2*float64(wh.C)*float64(wh.K)*float64(s.Len()), f32)
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
		row("download window 384×60122 float32", dev.Spec(), d, fmt.Sprintf("%.1f GB/s (pinned)", float64(win.Channels()*win.Len()*4)/d.Seconds()/1e9))
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
			row(fmt.Sprintf("detect 384×60122, %d centres", g.F()), "cpu", d, fmt.Sprintf("%.1f× real time; %d spikes; %.2f%% of (centre, sample) pairs past the pruning bound",
				2/d.Seconds(), st.Spikes, 100*float64(st.Survivors)/ft))
			// Stages: the goroutines' summed time of the last call, shown
			// per core, beside the arithmetic floor at the vector width.
			cores := float64(runtime.GOMAXPROCS(0))
			f64, f32 := vectorPeak()
			nc, S := float64(g.NC), float64(g.S)
			resp := float64(st.RespBlocks) * float64(tm.K) * (S + 1) * nc * 8 * 2
			stage("  correlation (FFT, float64)", st.ConvTime, cores, float64(st.FFTFlops), f64)
			stage("  bounds + responses (float32)", st.EvalTime, cores, resp, f32)
			stage("  suppression + features", st.SuppressTime, cores, 0, 0)
			return nil
		}
		// On the GPU the window stays on the device; only the spikes
		// come back.
		row(fmt.Sprintf("detect 384×60122, %d centres", g.F()), dev.Spec(), d, fmt.Sprintf("%.0f× real time; %d spikes; %d strong (centre, sample) pairs",
			2/d.Seconds(), st.Spikes, st.Strong))
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
func stage(name string, busy time.Duration, cores, flops, peak float64) {
	wall := time.Duration(float64(busy) / cores)
	if flops == 0 || peak == 0 {
		row(name, "cpu", wall, "no arithmetic floor (memory and branches)")
		return
	}
	floor := flops / (peak * cores)
	row(name, "cpu", wall, fmt.Sprintf("%.2f GFLOP, floor %.1f ms at %.0f GFLOP/s per core, %.0f%% of it",
		flops/1e9, floor*1e3, peak/1e9, 100*floor/wall.Seconds()))
}

// benchTrailing measures the causal trailing mean on dev against a copy
// of the same bytes on the same device.
func benchTrailing(dev *compute.Device, reps int) error {
	for _, c := range []struct {
		rows, n int
		typ     string
	}{{4096, 8192, "float32"}, {4096, 8192, "bfloat16"}, {16, 1000000, "float32"}, {16, 1000000, "bfloat16"}} {
		const cf = 100
		bw, copyBW, err := ops.BenchTrailingMean(dev, c.rows, c.n, cf, c.typ, reps)
		if err != nil {
			return err
		}
		bytes := float64(c.rows*c.n) * 2 * 2
		if c.typ == "float32" {
			bytes *= 2
		}
		d := time.Duration(bytes / (bw * 1e9) * float64(time.Second))
		row(fmt.Sprintf("trailing mean [%d, %d] %s", c.rows, c.n, c.typ), dev.Spec(), d,
			fmt.Sprintf("%.0f GB/s, %.0f%% of copy (%.0f GB/s)", bw, 100*bw/copyBW, copyBW))
	}
	return nil
}

// H200 ceilings of the floors of benchDetectStages: the device-to-device
// copy rate (read + write, gpu.md §7) and the FP64 FMA rate (132 SMs × 64
// FMA per clock × 1.98 GHz).
const (
	gpuBytesPerSec = 4.27e12
	gpuFMAPerSec   = 132 * 64 * 1.98e9
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
	span := float64(2*prm.NT0Min + 1)
	floors := []float64{
		max(float64(C*T*4+C*Ti*(K+1)*4)/gpuBytesPerSec, float64(C*K*Ti*nt)/gpuFMAPerSec), // filter bank
		float64(C*Ti*4)/gpuBytesPerSec + strong*12/gpuBytesPerSec,                        // centres: M once, the strong list
		strong * (12 + span*4) / gpuBytesPerSec,                                          // paint
		strong * 16 / gpuBytesPerSec,                                                     // local max: the list and the own row
		strong * (12 + span*4) / gpuBytesPerSec,                                          // clear
		nd * float64(g.NC*(nt*4+K*4)+g.NC*tm.P*4) / gpuBytesPerSec,                       // records
		nd * float64(6+g.NC*tm.P) * 4 / 55e9,                                             // download at the pinned rate
	}
	fmt.Fprintf(cmdOut, "\nGPU detection stages, one window: %d centres, %d strong points, %d spikes; medians of %d\n", g.F(), st.Strong, st.Spikes, reps)
	fmt.Fprintf(cmdOut, "%-14s %10s %10s %9s\n", "stage", "ms", "floor ms", "fraction")
	var total, ftotal float64
	for i, name := range detect.GPUStageNames {
		v := times[i]
		slices.Sort(v)
		m := v[len(v)/2]
		total += m
		ftotal += floors[i]
		fmt.Fprintf(cmdOut, "%-14s %10.3f %10.4f %9.2f\n", name, m, floors[i]*1e3, floors[i]*1e3/m)
	}
	fmt.Fprintf(cmdOut, "%-14s %10.3f %10.4f %9.2f\n", "sum of stages", total, ftotal*1e3, ftotal*1e3/total)
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
		t0 := time.Now()
		ld := recording.NewLoader(rec, s, recording.LoaderOptions{InFlight: 2, Readers: readers})
		for {
			b, err := ld.Next(context.Background())
			if err != nil {
				ld.Close()
				if errors.Is(err, io.EOF) {
					break
				}
				return err
			}
			ld.Release(b)
		}
		d := time.Since(t0)
		row(fmt.Sprintf("load %d windows, %d readers", s.Windows, readers), "cpu", d,
			fmt.Sprintf("%.2f GB/s, %.0f× real time", bytes/d.Seconds()/1e9, float64(rec.Samples())/rec.SampleRate()/d.Seconds()))
	}
	return nil
}
