package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"dspk/compute"
	"dspk/motion"
	"dspk/probe"
)

// The shapes of the motion benchmark: Neuropixels 1.0 (384 sites), a
// 10-minute recording of 2-s windows, the spikes Kilosort4's first pass
// finds per window on it (598 741 in 300 windows, kilosort4-sort.md §1)
// and a drift of 60 µm over the recording.
const (
	benchMotionWindows = 300
	benchMotionSpikes  = 2000
	benchMotionDriftUm = 60
	benchMotionT       = 60000 + 2*61
)

// H200 FP32 rate of the correction's floor: 132 SMs × 128 FP32 lanes × 2
// flops × 1.98 GHz (67 TFLOP/s; the SGEMM runs without tensor cores).
const gpuFP32PerSec = 132 * 128 * 2 * 1.98e9

// benchMotion prints the lines of motion estimation and correction on
// dev: the histogram (one window's spikes binned), the registration
// (nblocks 1 and 5 of 300 windows) and the correction of one whitened
// NP1 window with a fresh matrix, each beside its floor.
func benchMotion(dev *compute.Device, reps int) error {
	pr := probe.NP1()
	C := pr.Len()
	yc := make([]float64, C)
	xc := make([]float64, C)
	for i := range yc {
		xc[i], yc[i] = float64(pr.X[i]), float64(pr.Y[i])
	}
	// Spikes of units spread along the probe, moved by a linear drift.
	rng := rand.New(rand.NewPCG(27, 5))
	const units = 300
	uy, ua := make([]float64, units), make([]float64, units)
	for u := range units {
		uy[u], ua[u] = 20+3800*rng.Float64(), 9*math.Exp(1.5*rng.Float64())
	}
	y := make([][]float32, benchMotionWindows)
	amp := make([][]float32, benchMotionWindows)
	for w := range benchMotionWindows {
		shift := benchMotionDriftUm * float64(w) / benchMotionWindows
		for range benchMotionSpikes {
			u := rng.IntN(units)
			y[w] = append(y[w], float32(uy[u]+shift+3*rng.NormFloat64()))
			amp[w] = append(amp[w], float32(ua[u]*(1+0.1*rng.NormFloat64())))
		}
	}
	cores := float64(runtime.GOMAXPROCS(0))
	_, peak32 := vectorPeak()
	gpu := dev.Kind() == compute.CUDA

	// Histogram: one window's spikes into a fresh estimator's counts
	// (host work on every device: the spikes come back with the
	// detections). Floor: the compulsory bytes, the spikes' 8 each and
	// the window's Y×20 uint32 counts written once, at the host's copy
	// rate.
	mp := motion.DefaultParams()
	e, err := motion.NewEstimator(dev, yc, benchMotionWindows, mp)
	if err != nil {
		return err
	}
	defer e.Close()
	w := 0
	d, err := host.Median(reps, func() error {
		err := e.Add(w%benchMotionWindows, y[w%benchMotionWindows], amp[w%benchMotionWindows])
		w++
		return err
	})
	if err != nil {
		return err
	}
	const copies = 16
	hb := 8*benchMotionSpikes + 4*e.Rows()*motion.AmpBins
	src, dst := make([]byte, copies*hb), make([]byte, copies*hb)
	dc, err := host.Median(reps, func() error { copy(dst, src); return nil })
	if err != nil {
		return err
	}
	floor := dc / copies
	row(benchRow{label: fmt.Sprintf("motion histogram %d spikes", benchMotionSpikes), op: "motion histogram",
		size: fmt.Sprintf("%d spikes, NP1", benchMotionSpikes), device: host.Spec(), d: d, floor: floor,
		nums: []benchNum{{"spikes_per_s", benchMotionSpikes / d.Seconds()}},
		text: fmt.Sprintf("%.1f M spikes/s, floor %.4f ms (%d bytes at copy speed), %.0f%% of it",
			benchMotionSpikes/d.Seconds()/1e6, floor.Seconds()*1e3, hb, 100*floor.Seconds()/d.Seconds())})

	// Registration of 300 windows. Floor: the multiply-adds of the rigid
	// scores (10 iterations × 31 shifts × Y·20 cells per window) and the
	// block scores (11 shifts × B·L·20), float64, at the device's peak.
	for _, nb := range []int{1, 5} {
		p := mp
		p.NBlocks = nb
		e, err := motion.NewEstimator(dev, yc, benchMotionWindows, p)
		if err != nil {
			return err
		}
		for w := range benchMotionWindows {
			if err := e.Add(w, y[w], amp[w]); err != nil {
				e.Close()
				return err
			}
		}
		var est *motion.Estimate
		d, err := dev.Median(reps, func() error {
			var err error
			est, err = e.Estimate()
			return err
		})
		e.Close()
		if err != nil {
			return err
		}
		rows := e.Rows()
		L := rows / nb
		macs := float64(benchMotionWindows) * 20 * (float64(motion.RigidIters*(2*motion.RigidShifts+1)*rows) +
			float64((2*motion.BlockShifts+1)*est.Blocks*L))
		peak := 2 * gpuFMAPerSec
		if !gpu {
			f64, _ := vectorPeak()
			peak = f64 * cores
		}
		floor := seconds(2 * macs / peak)
		row(benchRow{label: fmt.Sprintf("motion registration nblocks %d", nb), op: "motion registration",
			size: fmt.Sprintf("%d windows × %d bins, %d blocks", benchMotionWindows, rows, est.Blocks), device: dev.Spec(), d: d, floor: floor,
			nums: []benchNum{{"gflop", 2 * macs / 1e9}},
			text: fmt.Sprintf("%.2f GFLOP, floor %.2f ms at %.0f GFLOP/s, %.0f%% of it", 2*macs/1e9, floor.Seconds()*1e3,
				peak/1e9, 100*floor.Seconds()/d.Seconds())})
	}

	// Correction of one whitened NP1 window; every window has its own
	// shift, so each call builds its matrix (2·C³ flops) before the
	// product (2·C²·T on the GPU's dense SGEMM, 2·kept·T on the CPU's
	// banded rows). Floor: those flops at the device's FP32 peak, or the
	// window's read and write at its copy rate, whichever is larger.
	est := &motion.Estimate{Windows: benchMotionWindows, Blocks: 1, Yblk: []float64{1929}}
	for w := range benchMotionWindows {
		est.Dshift = append(est.Dshift, -benchMotionDriftUm*float64(w)/benchMotionWindows)
	}
	win, err := dev.NewWindow(C, benchMotionT, C+1)
	if err != nil {
		return err
	}
	defer win.Close()
	x := make([]float32, C*benchMotionT)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	bw := gpuBytesPerSec
	if !gpu {
		// The host's copy rate, read + write, on every core.
		cp := make([]float32, len(x))
		workers := runtime.GOMAXPROCS(0)
		dw, err := host.Median(reps, func() error { copyParallel(cp, x, workers); return nil })
		if err != nil {
			return err
		}
		bw = float64(2*len(x)*4) / dw.Seconds()
	}
	for _, rule := range []motion.Rule{motion.CorrectionKilosort, motion.CorrectionSmooth} {
		if err := setWindowData(win, x); err != nil {
			return err
		}
		k, err := motion.NewCorrectorRule(dev, xc, yc, mp, est, rule)
		if err != nil {
			return err
		}
		w = 0
		d, err := dev.Median(reps, func() error {
			err := k.Window(win, w%benchMotionWindows)
			w++
			return err
		})
		kept := C * C
		peak := gpuFP32PerSec
		if !gpu {
			kept = k.Kept(0)
			peak = peak32 * cores
		}
		k.Close()
		if err != nil {
			return err
		}
		flops := 2*float64(C*C*C) + 2*float64(kept)*benchMotionT
		floor := seconds(max(flops/peak, float64(2*len(x)*4)/bw))
		row(benchRow{label: fmt.Sprintf("motion correction %s %d×%d", rule, C, benchMotionT), op: "motion correction " + rule.String(),
			size: fmt.Sprintf("%d×%d float32, %d of %d entries", C, benchMotionT, kept, C*C), device: dev.Spec(), d: d, floor: floor,
			nums: []benchNum{{"gflop", flops / 1e9}, {"times_real_time", 2 / d.Seconds()}},
			text: fmt.Sprintf("%.2f GFLOP, %.0f× real time, floor %.2f ms, %.0f%% of it", flops/1e9, 2/d.Seconds(),
				floor.Seconds()*1e3, 100*floor.Seconds()/d.Seconds())})
	}
	return nil
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
