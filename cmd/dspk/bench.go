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
	"slices"
	"strings"
	"time"

	"dspk/compute"
	"dspk/compute/cuda"
	"dspk/detect"
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
			which := fs.String("ops", "read,covariance,preprocess,detect,trailing", "comma-separated ops to measure (also: load, with -file)")
			reps := fs.Int("reps", 5, "repetitions per op (the median is reported)")
			file := fs.String("file", "", "with -ops load: a recording to read whole through the window loader, as dspk detect does (read-ahead 2, one and 8 readers)")
			device := fs.String("device", "auto", "device of the trailing-mean and GPU detection benchmarks: auto, cpu or cuda:N (the other ops run on the CPU)")
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

// median times fn reps times (after one warm-up) and returns the median.
func median(reps int, fn func()) time.Duration {
	fn()
	d := make([]time.Duration, reps)
	for i := range d {
		t := time.Now()
		fn()
		d[i] = time.Since(t)
	}
	slices.Sort(d)
	return d[reps/2]
}

func bench(which []string, reps int, dev *compute.Device) error {
	w := cmdOut
	fmt.Fprintf(w, "dspk %s bench, %d repetitions, medians\n\n", version, reps)
	fmt.Fprintf(w, "%-34s %12s  %s\n", "op", "time", "throughput")
	for _, op := range which {
		var err error
		switch strings.TrimSpace(op) {
		case "read":
			err = benchRead(reps)
		case "load":
			err = benchLoad(benchFile)
		case "covariance":
			benchCovariance(reps)
		case "preprocess", "detect":
			if op == "preprocess" || !slices.Contains(which, "preprocess") {
				err = benchWindow(reps, slices.Contains(which, "preprocess"), slices.Contains(which, "detect"), dev)
			}
		case "trailing":
			err = benchTrailing(dev, reps)
		default:
			return usagef("unknown op %q", op)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func row(op string, d time.Duration, thr string) {
	fmt.Fprintf(cmdOut, "%-34s %10.3f ms  %s\n", op, float64(d.Microseconds())/1000, thr)
}

// benchRead reads NP1 windows sequentially from a file in the page cache.
func benchRead(reps int) error {
	dir, err := os.MkdirTemp("", "dspk-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	const windows = 4
	s, _ := recording.NewSchedule(0, windows*recording.DefaultNT, recording.DefaultNT, recording.DefaultPad)
	data := make([]byte, 385*2*windows*recording.DefaultNT)
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
	d := median(reps, func() {
		for i := 0; i < s.Windows; i++ {
			if err = recording.ReadWindow(rec, s, i, buf); err != nil {
				return
			}
		}
	})
	bytes := float64(windows * s.Len() * 385 * 2)
	row("read 4 windows 385×60122 int16", d, fmt.Sprintf("%.2f GB/s", bytes/d.Seconds()/1e9))
	return err
}

func benchCovariance(reps int) {
	const C, n = 384, 60000
	x := make([]float32, C*n)
	rng := rand.New(rand.NewPCG(1, 3))
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	dst := make([]float64, C*C)
	d := median(reps, func() { linalg.Covariance32(dst, x, C, n, 0, n) })
	flops := 2.0 * C * C * n
	row("covariance 384×60000 float32", d, fmt.Sprintf("%.1f GFLOP/s (full product), %.0f× real time",
		flops/d.Seconds()/1e9, 2/d.Seconds()))
}

// benchWindow times the preprocessing and the detection of one NP1 window
// of a simulated recording.
func benchWindow(reps int, pre, det bool, dev *compute.Device) error {
	cfg := sim.DefaultConfig()
	cfg.Seconds = 4.2
	rec, err := sim.Generate(cfg)
	if err != nil {
		return err
	}
	pc := pipeline.DefaultConfig()
	pc.NSkip = 1
	p, err := pipeline.New(rec, rec.Probe(), pc)
	if err != nil {
		return err
	}
	ctx := context.Background()
	wh, _, err := p.Whitening(ctx)
	if err != nil {
		return err
	}
	s := p.Schedule()
	raw := make([]int16, s.Len()*rec.Channels())
	if err := recording.ReadWindow(rec, s, 1, raw); err != nil {
		return err
	}
	pp := p.Preprocessor()
	x := make([]float32, rec.Probe().Len()*s.Len())
	if pre {
		d := median(reps, func() { pp.Run(x, raw, wh) })
		row("preprocess 384×60122 (+whitening)", d, fmt.Sprintf("%.1f× real time", 2/d.Seconds()))
	}
	if det {
		pp.Run(x, raw, wh)
		tm, _, err := p.LearnTemplates(ctx, wh)
		if err != nil {
			return err
		}
		g, err := p.Grid()
		if err != nil {
			return err
		}
		dt := detect.NewDetector(g, tm, s.Len(), p.DetectParams())
		var sp detect.Spikes
		var st detect.Stats
		win := s.Window(1)
		d := median(reps, func() { sp.Reset(); st = dt.Detect(&sp, x, win.OwnStart, win.Owned()) })
		ft := float64(g.F()) * float64(win.Owned())
		row(fmt.Sprintf("detect 384×60122, %d centres", g.F()), d, fmt.Sprintf("%.1f× real time; %d spikes; %.2f%% of (centre, sample) pairs past the pruning bound",
			2/d.Seconds(), st.Spikes, 100*float64(st.Survivors)/ft))
		if dev.Kind() == compute.CUDA {
			if err := benchDetectGPU(dev, reps, g, tm, x, s.Len(), p.DetectParams(), win); err != nil {
				return err
			}
		}
	}
	return nil
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
		row(fmt.Sprintf("trailing mean [%d, %d] %s", c.rows, c.n, c.typ), d,
			fmt.Sprintf("%.0f GB/s, %.0f%% of copy (%.0f GB/s) on %s", bw, 100*bw/copyBW, copyBW, dev.Spec()))
	}
	return nil
}

// H200 ceilings of the floors of benchDetectGPU: the device-to-device copy
// rate (read + write, gpu.md §7) and the FP64 FMA rate (132 SMs × 64 FMA
// per clock × 1.98 GHz).
const (
	gpuBytesPerSec = 4.27e12
	gpuFMAPerSec   = 132 * 64 * 1.98e9
)

// benchDetectGPU times each stage of the GPU detection of the whitened
// window x (already on the device) and prints it next to its floor: the
// larger of its compulsory bytes at the copy rate and its arithmetic at
// the FP64 rate, and the fraction of the floor reached.
func benchDetectGPU(dev *compute.Device, reps int, g *detect.Grid, tm *detect.Templates, x []float32, T int,
	prm detect.Params, win recording.Window) error {
	gd, err := detect.NewGPUDetector(dev, g, tm, T, prm)
	if err != nil {
		return err
	}
	defer gd.Close()
	var sp detect.Spikes
	st, err := gd.Detect(&sp, x, win.OwnStart, win.Owned())
	if err != nil {
		return err
	}
	xdev, err := gd.Input()
	if err != nil {
		return err
	}
	times := make([][]float64, len(detect.GPUStageNames))
	var walls []time.Duration
	err = dev.Do(func(c *cuda.Ctx) error {
		if err := gd.SetTiming(c, true); err != nil {
			return err
		}
		for range reps + 1 {
			sp.Reset()
			t0 := time.Now()
			if _, err := gd.DetectDevice(c, &sp, xdev, win.OwnStart, win.Owned()); err != nil {
				return err
			}
			walls = append(walls, time.Since(t0))
			ms, err := gd.StageTimes(c)
			if err != nil {
				return err
			}
			for i, v := range ms {
				times[i] = append(times[i], v)
			}
		}
		return gd.SetTiming(c, false)
	})
	if err != nil {
		return err
	}
	C, K, F, nt := g.C(), tm.K, g.F(), prm.NT
	Ti := T - 2*nt
	strong, nd := float64(st.Strong), float64(st.Spikes)
	span := float64(2*prm.NT0Min + 1)
	floors := []float64{
		max(float64(C*T*4+C*Ti*(K+1)*4)/gpuBytesPerSec, float64(C*K*Ti*nt)/gpuFMAPerSec), // filter bank
		float64(C*Ti*4)/gpuBytesPerSec + strong*12/gpuBytesPerSec,                        // centres: M once, the strong list
		strong * (12 + span*4) / gpuBytesPerSec,                                          // paint
		strong * (12 + float64(g.NC2)*4) / gpuBytesPerSec,                                // local max
		strong * (12 + span*4) / gpuBytesPerSec,                                          // clear
		nd * float64(g.NC*(nt*4+K*4)+g.NC*tm.P*4) / gpuBytesPerSec,                       // records
		nd * float64(6+g.NC*tm.P) * 4 / 55e9,                                             // download at the pinned rate
	}
	fmt.Fprintf(cmdOut, "\nGPU detection of one window on %s: %d centres, %d strong points, %d spikes; medians of %d\n", dev, F, st.Strong, st.Spikes, reps)
	fmt.Fprintf(cmdOut, "%-14s %10s %10s %9s\n", "stage", "ms", "floor ms", "fraction")
	var total, ftotal float64
	for i, name := range detect.GPUStageNames {
		v := times[i][1:]
		slices.Sort(v)
		m := v[len(v)/2]
		total += m
		ftotal += floors[i]
		fmt.Fprintf(cmdOut, "%-14s %10.3f %10.4f %9.2f\n", name, m, floors[i]*1e3, floors[i]*1e3/m)
	}
	fmt.Fprintf(cmdOut, "%-14s %10.3f %10.4f %9.2f\n", "sum of stages", total, ftotal*1e3, ftotal*1e3/total)
	ws := walls[1:]
	slices.Sort(ws)
	row("GPU detect 384×60122 (host wall)", ws[len(ws)/2], fmt.Sprintf("%.0f× real time", float64(win.Owned())/30000/ws[len(ws)/2].Seconds()))
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
	s, err := recording.NewSchedule(0, rec.Samples(), recording.DefaultNT, recording.DefaultPad)
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
		row(fmt.Sprintf("load %d windows, %d readers", s.Windows, readers), d,
			fmt.Sprintf("%.2f GB/s, %.0f× real time", bytes/d.Seconds()/1e9, float64(rec.Samples())/rec.SampleRate()/d.Seconds()))
	}
	return nil
}
