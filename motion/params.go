package motion

import (
	"fmt"
	"math"

	"dspk/kilosort"
)

// Params are the motion settings, under Kilosort4's names
// (../shared/docs/kilosort4-sort.md §9): [kilosort.Motion] (nblocks,
// sig_interp, binning_depth, drift_smoothing) and the detection threshold.
// [Estimator] refuses NBlocks 0, Kilosort's "no correction", which is the
// caller's to handle.
type Params struct {
	kilosort.Motion
	// ThUniversal is Th_universal: the detection threshold, also the low
	// end of the amplitude axis of the histograms.
	ThUniversal float64
	// Registration is how the windows are registered: Kilosort4's
	// iterated reference (the zero value) or pairwise registration.
	Registration Registration
	// Pairwise holds the settings of pairwise registration.
	Pairwise PairwiseParams
}

// Registration names a way of registering the windows' histograms.
type Registration int

const (
	// RegisterKilosort registers every window to one reference, iterated
	// from the middle window, as Kilosort4 does.
	RegisterKilosort Registration = iota
	// RegisterPairwise registers every pair of windows within a horizon
	// and solves for all the displacements at once (pairwise.go).
	RegisterPairwise
)

// String returns the registration's name as the -registration flag takes it.
func (r Registration) String() string {
	switch r {
	case RegisterKilosort:
		return "kilosort"
	case RegisterPairwise:
		return "pairwise"
	}
	return fmt.Sprintf("Registration(%d)", int(r))
}

// ParseRegistration returns the registration named s ("kilosort" or
// "pairwise").
func ParseRegistration(s string) (Registration, error) {
	switch s {
	case "kilosort":
		return RegisterKilosort, nil
	case "pairwise":
		return RegisterPairwise, nil
	}
	return 0, fmt.Errorf("motion: registration %q: want kilosort or pairwise", s)
}

// DefaultParams returns Kilosort4's defaults ([kilosort.MotionDefaults]:
// nblocks 1, binning_depth 5, sig_interp 20, drift_smoothing
// [0.5, 0.5, 0.5]; Th_universal 9).
func DefaultParams() Params {
	return Params{Motion: kilosort.MotionDefaults(), ThUniversal: kilosort.Defaults().ThUniversal}
}

// Fixed constants of the estimate (hard-coded in Kilosort4).
const (
	// AmpBins is the number of amplitude columns of a histogram.
	AmpBins = 20
	// RigidShifts is the largest rigid shift tried per iteration, in bins.
	RigidShifts = 15
	// RigidIters is the number of rigid iterations (the last computes
	// scores only).
	RigidIters = 10
	// BlockShifts is the largest per-block shift, in bins.
	BlockShifts = 5
	// SubBins is the number of sub-bin candidates −5, −4.9, …, 5.
	SubBins = 101
	// RefMax caps the reference window's index: min(RefMax, ⌊windows/2⌋).
	RefMax = 300
	// Ridge is the kriging ridge added to Kxx's diagonal.
	Ridge = 0.01
	// ampCap caps amplitudes before the logarithm.
	ampCap = 99
)

// Limits of the estimate, checked by [NewEstimator] and [Estimator.Estimate].
const (
	// MinWindows is the fewest windows an estimate needs (a recording
	// shorter than one window has none). With one window the reference is
	// the window itself: its shift is 0 up to the sub-bin refinement.
	MinWindows = 1
	// MinBlockRows is the fewest depth bins a block may hold
	// (L = ⌊Y/nblocks⌋ ≥ 2·BlockShifts + 1 = 11 rows, 55 µm at 5 µm bins):
	// a block's ±5-bin circular roll must not wrap onto itself.
	MinBlockRows = 2*BlockShifts + 1
	// MinSpikesPerWindow is the fewest detections per window, on average
	// over the windows, that an estimate needs. A window's fingerprint is
	// a histogram of Y × 20 cells; with fewer than about 20 spikes per
	// window the scores are dominated by single spikes and the shifts are
	// noise (the simulator's sparse presets give hundreds per window).
	MinSpikesPerWindow = 20
)

// geometry is the binning of a probe: y0, Y, the block starts and their
// depths.
type geometry struct {
	y0, dy float64
	rows   int       // Y
	l      int       // block length L in rows
	starts []int     // B block starts
	yblk   []float64 // B block depths (mean of ysamp over the block)
}

// newGeometry checks p and the site depths yc and returns the binning.
func newGeometry(yc []float64, p Params) (*geometry, error) {
	if len(yc) == 0 {
		return nil, fmt.Errorf("motion: no site depths")
	}
	if !(p.BinningDepth > 0) || math.IsInf(p.BinningDepth, 0) {
		return nil, fmt.Errorf("motion: binning_depth %v µm is not positive", p.BinningDepth)
	}
	if !(p.ThUniversal > 0) || p.ThUniversal >= ampCap {
		return nil, fmt.Errorf("motion: Th_universal %v is not in (0, %d)", p.ThUniversal, ampCap)
	}
	for i, s := range p.DriftSmoothing {
		if !(s >= 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("motion: drift_smoothing[%d] = %v is not ≥ 0", i, s)
		}
	}
	if p.NBlocks < 1 {
		return nil, fmt.Errorf("motion: nblocks %d: estimating motion needs nblocks ≥ 1 (0 means no correction)", p.NBlocks)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, y := range yc {
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return nil, fmt.Errorf("motion: site %d has depth %v", i, y)
		}
		lo, hi = min(lo, y), max(hi, y)
	}
	g := &geometry{dy: p.BinningDepth, y0: lo - 1}
	g.rows = 1 + int(math.Ceil((hi-g.y0)/g.dy))
	g.l = g.rows / p.NBlocks
	if g.rows < MinBlockRows {
		return nil, fmt.Errorf("motion: the probe spans %d depth bins of %g µm; estimating motion needs at least %d (sites spanning more than %g µm)",
			g.rows, g.dy, MinBlockRows, float64(MinBlockRows-2)*g.dy-1)
	}
	if g.l < MinBlockRows {
		maxBlocks := g.rows / MinBlockRows
		return nil, fmt.Errorf("motion: nblocks %d is larger than the probe allows: its %d depth bins of %g µm give blocks of %d bins, fewer than %d (nblocks ≤ %d)",
			p.NBlocks, g.rows, g.dy, g.l, MinBlockRows, maxBlocks)
	}
	B := 2*p.NBlocks - 1
	g.starts = make([]int, B)
	g.yblk = make([]float64, B)
	for j := range B {
		var s float64
		if B > 1 {
			s = float64(j) * float64(g.rows-g.l) / float64(B-1)
		}
		g.starts[j] = int(math.RoundToEven(s))
		// ysamp[k] = y0 + Δ·k − Δ/2: one bin below the bin's centre, as
		// Kilosort4 has it (kilosort4-sort.md §3.1).
		var sum float64
		for k := g.starts[j]; k < g.starts[j]+g.l; k++ {
			sum += g.y0 + g.dy*float64(k) - g.dy/2
		}
		g.yblk[j] = sum / float64(g.l)
	}
	return g, nil
}

// row returns the depth bin of y: ⌊(y − y0)/Δ⌋, clamped to [0, Y).
func (g *geometry) row(y float32) int {
	v := (float64(y) - g.y0) / g.dy
	if !(v >= 0) {
		return 0
	}
	if v >= float64(g.rows) {
		return g.rows - 1
	}
	return int(v)
}

// ampCol returns the amplitude column of a: ⌊10⁻⁵ + 20·v⌋ with
// v = (log10 min(99, a) − log10 Th)/(2 − log10 Th), clamped to [0, 20).
func ampCol(a float32, th float64) int {
	lt := math.Log10(th)
	v := (math.Log10(math.Min(ampCap, float64(a))) - lt) / (2 - lt)
	c := 1e-5 + AmpBins*v
	if !(c >= 0) {
		return 0
	}
	if c >= AmpBins {
		return AmpBins - 1
	}
	return int(c)
}
