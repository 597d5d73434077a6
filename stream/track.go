package stream

import (
	"fmt"
	"math"

	"dspk/kilosort"
	"dspk/motion"
)

// tracker measures how far along the probe the stream's spikes sit from
// their templates in the motion-corrected windows: the motion the
// estimate in use has not removed. Each template is displaced by each of
// trackShifts with the correction's own kriging (the matrix of a rigid
// shift δ applied to its coefficients, on its feature channels), and each
// spike's features are scored against every displaced copy (their cosine);
// the scores of a window's spikes are summed, and the displacement of the
// best sum, refined by a parabola through its neighbours, is the window's
// residual. Because the copies are displaced by the correction itself, a
// residual the correction leaves shows as that displacement, one for one.
type tracker struct {
	shifts []float64   // the candidate displacements δ (µm)
	tmpl   [][]float32 // per template, len(shifts) unit-norm copies of NC·P values
	minQ   float32
	sum    []float64
	n      int
}

// trackShifts are the candidate displacements (µm); trackMinAmplitude the
// least amplitude (whitened units) of a spike scored; trackMinSpikes the
// least number of scored spikes a window needs for its residual to be
// used; trackGain the share of a residual applied to the next window.
var trackShifts = []float64{-10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10}

const (
	trackMinAmplitude = 8
	trackMinSpikes    = 30
	trackGain         = 1.0
)

func newTracker(m *Model, channels func(k int) []int32) (*tracker, error) {
	tm := m.Templates
	C, P := tm.C, tm.P
	est := &motion.Estimate{Windows: len(trackShifts), Blocks: 1, Dshift: trackShifts, Yblk: []float64{0}}
	k, err := motion.NewCorrectorRule(nil, m.X, m.Y, motion.Params{Motion: kilosort.Motion{SigInterp: m.SigInterp}}, est, m.Rule)
	if err != nil {
		return nil, fmt.Errorf("%s: motion tracking: %w", m.Dir, err)
	}
	defer k.Close()
	t := &tracker{shifts: trackShifts, tmpl: make([][]float32, tm.N), minQ: trackMinAmplitude, sum: make([]float64, len(trackShifts))}
	for u := range tm.N {
		t.tmpl[u] = make([]float32, 0, len(trackShifts)*len(channels(u))*P)
	}
	for w := range trackShifts {
		M := k.Matrix(w)
		for u := range tm.N {
			ch := channels(u)
			start := len(t.tmpl[u])
			var norm float64
			for _, c := range ch {
				row := M[int(c)*C : (int(c)+1)*C]
				for p := range P {
					var v float64
					for j, mv := range row {
						if mv != 0 {
							v += float64(mv) * float64(tm.U[(u*C+j)*P+p])
						}
					}
					norm += v * v
					t.tmpl[u] = append(t.tmpl[u], float32(v))
				}
			}
			if norm > 0 {
				s := float32(1 / math.Sqrt(norm))
				for i := start; i < len(t.tmpl[u]); i++ {
					t.tmpl[u][i] *= s
				}
			}
		}
	}
	return t, nil
}

// add scores one spike of template k, amplitude q, with features f (the
// matching's, on the template's feature channels).
func (t *tracker) add(k int32, q float32, f []float32) {
	if q < t.minQ {
		return
	}
	var ff float64
	for _, v := range f {
		ff += float64(v) * float64(v)
	}
	if !(ff > 0) {
		return
	}
	inv := 1 / math.Sqrt(ff)
	n := len(f)
	tk := t.tmpl[k]
	for d := range t.shifts {
		var s float64
		for i, v := range tk[d*n : (d+1)*n] {
			s += float64(v) * float64(f[i])
		}
		t.sum[d] += s * inv
	}
	t.n++
}

// residual returns the displacement (µm) of the spikes scored since the
// last call (ok false if fewer than trackMinSpikes) and forgets them.
func (t *tracker) residual() (float64, bool) {
	n := t.n
	t.n = 0
	s := t.sum
	defer clear(t.sum)
	if n < trackMinSpikes {
		return 0, false
	}
	b := 0
	for d := range s {
		if s[d] > s[b] {
			b = d
		}
	}
	r := t.shifts[b]
	if b > 0 && b < len(s)-1 {
		den := s[b-1] - 2*s[b] + s[b+1]
		if den < 0 {
			r += 0.5 * (s[b-1] - s[b+1]) / den * (t.shifts[b+1] - t.shifts[b])
		}
	}
	return r, true
}

// forget drops the scores gathered so far (those measured with an earlier
// window's shifts).
func (t *tracker) forget() {
	t.n = 0
	clear(t.sum)
}
