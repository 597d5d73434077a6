package main

import (
	"context"
	"flag"
	"fmt"
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
			device := fs.String("device", "auto", "device of the trailing-mean benchmark: auto, cpu or cuda:N (the other ops run on the CPU)")
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
		case "covariance":
			benchCovariance(reps)
		case "preprocess", "detect":
			if op == "preprocess" || !slices.Contains(which, "preprocess") {
				err = benchWindow(reps, slices.Contains(which, "preprocess"), slices.Contains(which, "detect"))
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
func benchWindow(reps int, pre, det bool) error {
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
		dr := median(reps, func() { pp.Run(x, raw, nil) })
		row("  int16, mean, CAR median, high-pass", dr, "no arithmetic floor (selection and recursive filters)")
		y := make([]float32, len(x))
		dw := median(reps, func() { wh.Apply(y, x, s.Len()) })
		_, f32 := vectorPeak()
		cores := float64(runtime.GOMAXPROCS(0))
		flops := 2 * float64(wh.C) * float64(wh.K) * float64(s.Len())
		floor := flops / (f32 * cores)
		row("  whitening apply (float32)", dw, fmt.Sprintf("%.2f GFLOP, floor %.1f ms at %.0f GFLOP/s per core, %.0f%% of it",
			flops/1e9, floor*1e3, f32/1e9, 100*floor/dw.Seconds()))
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
		// Stages: the goroutines' summed time of the last call, shown
		// per core, beside the arithmetic floor at the vector width.
		cores := float64(runtime.GOMAXPROCS(0))
		f64, f32 := vectorPeak()
		nc, S := float64(g.NC), float64(g.S)
		resp := float64(st.RespBlocks) * float64(tm.K) * (S + 1) * nc * 8 * 2
		stage("  correlation (FFT, float64)", st.ConvTime, cores, float64(st.FFTFlops), f64)
		stage("  bounds + responses (float32)", st.EvalTime, cores, resp, f32)
		stage("  suppression + features", st.SuppressTime, cores, 0, 0)
	}
	return nil
}

// vectorPeak returns the CPU's add + multiply peak per core and second in
// float64 and float32 (no fused multiply-add: the detector has none), at
// the vector width the kernels use and an assumed 2.6 GHz: two vector adds
// and two vector multiplies per cycle of 256 bits (Zen 4 runs 512-bit
// operations as two halves; without AVX-512 the Go code is scalar).
func vectorPeak() (f64, f32 float64) {
	const ghz = 2.6e9
	if !cpu.X86.HasAVX512F {
		return 4 * ghz, 4 * ghz
	}
	return 4 * 4 * ghz, 4 * 8 * ghz
}

// stage prints one stage of a benchmark: its time per core, the floor of
// its flops at peak on all cores, and the fraction of the floor reached.
func stage(name string, busy time.Duration, cores, flops, peak float64) {
	wall := time.Duration(float64(busy) / cores)
	if flops == 0 || peak == 0 {
		row(name, wall, "no arithmetic floor (memory and branches)")
		return
	}
	floor := flops / (peak * cores)
	row(name, wall, fmt.Sprintf("%.2f GFLOP, floor %.1f ms at %.0f GFLOP/s per core, %.0f%% of it",
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
		row(fmt.Sprintf("trailing mean [%d, %d] %s", c.rows, c.n, c.typ), d,
			fmt.Sprintf("%.0f GB/s, %.0f%% of copy (%.0f GB/s) on %s", bw, 100*bw/copyBW, copyBW, dev.Spec()))
	}
	return nil
}
