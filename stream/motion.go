package stream

import (
	"fmt"

	"dspk/kilosort"
	"dspk/motion"
)

// motionCorrection applies the sort's motion estimate to the stream's
// windows: window w of the estimate to samples [w·BatchSize,
// (w+1)·BatchSize), the last window's shifts beyond the estimate. A
// window's matrix takes about 10 ms to build, more than a block may wait,
// so a second corrector builds the next window's in the background while
// the first corrects.
type motionCorrection struct {
	m          *Model
	cur, next  *motion.Corrector
	curW       int
	nextW      int
	nextDone   chan struct{}
	probe, out []float32 // one column, to make a corrector build its matrix
}

func newMotionCorrection(m *Model) (*motionCorrection, error) {
	p := motion.Params{Motion: kilosort.Motion{SigInterp: m.SigInterp}}
	var ks [2]*motion.Corrector
	for i := range ks {
		k, err := motion.NewCorrectorRule(nil, m.X, m.Y, p, m.Motion, m.Rule)
		if err != nil {
			if i > 0 {
				ks[0].Close()
			}
			return nil, fmt.Errorf("%s: motion correction: %w", m.Dir, err)
		}
		ks[i] = k
	}
	C := len(m.X)
	mc := &motionCorrection{m: m, cur: ks[0], next: ks[1], curW: 0, probe: make([]float32, C), out: make([]float32, C)}
	mc.cur.Apply(mc.out, mc.probe, 0)
	mc.prepare(1)
	return mc, nil
}

// window returns the estimate's window of sample s.
func (mc *motionCorrection) window(s int64) int {
	return int(min(max(s, 0)/mc.m.BatchSize, int64(mc.m.Motion.Windows-1)))
}

// prepare starts building window w's matrix on the spare corrector.
func (mc *motionCorrection) prepare(w int) {
	if w >= mc.m.Motion.Windows {
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
	if w := mc.window(s); w != mc.curW {
		if mc.nextDone != nil {
			<-mc.nextDone
		}
		if mc.nextDone != nil && mc.nextW == w {
			mc.cur, mc.next = mc.next, mc.cur
		}
		mc.curW = w
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
