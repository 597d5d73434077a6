package sim

import (
	"fmt"
	"math"
	"sort"
)

// Motion is the true displacement of the tissue relative to the probe on a
// grid of times and probe depths: Disp[i*len(Depths)+j] is the
// displacement in µm at time Times[i] (s) of the tissue that is at probe
// depth Depths[j] (µm) at that time; positive means units appear at larger
// y. The field is Eulerian (indexed by where the tissue is on the probe
// now, as a motion estimate is), so a spike at time t seen at probe depth
// y came from depth y − At(t, y) at time 0. For rigid motion all columns
// are equal.
//
// Times are increasing and cover the recording; they are a regular grid
// with, for each sudden step, the sample before the step added, so that
// interpolating across a step stays within one sample of the truth.
// Depths are increasing.
type Motion struct {
	// Times are the grid times in seconds.
	Times []float64
	// Depths are the grid's probe depths in µm.
	Depths []float64
	// Disp is the displacement in µm, row-major len(Times)×len(Depths).
	Disp []float64
}

// At returns the displacement at time t (s) and probe depth y (µm),
// interpolated bilinearly on the grid; outside the grid it takes the value
// at the nearest edge.
func (m *Motion) At(t, y float64) float64 {
	i0, i1, a := bracket(m.Times, t)
	j0, j1, b := bracket(m.Depths, y)
	nD := len(m.Depths)
	v0 := (1-b)*m.Disp[i0*nD+j0] + b*m.Disp[i0*nD+j1]
	v1 := (1-b)*m.Disp[i1*nD+j0] + b*m.Disp[i1*nD+j1]
	return (1-a)*v0 + a*v1
}

// bracket returns the grid indices around x in the increasing grid g and
// the weight of the upper one, clamping x to the grid's range.
func bracket(g []float64, x float64) (lo, hi int, w float64) {
	n := len(g)
	if n == 1 || x <= g[0] {
		return 0, 0, 0
	}
	if x >= g[n-1] {
		return n - 1, n - 1, 0
	}
	hi = sort.SearchFloat64s(g, x) // g[hi-1] < x ≤ g[hi]
	lo = hi - 1
	return lo, hi, (x - g[lo]) / (g[hi] - g[lo])
}

// checkAxis checks that the grid axis g is finite and increasing.
func checkAxis(name string, g []float64) error {
	for i, x := range g {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s %d is %g", name, i, x)
		}
		if i > 0 && x <= g[i-1] {
			return fmt.Errorf("%s %d (%g) is not above %s %d (%g)", name, i, x, name, i-1, g[i-1])
		}
	}
	return nil
}

// checkDisp checks the displacements' count and values.
func (m *Motion) checkDisp() error {
	nT, nD := len(m.Times), len(m.Depths)
	switch {
	case nT == 0 || nD == 0:
		return fmt.Errorf("empty grid (%d times, %d depths)", nT, nD)
	case len(m.Disp) != nT*nD:
		return fmt.Errorf("%d displacements for %d times × %d depths", len(m.Disp), nT, nD)
	}
	for i, x := range m.Disp {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("displacement [%d, %d] is %g", i/nD, i%nD, x)
		}
	}
	return nil
}
