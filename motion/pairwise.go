package motion

import (
	"context"
	"dspk/internal/par"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"
)

// Pairwise registration: the decentralised estimate (the method of
// DREDge, Windolf et al. 2023, written here from its description).
// Kilosort4 registers every window to one reference built by iterating
// from the middle window; a window whose histogram resembles the reference
// at a wrong shift (a repeating pattern of units, a window of few spikes)
// is registered there, and nothing corrects it. Here every pair of windows
// within a time horizon is registered against each other: the
// displacement D_ij that best aligns window i to window j, with the
// correlation c_ij it reaches. The windows' displacements p then solve the
// weighted least squares
//
//	min_p Σ_ij w_ij (p_i − p_j − D_ij)² + λ Σ_t (p_{t+1} − p_t)²
//
// in which each window is tied to many others, and a pair whose
// displacement disagrees with the rest is down-weighted by a robust
// (Tukey bisquare) reweighting of the residuals. The displacements of the
// pairs come from the cross-correlation of the windows' depth × amplitude
// histograms along depth (by FFT, zero-padded, so no shift wraps around)
// with a parabolic sub-bin refinement.

// PairwiseParams are the settings of the pairwise registration.
type PairwiseParams struct {
	// MaxShiftUM is the largest displacement between two windows that is
	// considered, in µm.
	MaxShiftUM float64
	// HorizonWindows is the largest distance in windows between the two
	// windows of a pair (0: every pair).
	HorizonWindows int
	// MinCorr is the correlation below which a pair carries no weight;
	// a pair's weight is c_ij − MinCorr.
	MinCorr float64
	// Smoothness is λ over the mean weight a window receives from its
	// pairs: the temporal prior ties consecutive windows with
	// Smoothness × that mean. It carries windows without spikes; larger
	// values also spread a sudden step of the probe over the windows
	// around it (0.5 spreads a 20-µm step over five windows).
	Smoothness float64
	// CoarseSigmaUM, if > 0, first registers the pairs on histograms
	// smoothed along depth by a Gaussian of this σ in µm and solves them;
	// each window is then tied to that coarse solution with weight Anchor
	// in the solve of the unsmoothed pairs, which leaves out the pairs
	// whose displacement differs from the coarse one by more than σ.
	// Why: a spike's position is biased by a few µm in a pattern that
	// repeats with the sites (40 µm on NP1), so a unit 20 µm away gives a
	// histogram whose sharp peaks no longer match; the pairs across such
	// a step correlate below MinCorr and nothing else tells the two sides
	// apart. The smoothed pairs bridge the step; the sharp pairs keep
	// their precision where they exist.
	CoarseSigmaUM float64
	// Anchor is the weight, over the mean weight a window receives, that
	// ties each window to the coarse solution.
	Anchor float64
	// RobustIters is the number of reweighting rounds after the first
	// solve.
	RobustIters int
}

// DefaultPairwiseParams returns dspk's defaults for the pairwise
// registration (docs/motion.md, "Pairwise registration", has their
// measurements).
func DefaultPairwiseParams() PairwiseParams {
	return PairwiseParams{MaxShiftUM: 100, HorizonWindows: 150, MinCorr: 0.1, Smoothness: 0.05, CoarseSigmaUM: 10, Anchor: 0.1, RobustIters: 3}
}

// pairShift is one registered pair of windows.
type pairShift struct {
	i, j int
	d    float64 // displacement in bins: window i rolled by d aligns with j
	c    float64 // normalised correlation at d
}

// registerPairwise returns dshift [windows][blocks] in µm by pairwise
// registration of the histograms G [nb][rows][AmpBins] within each block
// of g; windows without spikes take no part in the pairs and follow the
// temporal prior. It stops with ctx's cause once ctx is done.
func registerPairwise(ctx context.Context, G []float64, spikes []int, g *geometry, pp PairwiseParams) ([]float64, error) {
	nb := len(spikes)
	B := len(g.starts)
	d := make([]float64, nb*B)
	for b := range B {
		lo, l := g.starts[b], g.l
		if B == 1 {
			lo, l = 0, g.rows
		}
		smax := min(int(math.Ceil(pp.MaxShiftUM/g.dy)), l-1)
		var anchor []float64
		if pp.CoarseSigmaUM > 0 {
			coarse, err := solvePairs(ctx, blockPairs(ctx, G, spikes, g.rows, lo, l, smax, pp.HorizonWindows, pp.CoarseSigmaUM/g.dy), nb, pp, nil, 0)
			if err != nil {
				return nil, fmt.Errorf("motion: pairwise registration of block %d: %w", b, err)
			}
			anchor = coarse
		}
		pairs := blockPairs(ctx, G, spikes, g.rows, lo, l, smax, pp.HorizonWindows, 0)
		p, err := solvePairs(ctx, pairs, nb, pp, anchor, pp.CoarseSigmaUM/g.dy)
		if err != nil {
			return nil, fmt.Errorf("motion: pairwise registration of block %d: %w", b, err)
		}
		for t := range nb {
			d[t*B+b] = g.dy * p[t]
		}
	}
	return d, nil
}

// blockPairs registers every pair of non-empty windows at most horizon
// apart (0: all) on the rows [lo, lo+l) of their histograms, with shifts
// up to smax bins, on all cores, the histograms smoothed along depth by
// σ sig bins first if sig > 0. Once ctx is done it registers no more pairs
// (the caller's solve then reports ctx's cause).
func blockPairs(ctx context.Context, G []float64, spikes []int, rows, lo, l, smax, horizon int, sig float64) []pairShift {
	nb := len(spikes)
	n := 1
	for n < l+smax+1 {
		n *= 2
	}
	cells := rows * AmpBins
	// Each window's normalised block, column by column, in frequency.
	spec := make([][]complex128, nb) // [AmpBins][n/2+1] per window
	workers := par.Workers(nb)
	ffts := make([]*fourier.FFT, workers)
	for w := range ffts {
		ffts[w] = fourier.NewFFT(n)
	}
	cols := make([][]float64, workers)
	par.Each(nb, workers, func(w, t int) {
		if spikes[t] == 0 {
			return
		}
		h := G[t*cells : (t+1)*cells]
		var ss float64
		for r := lo; r < lo+l; r++ {
			for c := range AmpBins {
				ss += h[r*AmpBins+c] * h[r*AmpBins+c]
			}
		}
		if ss == 0 {
			return
		}
		if cols[w] == nil {
			cols[w] = make([]float64, n)
		}
		col, inv := cols[w], 1/math.Sqrt(ss)
		s := make([]complex128, AmpBins*(n/2+1))
		for c := range AmpBins {
			clear(col)
			for r := range l {
				col[r] = h[(lo+r)*AmpBins+c] * inv
			}
			ffts[w].Coefficients(s[c*(n/2+1):(c+1)*(n/2+1)], col)
		}
		if sig > 0 {
			smoothSpectra(s, n, sig)
		}
		spec[t] = s
	})

	perRow := make([][]pairShift, nb)
	prods, ccs := make([][]complex128, workers), make([][]float64, workers)
	for w := range workers {
		prods[w], ccs[w] = make([]complex128, n/2+1), make([]float64, n)
	}
	par.Each(nb, workers, func(w, i int) {
		if spec[i] == nil || ctx.Err() != nil {
			return
		}
		end := nb
		if horizon > 0 {
			end = min(nb, i+horizon+1)
		}
		for j := i + 1; j < end; j++ {
			if spec[j] != nil {
				perRow[i] = append(perRow[i], registerPair(ffts[w], prods[w], ccs[w], spec[i], spec[j], i, j, smax))
			}
		}
	})
	var out []pairShift
	for _, r := range perRow {
		out = append(out, r...)
	}
	return out
}

// smoothSpectra filters each column's spectrum of s ([AmpBins][n/2+1], of
// n real values) by a Gaussian of σ sig bins along depth and scales the
// whole to unit norm again (Parseval), so that correlations of smoothed
// windows stay in [−1, 1].
func smoothSpectra(s []complex128, n int, sig float64) {
	h := n/2 + 1
	var e float64
	for c := range AmpBins {
		sc := s[c*h : (c+1)*h]
		for k := range sc {
			a := 2 * math.Pi * float64(k) * sig / float64(n)
			sc[k] *= complex(math.Exp(-0.5*a*a), 0)
			m := real(sc[k])*real(sc[k]) + imag(sc[k])*imag(sc[k])
			if k == 0 || k == n/2 {
				e += m
			} else {
				e += 2 * m
			}
		}
	}
	if e == 0 {
		return
	}
	inv := complex(1/math.Sqrt(e/float64(n)), 0)
	for k := range s {
		s[k] *= inv
	}
}

// registerPair returns the displacement of windows i and j from their
// spectra a and b ([AmpBins][n/2+1]): the argmax over |s| ≤ smax of the
// cross-correlation Σ_c Σ_m a_c[m]·b_c[m+s] (window i rolled by s aligns
// with j), refined by a parabola through its neighbours, and the
// correlation there. prod and cc are scratch of n/2+1 and n elements.
func registerPair(fft *fourier.FFT, prod []complex128, cc []float64, a, b []complex128, i, j, smax int) pairShift {
	n := len(cc)
	clear(prod)
	for c := range AmpBins {
		ac := a[c*(n/2+1) : (c+1)*(n/2+1)]
		bc := b[c*(n/2+1) : (c+1)*(n/2+1)]
		for k := range prod {
			prod[k] += complex(real(ac[k]), -imag(ac[k])) * bc[k]
		}
	}
	fft.Sequence(cc, prod) // n times the circular cross-correlation
	best, bs := math.Inf(-1), 0
	for s := -smax; s <= smax; s++ {
		if v := cc[(s+n)%n]; v > best {
			best, bs = v, s
		}
	}
	d := float64(bs)
	if bs > -smax && bs < smax {
		ym, yp := cc[(bs-1+n)%n], cc[(bs+1+n)%n]
		if den := ym - 2*best + yp; den < 0 {
			d += 0.5 * (ym - yp) / den
		}
	}
	return pairShift{i: i, j: j, d: d, c: best / float64(n)}
}

// solvePairs solves the weighted least squares of the pairs for the
// windows' displacements (in bins), with the temporal prior and the robust
// reweighting of pp and, if anchor is not nil, each window tied to
// anchor's value for it with weight pp.Anchor and the pairs whose
// displacement differs from anchor's by more than gate bins left out; it
// returns them with their median at 0, or ctx's cause once ctx is done
// (checked before each solve).
func solvePairs(ctx context.Context, pairs []pairShift, nb int, pp PairwiseParams, anchor []float64, gate float64) ([]float64, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	w := make([]float64, len(pairs))
	var wsum float64
	for k, q := range pairs {
		w[k] = max(0, q.c-pp.MinCorr)
		if anchor != nil && math.Abs(q.d-(anchor[q.i]-anchor[q.j])) > gate {
			w[k] = 0
		}
		wsum += w[k]
	}
	if wsum == 0 {
		if anchor != nil {
			return slices.Clone(anchor), nil
		}
		return make([]float64, nb), nil
	}
	lambda := pp.Smoothness * 2 * wsum / float64(nb)
	var p []float64
	robust := make([]float64, len(pairs))
	for k := range robust {
		robust[k] = 1
	}
	for it := 0; it <= pp.RobustIters; it++ {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		A := mat.NewSymDense(nb, nil)
		rhs := make([]float64, nb)
		add := func(i, j int, v, dij float64) {
			A.SetSym(i, i, A.At(i, i)+v)
			A.SetSym(j, j, A.At(j, j)+v)
			A.SetSym(i, j, A.At(i, j)-v)
			rhs[i] += v * dij
			rhs[j] -= v * dij
		}
		for k, q := range pairs {
			if v := w[k] * robust[k]; v > 0 {
				add(q.i, q.j, v, q.d)
			}
		}
		for t := 0; t+1 < nb; t++ {
			add(t, t+1, lambda, 0)
		}
		if anchor != nil {
			mu := pp.Anchor * 2 * wsum / float64(nb)
			for t := range nb {
				A.SetSym(t, t, A.At(t, t)+mu)
				rhs[t] += mu * anchor[t]
			}
		}
		// The displacements are defined up to a constant: a small ridge
		// fixes it (the median is set to 0 below).
		ridge := 1e-9 * (lambda + wsum/float64(nb))
		for t := range nb {
			A.SetSym(t, t, A.At(t, t)+ridge)
		}
		var ch mat.Cholesky
		if !ch.Factorize(A) {
			return nil, fmt.Errorf("the normal equations of %d windows are singular", nb)
		}
		x := mat.NewVecDense(nb, nil)
		if err := ch.SolveVecTo(x, mat.NewVecDense(nb, rhs)); err != nil {
			return nil, err
		}
		p = x.RawVector().Data
		if it == pp.RobustIters {
			break
		}
		res := make([]float64, 0, len(pairs))
		for k, q := range pairs {
			if w[k] > 0 {
				res = append(res, math.Abs(p[q.i]-p[q.j]-q.d))
			}
		}
		slices.Sort(res)
		scale := max(0.5, 1.4826*res[len(res)/2]) * 4.685
		for k, q := range pairs {
			r := (p[q.i] - p[q.j] - q.d) / scale
			if math.Abs(r) >= 1 {
				robust[k] = 0
			} else {
				robust[k] = (1 - r*r) * (1 - r*r)
			}
		}
	}
	med := slices.Clone(p)
	slices.Sort(med)
	m := med[nb/2]
	for t := range p {
		p[t] -= m
	}
	return p, nil
}
