package motion

import (
	"context"
	"fmt"
	"math"

	"dspk/compute"
)

// Estimate is a motion estimate: the shift of every window and block.
type Estimate struct {
	// Windows and Blocks are the estimate's sizes; Blocks = 2·nblocks − 1.
	Windows, Blocks int
	// Dshift holds Kilosort's dshift, window-major: Dshift[w*Blocks+j] is
	// the shift in µm of block j in window w. A positive shift means the
	// window's content had to move to greater depths to match the
	// reference: the correction reads the data at depth y − shift.
	Dshift []float64
	// Yblk holds the depth in µm of each block (Kilosort's yblk: the mean
	// of the blocks' bin depths, which Kilosort puts one bin, 5 µm, below
	// the bins' centres; reproduced).
	Yblk []float64
	// Spikes holds the detections binned per window.
	Spikes []int
}

// Shift returns the shift in µm of window w at each depth of y (Kilosort4's
// rule, ../shared/docs/kilosort4-sort.md §3.4): the window's one shift if
// Blocks == 1, else the linear interpolation of (Yblk, the window's
// shifts) at y, extrapolated linearly beyond the outer blocks. dst
// receives the shifts (it is allocated if too short) and is returned.
func (e *Estimate) Shift(dst []float64, w int, y []float64) []float64 {
	if cap(dst) < len(y) {
		dst = make([]float64, len(y))
	}
	dst = dst[:len(y)]
	d := e.Dshift[w*e.Blocks : (w+1)*e.Blocks]
	if e.Blocks == 1 {
		for i := range dst {
			dst[i] = d[0]
		}
		return dst
	}
	for i, v := range y {
		k := 0
		for k < e.Blocks-2 && v > e.Yblk[k+1] {
			k++
		}
		x0, x1 := e.Yblk[k], e.Yblk[k+1]
		dst[i] = d[k] + (v-x0)*(d[k+1]-d[k])/(x1-x0)
	}
	return dst
}

// Estimator estimates the motion of a recording from its first detection
// pass. It is built once per recording by [NewEstimator]; each window's
// detections are binned by [Estimator.Add] (or [Estimator.AddDevice] on a
// CUDA device, from spikes already there), in any order, and
// [Estimator.Estimate] returns the estimate. The steps
// (../shared/docs/kilosort4-sort.md §3.1–3.3):
//
//  1. per window t a histogram F[t] of Y depth bins of binning_depth µm
//     from y0 = min(yc) − 1 by 20 amplitude columns (log10 scale from
//     Th_universal to 99), F = log2(1 + count), float64;
//  2. G[t] = F[t] minus its mean over depth per column; reference R =
//     G[min(300, ⌊windows/2⌋)];
//  3. ten rigid iterations: for shifts s = −15…15 bins the score
//     mean over cells of roll(G[t], s)·R (circular in depth); the first
//     maximiser s* is applied (rolls G[t]) in the first nine, and R
//     becomes the mean of the rolled G;
//  4. per block j (2·nblocks − 1 blocks of L = ⌊Y/nblocks⌋ bins,
//     half-overlapping) and s = −5…5 the score of G[t] rolled inside the
//     block against R; these scores e[s, t, j] are smoothed by a 3-D
//     Gaussian (scipy's gaussian_filter: reflect, radius ⌊4σ + 0.5⌋,
//     normalised taps);
//  5. the sub-bin shift f = the first maximiser over w = −5, −4.9, …, 5 of
//     Σ_s exp(−(s − w)²/2)·e[s, t, j]; dshift = binning_depth·(rigid + f).
//
// Scores are float64 on both back ends (Kilosort4 computes step 3 in
// float32) and summed in one fixed order ([scoreLanes]), so they are the
// same bits on the CPU and the GPU and from run to run; everything after
// them runs on the host for both. dshift is therefore identical between
// back ends, near-ties of the argmaxes included (first maximiser).
//
// Deliberate deviations from Kilosort4, for windows without detections
// (Kilosort4 registers them to −675 µm): the reference is the non-empty
// window nearest to min(300, ⌊windows/2⌋) (the lower one on a tie), and an
// empty window takes the shifts interpolated linearly between the nearest
// non-empty windows before and after it (the nearest one's at the ends).
// Depths outside the histogram fall in its first or last bin and
// amplitudes below Th_universal in the first column (Kilosort4's pass 1
// emits neither).
//
// An Estimator is not safe for concurrent use.
type Estimator struct {
	dev     *compute.Device
	p       Params
	g       *geometry
	windows int
	counts  []uint32 // [windows][Y][AmpBins] on the host
	spikes  []int    // per window, from Add
	gpu     *cudaEstimator
}

// NewEstimator returns an estimator on dev (nil means the CPU) for a
// probe whose sites lie at depths yc (µm) and a recording of windows
// windows. It returns an error if windows < MinWindows, yc is empty or
// not finite, p's values are out of range, or nblocks is larger than the
// probe allows (blocks of fewer than MinBlockRows depth bins); on a CUDA
// device also if the device fails. Call Close when done.
func NewEstimator(dev *compute.Device, yc []float64, windows int, p Params) (*Estimator, error) {
	g, err := newGeometry(yc, p)
	if err != nil {
		return nil, err
	}
	if windows < MinWindows {
		return nil, fmt.Errorf("motion: %d windows: estimating motion needs at least %d (the recording is shorter than one batch)", windows, MinWindows)
	}
	e := &Estimator{dev: dev, p: p, g: g, windows: windows,
		counts: make([]uint32, windows*g.rows*AmpBins), spikes: make([]int, windows)}
	if dev != nil && dev.Kind() == compute.CUDA {
		if e.gpu, err = newCUDAEstimator(dev, g, windows, p); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Rows returns Y, the depth bins of the histograms.
func (e *Estimator) Rows() int { return e.g.rows }

// Add bins the detections of window w: their depths y (µm) and
// amplitudes amp (Kilosort's As, whitened SD), in any order and from any
// number of calls. It returns an error naming the window and spike if w is
// out of range, the lengths differ, or a value is not finite.
func (e *Estimator) Add(w int, y, amp []float32) error {
	if w < 0 || w >= e.windows {
		return fmt.Errorf("motion: Add: window %d of %d", w, e.windows)
	}
	if len(y) != len(amp) {
		return fmt.Errorf("motion: Add: window %d: %d depths and %d amplitudes", w, len(y), len(amp))
	}
	for i := range y {
		if !finite32(y[i]) || !finite32(amp[i]) {
			return fmt.Errorf("motion: Add: window %d, spike %d: depth %v, amplitude %v", w, i, y[i], amp[i])
		}
	}
	h := e.counts[w*e.g.rows*AmpBins : (w+1)*e.g.rows*AmpBins]
	for i := range y {
		h[e.g.row(y[i])*AmpBins+ampCol(amp[i], e.p.ThUniversal)]++
	}
	e.spikes[w] += len(y)
	return nil
}

func finite32(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// Estimate registers the windows binned so far and returns the estimate.
// It returns an error if fewer than MinSpikesPerWindow detections per
// window were binned on average, or if the device fails. It may be called
// again after more Adds.
func (e *Estimator) Estimate() (*Estimate, error) {
	return e.EstimateContext(context.Background())
}

// EstimateContext is [Estimator.Estimate] stopping with the context's
// cause once ctx is done: the pairwise registration checks it between
// pairs and between its solves (the registration of an hour's windows
// takes seconds).
func (e *Estimator) EstimateContext(ctx context.Context) (*Estimate, error) {
	if e.gpu != nil {
		if err := e.gpu.collect(e.counts, e.spikes); err != nil {
			return nil, err
		}
	}
	total := 0
	for _, n := range e.spikes {
		total += n
	}
	if need := MinSpikesPerWindow * e.windows; total < need {
		return nil, fmt.Errorf("motion: too few spikes to estimate motion: %d detections in %d windows; it needs at least %d per window on average (%d)",
			total, e.windows, MinSpikesPerWindow, need)
	}
	G := histograms(e.counts, e.windows, e.g.rows)
	var sc scorer = cpuScorer{G: G, nb: e.windows, rows: e.g.rows}
	if e.gpu != nil && e.p.Registration == RegisterKilosort {
		if err := e.gpu.setG(G); err != nil {
			return nil, err
		}
		sc = e.gpu
	}
	var d []float64
	var err error
	if e.p.Registration == RegisterPairwise {
		d, err = registerPairwise(ctx, G, e.spikes, e.g, e.p.Pairwise)
	} else {
		d, err = register(sc, G, e.spikes, e.g, e.p)
	}
	if err != nil {
		return nil, err
	}
	sp := make([]int, e.windows)
	copy(sp, e.spikes)
	return &Estimate{Windows: e.windows, Blocks: len(e.g.starts), Dshift: d, Yblk: append([]float64(nil), e.g.yblk...), Spikes: sp}, nil
}

// Close releases the estimator's device memory.
func (e *Estimator) Close() error {
	if e.gpu != nil {
		err := e.gpu.close()
		e.gpu = nil
		return err
	}
	return nil
}

// histograms returns G: per window log2(1 + count) minus its mean over
// the rows, per column, [windows][rows][AmpBins] float64.
func histograms(counts []uint32, nb, rows int) []float64 {
	G := make([]float64, len(counts))
	for i, c := range counts {
		G[i] = math.Log2(1 + float64(c))
	}
	var mean [AmpBins]float64
	for t := range nb {
		h := G[t*rows*AmpBins : (t+1)*rows*AmpBins]
		mean = [AmpBins]float64{}
		for r := range rows {
			for c := range AmpBins {
				mean[c] += h[r*AmpBins+c]
			}
		}
		for c := range mean {
			mean[c] /= float64(rows)
		}
		for r := range rows {
			for c := range AmpBins {
				h[r*AmpBins+c] -= mean[c]
			}
		}
	}
	return G
}

// scorer computes registration scores: for each block j (rows
// [starts[j], starts[j]+l)) and shift s ∈ [−smax, smax], per window t,
// out[(j*(2smax+1)+s+smax)*nb+t] = the mean over the block's cells of
// G[t] rolled rigidly by S[t] (circular over all rows) then by s inside
// the block (circular over the block), times R, summed in the order of
// [scoreLanes]. Every implementation returns the same bits.
type scorer interface {
	scores(out []float64, starts []int, l, smax int, S []int32, R []float64) error
}

// scoreLanes fixes the order in which both back ends sum a score, so that
// the scores, and so the argmaxes and dshift, are the same bits on the
// CPU and the GPU and from run to run. The block's cells are numbered
// i = (r − start)·AmpBins + k in R's row order r, column k; cell i goes to
// lane i mod scoreLanes; each lane is summed over its cells in increasing
// i from 0, each product rounded to float64 and then added (never fused
// into a multiply-add: Go may fuse x*y + z on some machines and NVRTC does
// by default, so both are told not to); then the lanes are summed by a fixed pairwise tree, for o = 128, 64, …,
// 1: lane[q] += lane[q+o] for q < o; the score is lane[0] divided by the
// block's cell count. On the GPU a lane is a thread of the 256-thread
// block (the loads are coalesced) and the tree is the block reduction;
// nothing depends on scheduling (no atomics).
const scoreLanes = 256

// mod returns a mod n in [0, n).
func mod(a, n int) int {
	a %= n
	if a < 0 {
		a += n
	}
	return a
}
