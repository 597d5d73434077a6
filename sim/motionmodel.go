package sim

import (
	"fmt"
	"math"
	"slices"
)

// motionModel is the displacement of the tissue that a Config describes.
// A(t) is the rigid part: drift·t + sine + steps; the tissue that sits at
// depth y0 at time 0 is displaced by A(t)·(1 + slope·(y0 − bottom)), so
// that the top of the probe moves MotionTopGain times as far as its
// bottom.
type motionModel struct {
	fs              float64
	drift           float64 // µm/s
	sineUm, sineW   float64 // µm, rad/s
	steps           []MotionStep
	slope           float64 // (gain−1)/(top−bottom) per µm; 0 when rigid
	bottom, top     float64 // the probe's smallest and largest site y
	moves, nonRigid bool
}

func newMotionModel(c Config) motionModel {
	mm := motionModel{
		fs: c.SampleRate, drift: c.DriftUmPerS,
		sineUm: c.MotionSineUm, sineW: 2 * math.Pi * c.MotionSineHz,
		steps: c.MotionSteps,
	}
	if c.Probe != nil && c.Probe.Len() > 0 {
		mm.bottom, mm.top = slices.Min(c.Probe.Y), slices.Max(c.Probe.Y)
	}
	if g := c.MotionTopGain; g != 0 && g != 1 && mm.top > mm.bottom {
		mm.slope = (g - 1) / (mm.top - mm.bottom)
		mm.nonRigid = true
	}
	mm.moves = mm.drift != 0 || mm.sineUm != 0 || len(mm.steps) > 0
	return mm
}

// rigidSample is A at sample s. The drift term is computed as the plain
// drift model always has (drift·s/fs), so drift-only recordings keep
// their bytes.
func (mm *motionModel) rigidSample(s int64) float64 {
	a := mm.drift * float64(s) / mm.fs
	if mm.sineUm == 0 && len(mm.steps) == 0 {
		return a
	}
	return a + mm.extra(float64(s)/mm.fs)
}

// rigidTime is A at time t seconds.
func (mm *motionModel) rigidTime(t float64) float64 {
	return mm.drift*t + mm.extra(t)
}

// extra is the sine and the steps at time t.
func (mm *motionModel) extra(t float64) float64 {
	a := 0.0
	if mm.sineUm != 0 {
		a += mm.sineUm * math.Sin(mm.sineW*t)
	}
	for _, st := range mm.steps {
		if t >= st.TimeS {
			a += st.Um
		}
	}
	return a
}

// unitDisp is the displacement of tissue at depth y0 (time 0) when the
// rigid part is a.
func (mm *motionModel) unitDisp(a, y0 float64) float64 {
	if !mm.nonRigid {
		return a
	}
	return a * (1 + mm.slope*(y0-mm.bottom))
}

// probeDisp is the displacement of the tissue that is at probe depth y
// now when the rigid part is a: the inverse of y = y0 + unitDisp(a, y0),
// which is linear in y0.
func (mm *motionModel) probeDisp(a, y float64) float64 {
	if !mm.nonRigid {
		return a
	}
	s := a * mm.slope
	return a + s*(y-mm.bottom-a)/(1+s)
}

// maxRigid bounds |A(t)| over [0, seconds].
func (mm *motionModel) maxRigid(seconds float64) float64 {
	b := math.Abs(mm.drift)*seconds + math.Abs(mm.sineUm)
	for _, st := range mm.steps {
		b += math.Abs(st.Um)
	}
	return b
}

// checkNonRigid rejects non-rigid motion so large that the tissue would
// fold (the depth map y0 → y stops being increasing) or nearly so.
func checkNonRigid(c Config) error {
	mm := newMotionModel(c)
	if !mm.nonRigid {
		return nil
	}
	if s := mm.maxRigid(c.Seconds) * math.Abs(mm.slope); s > 0.5 {
		return fmt.Errorf("sim: config: non-rigid motion up to %.3g µm with MotionTopGain %g over %g µm of probe stretches the tissue by up to %.0f %%: want ≤ 50 %%",
			mm.maxRigid(c.Seconds), c.MotionTopGain, mm.top-mm.bottom, 100*s)
	}
	return nil
}

// Motion grid spacing.
const (
	motionDtS     = 0.05 // s
	motionDepthUm = 20.0 // µm
)

// motionGrid returns the true displacement on a grid covering the
// recording (every motionDtS, plus the samples either side of each step)
// and the probe's depths (every motionDepthUm from the bottom site, plus
// the top site).
func (mm *motionModel) motionGrid(samples int64) *Motion {
	end := float64(max(samples-1, 0)) / mm.fs
	var times []float64
	n := int(math.Ceil(end/motionDtS - 1e-9))
	for i := range n + 1 {
		times = append(times, min(float64(i)*motionDtS, end))
	}
	for _, st := range mm.steps {
		k := int64(math.Ceil(st.TimeS * mm.fs))
		for k > 0 && float64(k-1)/mm.fs >= st.TimeS {
			k--
		}
		for float64(k)/mm.fs < st.TimeS {
			k++
		}
		if k > 0 && k < samples {
			times = append(times, float64(k-1)/mm.fs, float64(k)/mm.fs)
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	var depths []float64
	for y := mm.bottom; y < mm.top-1e-9; y += motionDepthUm {
		depths = append(depths, y)
	}
	depths = append(depths, mm.top)
	m := &Motion{Times: times, Depths: depths, Disp: make([]float64, len(times)*len(depths))}
	for i, t := range times {
		a := mm.rigidTime(t)
		for j, y := range depths {
			m.Disp[i*len(depths)+j] = mm.probeDisp(a, y)
		}
	}
	return m
}
