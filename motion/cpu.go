package motion

import "dspk/internal/par"

// cpuScorer computes the registration scores on the CPU, windows spread
// over GOMAXPROCS goroutines; each score is summed in the fixed order of
// [scoreLanes], the order of the CUDA kernel, so both back ends give the
// same bits.
type cpuScorer struct {
	G        []float64
	nb, rows int
}

func (c cpuScorer) scores(out []float64, starts []int, l, smax int, S []int32, R []float64) error {
	nw := par.Workers(c.nb)
	par.Run(nw, func(w int) {
		var lanes [scoreLanes]float64
		for t := w; t < c.nb; t += nw {
			c.window(out, &lanes, t, starts, l, smax, S[t], R)
		}
	})
	return nil
}

// window computes window t's scores, with lanes as scratch.
func (c cpuScorer) window(out []float64, lanes *[scoreLanes]float64, t int, starts []int, l, smax int, st int32, R []float64) {
	cells := c.rows * AmpBins
	h := c.G[t*cells : (t+1)*cells]
	ns := 2*smax + 1
	norm := float64(l * AmpBins)
	for j, b := range starts {
		for si := range ns {
			s := si - smax
			*lanes = [scoreLanes]float64{}
			q := 0 // the lane of cell (r − b)·AmpBins + k
			for r := b; r < b+l; r++ {
				src := mod(b+mod(r-b-s, l)-int(st), c.rows) * AmpBins
				g := (*[AmpBins]float64)(h[src : src+AmpBins])
				rr := (*[AmpBins]float64)(R[r*AmpBins : (r+1)*AmpBins])
				if q+AmpBins <= scoreLanes {
					addProducts((*[AmpBins]float64)(lanes[q:q+AmpBins]), g, rr)
					q = (q + AmpBins) & (scoreLanes - 1)
					continue
				}
				for k := range AmpBins { // the row wraps around the lanes
					lanes[q] += float64(g[k] * rr[k])
					q = (q + 1) & (scoreLanes - 1)
				}
			}
			out[(j*ns+si)*c.nb+t] = sumLanes(lanes) / norm
		}
	}
}

// addProducts adds g[k]·rr[k], each product rounded (never fused), to
// ln[k].
func addProducts(ln, g, rr *[AmpBins]float64) {
	for k := range AmpBins {
		ln[k] += float64(g[k] * rr[k])
	}
}

// sumLanes returns the lanes' sum by the fixed pairwise tree of
// [scoreLanes] (it overwrites the lanes).
func sumLanes(lanes *[scoreLanes]float64) float64 {
	for o := scoreLanes / 2; o > 0; o >>= 1 {
		for q := range o {
			lanes[q] += lanes[q+o]
		}
	}
	return lanes[0]
}
