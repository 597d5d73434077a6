package cluster

import (
	"math"
	"math/rand/v2"
	"slices"
)

// MedianPitch returns Kilosort4's default dmin: the median difference of
// the distinct values of y, ascending (1 if y has fewer than two distinct
// values).
func MedianPitch(y []float64) float64 {
	u := slices.Clone(y)
	slices.Sort(u)
	u = slices.Compact(u)
	if len(u) < 2 {
		return 1
	}
	d := make([]float64, len(u)-1)
	for i := range d {
		d[i] = u[i+1] - u[i]
	}
	slices.Sort(d)
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}

// YCenters returns the y grid of the groups (kilosort4-sort.md §5.1):
// min(unitY) + dmin − 1 in steps of 2·dmin while below max(unitY) + dmin +
// 1, as numpy's arange counts them.
func YCenters(unitY []float64, dmin float64) []float64 {
	lo, hi := slices.Min(unitY), slices.Max(unitY)
	start, stop, step := lo+dmin-1, hi+dmin+1, 2*dmin
	n := int(math.Ceil((stop - start) / step))
	out := make([]float64, max(n, 0))
	for i := range out {
		out[i] = start + float64(i)*step
	}
	return out
}

// XCenters returns the x grid of the groups from the channels' x positions
// (kilosort4-sort.md §5.1), ascending. With guesses it runs k-means from
// them; with k > 0 it runs k-means with k starts drawn by a PCG generator
// seeded with kilosort.XCentersSeed; otherwise it takes the left edges of
// the interior peaks of the smoothed histogram of chanX as guesses (one
// centre, the mean, when there is at most one peak).
func XCenters(chanX []float64, k int, guesses []float64, seed uint64) []float64 {
	var c []float64
	switch {
	case len(guesses) > 0:
		c = kmeans1D(chanX, guesses)
	case k > 0:
		c = kmeans1DSeeded(chanX, k, seed)
	default:
		g := histogramPeaks(chanX)
		if len(g) <= 1 {
			c = kmeans1DSeeded(chanX, 1, seed)
		} else {
			c = kmeans1D(chanX, g)
		}
	}
	slices.Sort(c)
	return c
}

// histogramPeaks returns the left edges of the interior local maxima of
// the histogram of x over linspace(min−100, max+100, ⌊(max−min)/50⌋+4)
// edges, smoothed by a Gaussian of σ = 0.5 bin.
func histogramPeaks(x []float64) []float64 {
	lo, hi := slices.Min(x), slices.Max(x)
	edges := linspace(lo-100, hi+100, int(math.Floor((hi-lo)/50))+4)
	h := histogram(x, edges)
	hs := gaussSmooth(h, 0.5)
	var out []float64
	for _, p := range localMaxima(hs) {
		out = append(out, edges[p])
	}
	return out
}

// linspace returns n values from a to b inclusive, b exact (numpy).
func linspace(a, b float64, n int) []float64 {
	out := make([]float64, n)
	if n == 1 {
		out[0] = a
		return out
	}
	step := (b - a) / float64(n-1)
	for i := range out {
		out[i] = a + float64(i)*step
	}
	out[n-1] = b
	return out
}

// histogram counts x into the bins of edges (numpy: bins half-open, the
// last closed; values outside dropped).
func histogram(x, edges []float64) []float64 {
	nb := len(edges) - 1
	h := make([]float64, nb)
	lo, hi := edges[0], edges[nb]
	for _, v := range x {
		if !(v >= lo && v <= hi) {
			continue
		}
		i := int((v - lo) / (hi - lo) * float64(nb))
		i = min(max(i, 0), nb-1)
		for i > 0 && v < edges[i] {
			i--
		}
		for i < nb-1 && v >= edges[i+1] {
			i++
		}
		h[i]++
	}
	return h
}

// gaussKernel returns the normalised taps of a Gaussian of σ with scipy's
// radius ⌊4σ + 0.5⌋.
func gaussKernel(sigma float64) []float64 {
	r := int(4*sigma + 0.5)
	w := make([]float64, 2*r+1)
	s := 0.0
	for i := range w {
		d := float64(i - r)
		w[i] = math.Exp(-0.5 * d * d / (sigma * sigma))
		s += w[i]
	}
	for i := range w {
		w[i] /= s
	}
	return w
}

// gaussSmooth filters h with a Gaussian of σ samples, scipy's mode
// 'reflect' (d c b a | a b c d | d c b a).
func gaussSmooth(h []float64, sigma float64) []float64 {
	w := gaussKernel(sigma)
	r := len(w) / 2
	n := len(h)
	out := make([]float64, n)
	for i := range out {
		s := 0.0
		for j, wj := range w {
			s += wj * h[reflect(i+j-r, n)]
		}
		out[i] = s
	}
	return out
}

// reflect maps index i into [0, n) by half-sample symmetric reflection.
func reflect(i, n int) int {
	for i < 0 || i >= n {
		if i < 0 {
			i = -i - 1
		}
		if i >= n {
			i = 2*n - 1 - i
		}
	}
	return i
}

// localMaxima returns the interior local maxima of x as scipy's
// find_peaks does: a sample (or the middle, rounded down, of a flat run)
// strictly above both neighbours; the ends are never peaks.
func localMaxima(x []float64) []int {
	var out []int
	i, n := 1, len(x)
	for i < n-1 {
		if x[i-1] < x[i] {
			j := i + 1
			for j < n-1 && x[j] == x[i] {
				j++
			}
			if x[j] < x[i] {
				out = append(out, (i+j-1)/2)
				i = j
				continue
			}
		}
		i++
	}
	return out
}

// kmeans1D runs Lloyd's k-means on x from the initial centres c until the
// mean distance improves by no more than 1e-5 (scipy vq's rule); centres
// left without points are dropped.
func kmeans1D(x, init []float64) []float64 {
	c := slices.Clone(init)
	prev := math.Inf(1)
	for iter := 0; iter < 1000; iter++ {
		sum := make([]float64, len(c))
		cnt := make([]int, len(c))
		dist := 0.0
		for _, v := range x {
			b, bd := 0, math.Inf(1)
			for j, cj := range c {
				if d := math.Abs(v - cj); d < bd {
					b, bd = j, d
				}
			}
			sum[b] += v
			cnt[b]++
			dist += bd
		}
		dist /= float64(len(x))
		var nc []float64
		for j := range c {
			if cnt[j] > 0 {
				nc = append(nc, sum[j]/float64(cnt[j]))
			}
		}
		c = nc
		if prev-dist <= 1e-5 {
			break
		}
		prev = dist
	}
	return c
}

// kmeans1DSeeded runs kmeans1D from k distinct points of x drawn by a PCG
// generator seeded with seed, 20 times (scipy vq's default), and keeps the
// centres of the smallest mean distance (the first among equals).
func kmeans1DSeeded(x []float64, k int, seed uint64) []float64 {
	k = min(k, len(x))
	rng := rand.New(rand.NewPCG(seed, 0))
	var best []float64
	bestD := math.Inf(1)
	for try := 0; try < 20; try++ {
		perm := rng.Perm(len(x))
		init := make([]float64, k)
		for j := range init {
			init[j] = x[perm[j]]
		}
		c := kmeans1D(x, init)
		d := 0.0
		for _, v := range x {
			bd := math.Inf(1)
			for _, cj := range c {
				bd = min(bd, math.Abs(v-cj))
			}
			d += bd
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// assignGroups returns each unit's grid point g = ky + jx·len(yc), the
// nearest by squared distance (first minimum in g order).
func assignGroups(unitX, unitY, xc, yc []float64) []int {
	out := make([]int, len(unitX))
	for u := range unitX {
		best, bd := 0, math.Inf(1)
		for jx, x := range xc {
			for ky, y := range yc {
				dx, dy := unitX[u]-x, unitY[u]-y
				if d := dx*dx + dy*dy; d < bd {
					best, bd = ky+jx*len(yc), d
				}
			}
		}
		out[u] = best
	}
	return out
}
