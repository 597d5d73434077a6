package stream

import (
	"fmt"
	"slices"

	"dspk/kilosort"
	"dspk/motion"
)

// motionCorrection applies the sort's motion estimate to the stream's
// windows: window w of the estimate to samples [w·BatchSize,
// (w+1)·BatchSize). Beyond the estimate it either holds the last window's
// shifts or, with a tracker, extends the estimate window by window from
// the stream's own spikes: halfway through window w, the tracker's
// residual of the spikes matched so far in w (how far along the probe
// they sit from their templates) moves window w+1's shifts by trackGain
// of it, every block alike (the estimate's non-rigid shape is kept). A
// window's matrix takes about 10 ms to build, more than a block may wait,
// so a second corrector builds the next window's in the background while
// the first corrects.
type motionCorrection struct {
	m          *Model
	est        *motion.Estimate // the sort's estimate, extended by the tracker
	cur, next  *motion.Corrector
	curW       int
	nextW      int
	nextDone   chan struct{}
	probe, out []float32 // one column, to make a corrector build its matrix
	track      *tracker  // nil: hold the last shifts
}

func newMotionCorrection(m *Model, track *tracker) (*motionCorrection, error) {
	p := motion.Params{Motion: kilosort.Motion{SigInterp: m.SigInterp}}
	est := *m.Motion
	est.Dshift = slices.Clone(est.Dshift)
	var ks [2]*motion.Corrector
	for i := range ks {
		k, err := motion.NewCorrectorRule(nil, m.X, m.Y, p, &est, m.Rule)
		if err != nil {
			if i > 0 {
				ks[0].Close()
			}
			return nil, fmt.Errorf("%s: motion correction: %w", m.Dir, err)
		}
		ks[i] = k
	}
	C := len(m.X)
	mc := &motionCorrection{m: m, est: &est, cur: ks[0], next: ks[1], curW: 0, probe: make([]float32, C), out: make([]float32, C), track: track}
	mc.cur.Apply(mc.out, mc.probe, 0)
	mc.prepare(1)
	return mc, nil
}

// window returns the estimate's window of sample s: beyond the
// estimate its last one, or with a tracker the window of s.
func (mc *motionCorrection) window(s int64) int {
	w := max(s, 0) / mc.m.BatchSize
	if mc.track == nil {
		w = min(w, int64(mc.est.Windows-1))
	}
	return int(w)
}

// extend gives the estimate windows up to w: the first new one the last
// one's shifts moved by trackGain of the tracker's residual (the spikes
// sit that far deeper than their templates: the correction reads that
// much less deep), the others (windows the stream skipped) the same
// shifts. No build may be running.
func (mc *motionCorrection) extend(w int) {
	e := mc.est
	if w < e.Windows {
		return
	}
	last := e.Dshift[(e.Windows-1)*e.Blocks : e.Windows*e.Blocks]
	r, ok := mc.track.residual()
	if !ok {
		r = 0
	}
	row := make([]float64, e.Blocks)
	for j := range row {
		row[j] = last[j] - trackGain*r
	}
	for e.Windows <= w {
		e.Dshift = append(e.Dshift, row...)
		e.Spikes = append(e.Spikes, 0)
		e.Windows++
	}
}

// shifts returns the mean shift (µm) of each window of the estimate in
// use: the sort's windows, then those the stream added.
func (mc *motionCorrection) shifts() []float64 {
	e := mc.est
	out := make([]float64, e.Windows)
	for w := range out {
		for _, v := range e.Dshift[w*e.Blocks : (w+1)*e.Blocks] {
			out[w] += v / float64(e.Blocks)
		}
	}
	return out
}

// prepare starts building window w's matrix on the spare corrector.
func (mc *motionCorrection) prepare(w int) {
	if w >= mc.est.Windows {
		mc.nextDone = nil
		return
	}
	done := make(chan struct{})
	mc.nextW, mc.nextDone = w, done
	k, probe, out := mc.next, make([]float32, len(mc.probe)), make([]float32, len(mc.out))
	go func() {
		k.Apply(out, probe, w)
		close(done)
	}()
}

// apply writes the correction of the window x, whose owned samples start
// at s, into dst.
func (mc *motionCorrection) apply(dst, x []float32, s int64) {
	w := mc.window(s)
	if w != mc.curW {
		if mc.nextDone != nil {
			<-mc.nextDone
		}
		if mc.track != nil && w >= mc.est.Windows {
			mc.extend(w)
		}
		if mc.nextDone != nil && mc.nextW == w {
			mc.cur, mc.next = mc.next, mc.cur
		}
		mc.curW = w
		mc.prepare(w + 1)
		if mc.track != nil {
			mc.track.forget()
		}
	}
	if mc.track != nil && mc.nextDone == nil && w+1 >= mc.est.Windows && s >= int64(w)*mc.m.BatchSize+mc.m.BatchSize/2 {
		mc.extend(w + 1)
		mc.prepare(w + 1)
	}
	mc.cur.Apply(dst, x, mc.curW)
}

// close waits for the background build and frees both correctors.
func (mc *motionCorrection) close() {
	if mc.nextDone != nil {
		<-mc.nextDone
	}
	mc.cur.Close()
	mc.next.Close()
}
