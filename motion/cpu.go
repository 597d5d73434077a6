package motion

import (
	"runtime"
	"sync"
)

// cpuScorer computes the registration scores on the CPU, windows spread
// over GOMAXPROCS goroutines; each score is one float64 sum over the
// block's rows then columns, in order.
type cpuScorer struct {
	G        []float64
	nb, rows int
}

func (c cpuScorer) scores(out []float64, starts []int, l, smax int, S []int32, R []float64) error {
	nw := min(runtime.GOMAXPROCS(0), c.nb)
	var wg sync.WaitGroup
	for w := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := w; t < c.nb; t += nw {
				c.window(out, t, starts, l, smax, S[t], R)
			}
		}()
	}
	wg.Wait()
	return nil
}

// window computes window t's scores.
func (c cpuScorer) window(out []float64, t int, starts []int, l, smax int, st int32, R []float64) {
	cells := c.rows * AmpBins
	h := c.G[t*cells : (t+1)*cells]
	ns := 2*smax + 1
	norm := float64(l * AmpBins)
	for j, b := range starts {
		for si := range ns {
			s := si - smax
			var sum float64
			for r := b; r < b+l; r++ {
				src := mod(b+mod(r-b-s, l)-int(st), c.rows) * AmpBins
				g := h[src : src+AmpBins]
				rr := R[r*AmpBins : (r+1)*AmpBins]
				for k := range g {
					sum += g[k] * rr[k]
				}
			}
			out[(j*ns+si)*c.nb+t] = sum / norm
		}
	}
}
