package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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
		// The detector's matching runs on the host whatever its device
		// (a GPU window is downloaded once, above).
		row(fmt.Sprintf("detect 384×60122, %d centres", g.F()), "cpu", d, fmt.Sprintf("%.1f× real time; %d spikes; %.2f%% of (centre, sample) pairs past the pruning bound",
			2/d.Seconds(), st.Spikes, 100*float64(st.Survivors)/ft))
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
		row(fmt.Sprintf("trailing mean [%d, %d] %s", c.rows, c.n, c.typ), dev.Spec(), d,
			fmt.Sprintf("%.0f GB/s, %.0f%% of copy (%.0f GB/s)", bw, 100*bw/copyBW, copyBW))
	}
	return nil
}
