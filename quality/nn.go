package quality

import (
	"dspk/internal/par"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// nearestNeighbours is SpikeInterface's nn_hit_rate and nn_miss_rate:
// the unit's spikes first, then the others; beyond maxSpikes every
// (total/maxSpikes)-th spike is kept; each spike's k nearest other spikes
// (Euclidean) are found, and the hit rate is the fraction of the unit's
// spikes' neighbours in the unit, the miss rate that of the other spikes'
// neighbours. With no other unit it is (1, 0); with fewer than k+1 spikes
// NaN, where scikit-learn refuses.
func nearestNeighbours(x [][]float64, labels []int, r, maxSpikes, k int) (hit, miss float64) {
	self, other := split(x, labels, r)
	if len(other) == 0 {
		return 1, 0
	}
	all := append(append([][]float64{}, self...), other...)
	total := len(all)
	nself := len(self)
	ratio := float64(maxSpikes) / float64(total)
	if ratio < 1 {
		step := 1 / ratio
		m := int(math.Ceil(float64(total-1) / step))
		sub := make([][]float64, 0, m)
		for i := range m {
			sub = append(sub, all[int(float64(i)*step)])
		}
		all = sub
		nself = int(float64(nself) * ratio)
	}
	if len(all) < k+1 {
		return nan, nan
	}
	var hits, misses, nh, nm int
	for i, nb := range kNearestAll(all, k) {
		in := 0
		for _, j := range nb {
			if j < nself {
				in++
			}
		}
		if i < nself {
			hits += in
			nh += len(nb)
		} else {
			misses += in
			nm += len(nb)
		}
	}
	return float64(hits) / float64(nh), float64(misses) / float64(nm)
}

// kNearestAll returns, for every row of x, the indices of the k other
// rows nearest to it (Euclidean), nearest first, ties to the lower index.
// Squared distances are |a|² + |b|² − 2a·b, the products by blocks of
// rows in one matrix multiplication each, blocks in parallel.
func kNearestAll(x [][]float64, k int) [][]int {
	n, d := len(x), len(x[0])
	flat := make([]float64, n*d)
	norm := make([]float64, n)
	for i, v := range x {
		copy(flat[i*d:], v)
		for _, e := range v {
			norm[i] += e * e
		}
	}
	all := mat.NewDense(n, d, flat)
	out := make([][]int, n)
	const block = 128
	par.Each((n+block-1)/block, par.Workers((n+block-1)/block), func(_, b int) {
		lo, hi := b*block, min((b+1)*block, n)
		var g mat.Dense
		g.Mul(all.Slice(lo, hi, 0, d), all.T())
		for i := lo; i < hi; i++ {
			row := g.RawRowView(i - lo)
			out[i] = smallest(row, norm, i, k)
		}
	})
	return out
}

// smallest returns the k indices j ≠ i of least norm[j] − 2·dot[j]
// (the squared distance from row i less its own norm), in order.
func smallest(dot, norm []float64, i, k int) []int {
	idx := make([]int, 0, k+1)
	dist := make([]float64, 0, k+1)
	worst := math.Inf(1)
	for j, g := range dot {
		if j == i {
			continue
		}
		s := norm[j] - 2*g
		if len(idx) == k && s >= worst {
			continue
		}
		p := len(idx)
		for p > 0 && dist[p-1] > s {
			p--
		}
		idx = slices.Insert(idx, p, j)
		dist = slices.Insert(dist, p, s)
		if len(idx) > k {
			idx, dist = idx[:k], dist[:k]
		}
		if len(idx) == k {
			worst = dist[k-1]
		}
	}
	return idx
}
