package sim

import (
	"fmt"
	"math"
)

// Shape is a family of spike waveforms.
type Shape int32

// The waveform families. Each is a sum of Gaussians in time (ms): a trough
// of width σt at 0, a positive rebound of relative height r at τr with
// width σr, and for the triphasic family a small positive phase before the
// trough.
const (
	// ShapeNarrow is a fast-spiking unit: a sharp trough and a quick
	// rebound (trough-to-peak ≈ 0.3 ms).
	ShapeNarrow Shape = iota
	// ShapeRegular is a regular-spiking unit (trough-to-peak ≈ 0.5 ms).
	ShapeRegular
	// ShapeWide is a broad unit with a slow rebound (trough-to-peak
	// ≈ 0.75 ms).
	ShapeWide
	// ShapeTriphasic has a small positive phase 0.25 ms before the trough
	// and a rebound ≈ 0.45 ms after it.
	ShapeTriphasic

	numShapes = 4
)

var shapeNames = [numShapes]string{"narrow", "regular", "wide", "triphasic"}

// String returns the family's name ("narrow", "regular", "wide",
// "triphasic").
func (s Shape) String() string {
	if s < 0 || s >= numShapes {
		return fmt.Sprintf("Shape(%d)", int32(s))
	}
	return shapeNames[s]
}

// MarshalText implements [encoding.TextMarshaler].
func (s Shape) MarshalText() ([]byte, error) {
	if s < 0 || s >= numShapes {
		return nil, fmt.Errorf("sim: unknown shape %d", int32(s))
	}
	return []byte(shapeNames[s]), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler].
func (s *Shape) UnmarshalText(b []byte) error {
	for i, n := range shapeNames {
		if string(b) == n {
			*s = Shape(i)
			return nil
		}
	}
	return fmt.Errorf("sim: unknown shape %q", b)
}

// shapeParams are the parameters of one waveform, times in ms.
type shapeParams struct {
	sigmaT            float64 // trough width
	tauR, sigmaR, r   float64 // rebound time, width, height
	tauP, sigmaP, pre float64 // pre-trough positive phase time (before 0), width, height
}

var shapeBase = [numShapes]shapeParams{
	ShapeNarrow:    {sigmaT: 0.07, tauR: 0.28, sigmaR: 0.10, r: 0.45},
	ShapeRegular:   {sigmaT: 0.11, tauR: 0.50, sigmaR: 0.20, r: 0.30},
	ShapeWide:      {sigmaT: 0.16, tauR: 0.75, sigmaR: 0.30, r: 0.22},
	ShapeTriphasic: {sigmaT: 0.09, tauR: 0.45, sigmaR: 0.18, r: 0.35, tauP: 0.25, sigmaP: 0.07, pre: 0.2},
}

// jittered returns the parameters with all times scaled by tj and the
// rebound height by rj.
func (p shapeParams) jittered(tj, rj float64) shapeParams {
	p.sigmaT *= tj
	p.tauR *= tj
	p.sigmaR *= tj
	p.tauP *= tj
	p.sigmaP *= tj
	p.r *= rj
	return p
}

// at evaluates the untapered waveform at t ms.
func (p shapeParams) at(t float64) float64 {
	g := func(t, mu, s float64) float64 {
		if s == 0 {
			return 0
		}
		d := (t - mu) / s
		return math.Exp(-0.5 * d * d)
	}
	return -g(t, 0, p.sigmaT) + p.r*g(t, p.tauR, p.sigmaR) + p.pre*g(t, -p.tauP, p.sigmaP)
}

// Waveform window and taper lengths at 30 kHz (Kilosort4's nt = 61 with
// the trough at nt0min = 20), scaled to other rates.
const (
	troughIndex30k = 20
	afterTrough30k = 41   // samples from the trough to the end, inclusive of the trough
	taperStartMs   = 0.15 // raised-cosine ramp at the start of the window
	taperEndMs     = 0.30 // and at its end
)

// waveformLen returns the trough index and the length of the waveform
// window at rate fs.
func waveformLen(fs float64) (pre, nt int) {
	pre = int(math.Round(troughIndex30k * fs / 30000))
	post := int(math.Round(afterTrough30k * fs / 30000))
	return pre, pre + post
}

// ramp is a raised-cosine step from 0 at x ≤ 0 to 1 at x ≥ 1.
func ramp(x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	return 0.5 * (1 - math.Cos(math.Pi*x))
}

// waveform samples p at rate fs on nt samples with the trough exactly at
// index pre and value −1; both ends are tapered to 0.
func (p shapeParams) waveform(fs float64, pre, nt int) []float64 {
	// Locate the continuous minimum near 0 (the rebound and pre-phase
	// shift it slightly) on a 0.1-µs grid.
	tmin, vmin := 0.0, p.at(0)
	for i := -2000; i <= 2000; i++ {
		t := float64(i) * 1e-4
		if v := p.at(t); v < vmin {
			tmin, vmin = t, v
		}
	}
	dt := 1000 / fs
	ta := -float64(pre) * dt
	tb := float64(nt-1-pre) * dt
	w := make([]float64, nt)
	for i := range w {
		t := float64(i-pre) * dt
		taper := math.Min(ramp((t-ta)/taperStartMs), ramp((tb-t)/taperEndMs))
		w[i] = p.at(t+tmin) * taper / -vmin
	}
	w[pre] = -1
	return w
}
