package bench

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
	motionWindows = 300
	motionSpikes  = 2000
	motionDriftUm = 60
	motionT       = 60000 + 2*61
)

// motionSpikesOf returns the depths and amplitudes of the spikes of every
// window of the motion benchmark: units spread along the probe, moved by
// a linear drift.
func motionSpikesOf(rng *rand.Rand) (y, amp [][]float32) {
	const units = 300
	uy, ua := make([]float64, units), make([]float64, units)
	for u := range units {
		uy[u], ua[u] = 20+3800*rng.Float64(), 9*math.Exp(1.5*rng.Float64())
	}
	y = make([][]float32, motionWindows)
	amp = make([][]float32, motionWindows)
	for w := range motionWindows {
		shift := motionDriftUm * float64(w) / motionWindows
		for range motionSpikes {
			u := rng.IntN(units)
			y[w] = append(y[w], float32(uy[u]+shift+3*rng.NormFloat64()))
			amp[w] = append(amp[w], float32(ua[u]*(1+0.1*rng.NormFloat64())))
		}
	}
	return y, amp
}

// motion reports motion estimation and correction on the device: the
// histogram (one window's spikes binned), the registration (nblocks 1
// and 5 of 300 windows) and the correction of one whitened NP1 window
// with a fresh matrix, each beside its floor.
func (r *runner) motion() error {
	pr := probe.NP1()
	C := pr.Len()
	yc := make([]float64, C)
	xc := make([]float64, C)
	for i := range yc {
		xc[i], yc[i] = float64(pr.X[i]), float64(pr.Y[i])
	}
	rng := rand.New(rand.NewPCG(27, 5))
	y, amp := motionSpikesOf(rng)
	mp := motion.DefaultParams()
	if err := r.motionHistogram(yc, y, amp, mp); err != nil {
		return err
	}
	if err := r.motionRegistration(yc, y, amp, mp); err != nil {
		return err
	}
	return r.motionCorrection(xc, yc, rng, mp)
}

// motionHistogram times one window's spikes into a fresh estimator's
// counts (host work on every device: the spikes come back with the
// detections). Floor: the compulsory bytes, the spikes' 8 each and the
// window's Y×20 uint32 counts written once, at the host's copy rate.
func (r *runner) motionHistogram(yc []float64, y, amp [][]float32, mp motion.Params) error {
	e, err := motion.NewEstimator(r.dev, yc, motionWindows, mp)
	if err != nil {
		return err
	}
	defer e.Close()
	w := 0
	d, err := r.host.Median(r.reps, func() error {
		err := e.Add(w%motionWindows, y[w%motionWindows], amp[w%motionWindows])
		w++
		return err
	})
	if err != nil {
		return err
	}
	const copies = 16
	hb := 8*motionSpikes + 4*e.Rows()*motion.AmpBins
	src, dst := make([]byte, copies*hb), make([]byte, copies*hb)
	dc, err := r.host.Median(r.reps, func() error { copy(dst, src); return nil })
	if err != nil {
		return err
	}
	floor := dc / copies
	r.row(Row{Label: fmt.Sprintf("motion histogram %d spikes", motionSpikes), Op: "motion histogram",
		Size: fmt.Sprintf("%d spikes, NP1", motionSpikes), Device: r.host.Spec(), Time: d, Floor: floor,
		Nums: []Num{{"spikes_per_s", motionSpikes / d.Seconds()}},
		Text: fmt.Sprintf("%.1f M spikes/s, floor %.4f ms (%d bytes at copy speed), %.0f%% of it",
			motionSpikes/d.Seconds()/1e6, floor.Seconds()*1e3, hb, 100*floor.Seconds()/d.Seconds())})
	return nil
}

// motionRegistration times the registration of 300 windows. Floor: the
// multiply-adds of the rigid scores (10 iterations × 31 shifts × Y·20
// cells per window) and the block scores (11 shifts × B·L·20), float64,
// at the device's FP64 peak.
func (r *runner) motionRegistration(yc []float64, y, amp [][]float32, mp motion.Params) error {
	dev := r.dev
	pk := dev.Peaks()
	for _, nb := range []int{1, 5} {
		p := mp
		p.NBlocks = nb
		e, err := motion.NewEstimator(dev, yc, motionWindows, p)
		if err != nil {
			return err
		}
		for w := range motionWindows {
			if err := e.Add(w, y[w], amp[w]); err != nil {
				e.Close()
				return err
			}
		}
		var est *motion.Estimate
		d, err := dev.Median(r.reps, func() error {
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
		macs := float64(motionWindows) * 20 * (float64(motion.RigidIters*(2*motion.RigidShifts+1)*rows) +
			float64((2*motion.BlockShifts+1)*est.Blocks*L))
		x := Row{Label: fmt.Sprintf("motion registration nblocks %d", nb), Op: "motion registration",
			Size: fmt.Sprintf("%d windows × %d bins, %d blocks", motionWindows, rows, est.Blocks), Device: dev.Spec(), Time: d,
			Nums: []Num{{"gflop", 2 * macs / 1e9}}}
		if peak := pk.FP64; peak > 0 {
			x.Floor, x.PeakSource = seconds(2*macs/peak), pk.Source
			x.Text = fmt.Sprintf("%.2f GFLOP, floor %.2f ms at %.0f GFLOP/s, %.0f%% of it", 2*macs/1e9, x.Floor.Seconds()*1e3,
				peak/1e9, 100*x.Floor.Seconds()/d.Seconds())
		} else {
			x.Text = fmt.Sprintf("%.2f GFLOP, no floor (peak rate unknown)", 2*macs/1e9)
		}
		r.row(x)
	}
	return nil
}

// motionCorrection times the correction of one whitened NP1 window;
// every window has its own shift, so each call builds its matrix (2·C³
// flops) before the product (2·C²·T on the GPU's dense SGEMM, 2·kept·T
// on the CPU's banded rows). Floor: those flops at the device's FP32
// peak, or the window's read and write at its memory bandwidth (the
// CPU's: its measured copy rate), whichever is larger.
func (r *runner) motionCorrection(xc, yc []float64, rng *rand.Rand, mp motion.Params) error {
	dev, C := r.dev, len(yc)
	gpu := dev.Kind() == compute.CUDA
	pk := dev.Peaks()
	est := &motion.Estimate{Windows: motionWindows, Blocks: 1, Yblk: []float64{1929}}
	for w := range motionWindows {
		est.Dshift = append(est.Dshift, -motionDriftUm*float64(w)/motionWindows)
	}
	win, err := dev.NewWindow(C, motionT, C+1)
	if err != nil {
		return err
	}
	defer win.Close()
	x := make([]float32, C*motionT)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	bw := pk.Bandwidth
	if !gpu {
		// The host's copy rate, read + write, on every core.
		cp := make([]float32, len(x))
		workers := runtime.GOMAXPROCS(0)
		dw, err := r.host.Median(r.reps, func() error { copyParallel(cp, x, workers); return nil })
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
		w := 0
		d, err := dev.Median(r.reps, func() error {
			err := k.Window(win, w%motionWindows)
			w++
			return err
		})
		kept := C * C
		if !gpu {
			kept = k.Kept(0)
		}
		k.Close()
		if err != nil {
			return err
		}
		flops := 2*float64(C*C*C) + 2*float64(kept)*motionT
		floor := seconds(max(at(flops, pk.FP32), at(float64(2*len(x)*4), bw)))
		row := Row{Label: fmt.Sprintf("motion correction %s %d×%d", rule, C, motionT), Op: "motion correction " + rule.String(),
			Size: fmt.Sprintf("%d×%d float32, %d of %d entries", C, motionT, kept, C*C), Device: dev.Spec(), Time: d, Floor: floor,
			Nums: []Num{{"gflop", flops / 1e9}, {"times_real_time", 2 / d.Seconds()}},
			Text: fmt.Sprintf("%.2f GFLOP, %.0f× real time, floor %.2f ms, %.0f%% of it", flops/1e9, 2/d.Seconds(),
				floor.Seconds()*1e3, 100*floor.Seconds()/d.Seconds())}
		if pk.FP32 > 0 || pk.Bandwidth > 0 {
			row.PeakSource = pk.Source
		}
		r.row(row)
	}
	return nil
}
