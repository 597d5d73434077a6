package motion

import "math"

// register runs the rigid iterations, the block scores, their smoothing
// and the sub-bin refinement (Estimator's steps 2–5) with sc computing
// the scores, and returns dshift [windows][blocks] in µm. G is
// [nb][rows][AmpBins]; spikes, per window, decides the empty windows.
func register(sc scorer, G []float64, spikes []int, g *geometry, p Params) ([]float64, error) {
	nb, rows := len(spikes), g.rows
	cells := rows * AmpBins
	ref := refWindow(spikes)
	R := make([]float64, cells)
	copy(R, G[ref*cells:(ref+1)*cells])
	S := make([]int32, nb)
	const ns = 2*RigidShifts + 1
	sc0 := make([]float64, ns*nb)
	for it := range RigidIters {
		if err := sc.scores(sc0, []int{0}, rows, RigidShifts, S, R); err != nil {
			return nil, err
		}
		if it == RigidIters-1 {
			break // the last iteration's scores are not applied
		}
		for t := range nb {
			best, bs := math.Inf(-1), 0
			for s := range ns {
				if v := sc0[s*nb+t]; v > best {
					best, bs = v, s
				}
			}
			S[t] += int32(bs - RigidShifts)
		}
		meanAligned(R, G, S, nb, rows)
	}
	B := len(g.starts)
	const nf = 2*BlockShifts + 1
	raw := make([]float64, B*nf*nb)
	if err := sc.scores(raw, g.starts, g.l, BlockShifts, S, R); err != nil {
		return nil, err
	}
	// e[s][t][j], the array order of Kilosort4's block scores.
	e := make([]float64, nf*nb*B)
	for j := range B {
		for s := range nf {
			for t := range nb {
				e[(s*nb+t)*B+j] = raw[(j*nf+s)*nb+t]
			}
		}
	}
	e = gaussian3(e, [3]int{nf, nb, B}, p.DriftSmoothing)
	d := make([]float64, nb*B)
	var w [SubBins]float64
	for k := range w {
		w[k] = float64(k)*0.1 - BlockShifts
	}
	w[SubBins-1] = BlockShifts
	var kern [SubBins][nf]float64
	for k := range w {
		for s := range nf {
			x := float64(s-BlockShifts) - w[k]
			kern[k][s] = math.Exp(-x * x / 2)
		}
	}
	for t := range nb {
		for j := range B {
			best, bk := math.Inf(-1), 0
			for k := range w {
				var v float64
				for s := range nf {
					v += kern[k][s] * e[(s*nb+t)*B+j]
				}
				if v > best {
					best, bk = v, k
				}
			}
			d[t*B+j] = g.dy * (float64(S[t]) + w[bk])
		}
	}
	fillEmpty(d, spikes, B)
	return d, nil
}

// refWindow returns the reference window: min(RefMax, ⌊nb/2⌋), or the
// non-empty window nearest to it (the lower on a tie; the estimate needs
// spikes, so one exists).
func refWindow(spikes []int) int {
	nb := len(spikes)
	r := min(RefMax, nb/2)
	for d := 0; d < nb; d++ {
		if r-d >= 0 && spikes[r-d] > 0 {
			return r - d
		}
		if r+d < nb && spikes[r+d] > 0 {
			return r + d
		}
	}
	return r
}

// meanAligned sets R to the mean over windows of G[t] rolled by S[t]
// along the rows: R[r] = mean_t G[t, (r − S[t]) mod rows].
func meanAligned(R, G []float64, S []int32, nb, rows int) {
	clear(R)
	cells := rows * AmpBins
	for t := range nb {
		h := G[t*cells : (t+1)*cells]
		for r := range rows {
			src := mod(r-int(S[t]), rows) * AmpBins
			dst := R[r*AmpBins : (r+1)*AmpBins]
			for c := range dst {
				dst[c] += h[src+c]
			}
		}
	}
	for i := range R {
		R[i] /= float64(nb)
	}
}

// fillEmpty gives each window without spikes the shifts interpolated
// linearly between the nearest windows with spikes before and after it
// (the nearest one's beyond the first or last).
func fillEmpty(d []float64, spikes []int, B int) {
	nb := len(spikes)
	prev := -1
	for t := 0; t <= nb; t++ {
		if t < nb && spikes[t] == 0 {
			continue
		}
		for u := prev + 1; u < t; u++ {
			for j := range B {
				switch {
				case prev < 0 && t == nb:
					d[u*B+j] = 0
				case prev < 0:
					d[u*B+j] = d[t*B+j]
				case t == nb:
					d[u*B+j] = d[prev*B+j]
				default:
					f := float64(u-prev) / float64(t-prev)
					d[u*B+j] = d[prev*B+j] + f*(d[t*B+j]-d[prev*B+j])
				}
			}
		}
		prev = t
	}
}

// gaussian3 filters the 3-D array x of shape n (row-major) along each
// axis by a Gaussian of σ sig[axis] as scipy.ndimage.gaussian_filter
// does: mode reflect (… b a | a b …), radius ⌊4σ + 0.5⌋, taps
// exp(−k²/2σ²) normalised to sum 1; σ = 0 leaves the axis alone. The
// axes are filtered in order 0, 1, 2.
func gaussian3(x []float64, n [3]int, sig [3]float64) []float64 {
	out := make([]float64, len(x))
	for ax := range 3 {
		if sig[ax] <= 0 {
			continue
		}
		rad := int(4*sig[ax] + 0.5)
		taps := make([]float64, 2*rad+1)
		var sum float64
		for k := -rad; k <= rad; k++ {
			taps[k+rad] = math.Exp(-0.5 * float64(k*k) / (sig[ax] * sig[ax]))
			sum += taps[k+rad]
		}
		for k := range taps {
			taps[k] /= sum
		}
		stride := 1
		for a := ax + 1; a < 3; a++ {
			stride *= n[a]
		}
		m := n[ax]
		outer := len(x) / (m * stride)
		for o := range outer {
			for in := range stride {
				base := o*m*stride + in
				for i := range m {
					var v float64
					for k := -rad; k <= rad; k++ {
						v += taps[k+rad] * x[base+reflect(i+k, m)*stride]
					}
					out[base+i*stride] = v
				}
			}
		}
		x, out = out, x
	}
	return x
}

// reflect maps i into [0, n) by scipy's mode reflect (half-sample
// symmetric, period 2n).
func reflect(i, n int) int {
	i = mod(i, 2*n)
	if i >= n {
		i = 2*n - 1 - i
	}
	return i
}
