package quality

import (
	"math"
	"slices"
)

var nan = math.NaN()

// mean is numpy's mean: NaN for no values.
func mean(x []float64) float64 {
	if len(x) == 0 {
		return nan
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// std is numpy's population standard deviation: NaN for no values.
func std(x []float64) float64 {
	m := mean(x)
	s := 0.0
	for _, v := range x {
		d := v - m
		s += d * d
	}
	return math.Sqrt(s / float64(len(x)))
}

// median is numpy's median: NaN for no values or any NaN.
func median(x []float64) float64 {
	return percentile(x, 50)
}

// percentile is numpy's percentile with linear interpolation: NaN for no
// values or any NaN.
func percentile(x []float64, q float64) float64 {
	if len(x) == 0 || slices.ContainsFunc(x, math.IsNaN) {
		return nan
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return sortedPercentile(s, q)
}

// sortedPercentile is percentile of sorted values without NaN. For q = 50
// and an even count it is the mean of the two middle values, as
// np.median gives.
func sortedPercentile(s []float64, q float64) float64 {
	n := len(s)
	if q == 50 {
		if n%2 == 1 {
			return s[n/2]
		}
		return (s[n/2-1] + s[n/2]) / 2
	}
	v := q / 100 * float64(n-1)
	lo := math.Floor(v)
	g := v - lo
	i := int(lo)
	j := min(i+1, n-1)
	a, b := s[i], s[j]
	// numpy's _lerp: a + (b−a)·g, from the upper end when g ≥ 0.5.
	if g >= 0.5 {
		return b - (b-a)*(1-g)
	}
	return a + (b-a)*g
}

// nanFree returns the values of x that are not NaN.
func nanFree(x []float64) []float64 {
	out := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// histogramUniform is np.histogram(x, bins): bins equal bins from min to
// max (±0.5 around a constant), the last closed, with numpy's index
// computation and edge corrections.
func histogramUniform(x []float64, bins int) []int64 {
	h := make([]int64, bins)
	if len(x) == 0 {
		return h
	}
	lo, hi := slices.Min(x), slices.Max(x)
	if lo == hi {
		lo, hi = lo-0.5, hi+0.5
	}
	edges := linspace(lo, hi, bins+1)
	for _, v := range x {
		if v < lo || v > hi {
			continue
		}
		i := int((v - lo) / (hi - lo) * float64(bins))
		if i == bins {
			i--
		}
		if v < edges[i] {
			i--
		} else if i != bins-1 && v >= edges[i+1] {
			i++
		}
		h[i]++
	}
	return h
}

// linspace is np.linspace(a, b, n) with the endpoint.
func linspace(a, b float64, n int) []float64 {
	out := make([]float64, n)
	div := float64(n - 1)
	step := (b - a) / div
	for i := range out {
		out[i] = float64(i)*step + a
	}
	out[n-1] = b
	return out
}

// histogramEdges is np.histogram(x, bins=edges) for sorted integer edges:
// bins [e_i, e_i+1), the last one closed.
func histogramEdges(x []int64, edges []int64) []int64 {
	nb := len(edges) - 1
	h := make([]int64, max(nb, 0))
	for _, v := range x {
		if nb < 1 || v < edges[0] || v > edges[nb] {
			continue
		}
		i, _ := slices.BinarySearch(edges, v+1) // first edge > v
		i--
		if i == nb {
			i--
		}
		h[i]++
	}
	return h
}

// gaussianFilterInt is scipy.ndimage.gaussian_filter1d(h, sigma,
// mode="nearest") of an integer array: the output has h's integer type,
// so each value is truncated towards zero.
func gaussianFilterInt(h []int64, sigma float64) []int64 {
	r := int(4*sigma + 0.5)
	w := make([]float64, 2*r+1)
	s := 0.0
	for i := range w {
		x := float64(i - r)
		w[i] = math.Exp(-0.5 / (sigma * sigma) * x * x)
		s += w[i]
	}
	for i := range w {
		w[i] /= s
	}
	n := len(h)
	at := func(i int) float64 { return float64(h[min(max(i, 0), n-1)]) }
	out := make([]int64, n)
	for i := range n {
		// scipy's symmetric kernel loop: the centre, then pairs outwards.
		acc := at(i) * w[r]
		for j := 1; j <= r; j++ {
			acc += (at(i-j) + at(i+j)) * w[r+j]
		}
		out[i] = int64(acc)
	}
	return out
}

// searchLeft is np.searchsorted(a, v, side="left") for sorted a.
func searchLeft(a []int64, v int64) int {
	i, _ := slices.BinarySearch(a, v)
	return i
}

// arangeEdges is np.arange(0, stop, step) of sample indices.
func arangeEdges(stop, step int64) []int64 {
	var e []int64
	for v := int64(0); v < stop; v += step {
		e = append(e, v)
	}
	return e
}
