package curate

import (
	"math"
	"slices"
)

// The coincident rule (dspk's; docs/curate.md §9): a neuron whose
// footprint spans more channels than a template holds is matched twice for
// each of its spikes, once by a template on either part of the footprint.
// The two units have templates on disjoint channels (their similarity is
// 0, so no similarity-ranked merge considers them) and share most spikes,
// a spike of one within a fraction of a millisecond of a spike of the
// other, at one fixed lag (each template is aligned to its own part of the
// waveform). Kilosort4's correlogram test refuses them: the full centre
// bin is the opposite of a refractory dip. Two neurons fire together
// within 0.25 ms only by chance, which at cortical rates is a few spikes
// in a thousand. The copy of a shared spike on the weaker template (the
// smaller norm: the part of the footprint farther from the neuron) is
// dropped; a unit left with little besides its copies joins the other.
const (
	// CoincidentDefault is dspk's default of [Settings.Coincident]: the
	// least fraction of a unit's spikes that are copies of a stronger
	// unit's for the unit to join it (SpikeInterface's
	// remove_redundant_units calls such pairs redundant at 0.8).
	CoincidentDefault = 0.8
	// CoincidentShared is the least fraction of the smaller unit's spikes
	// shared with the other that drops the weaker unit's copies: about 30
	// times what chance gives two independent 30-Hz trains (0.7 % of the
	// spikes with a partner within ±3 samples).
	CoincidentShared = 0.2
	// coincidentMinCount is the least number of shared spikes that the
	// rule acts on: below it a pair's trains say nothing.
	coincidentMinCount = 10
)

// coincidentLags returns the largest |lag| in samples between the two
// alignments of one spike that the merge looks for: twice the duplicate
// window (0.5 ms at Kilosort4's 0.25 ms), the time a spike's trough
// takes to change across the 2·position_limit between two parts of one
// footprint, with room for the templates' own alignments.
func (p Params) coincidentLags() int64 { return 2 * p.DuplicateSpikeBins() }

// coincidentHalf returns the half-width in samples of the window about
// the lag in which spikes coincide: half the duplicate window, so that
// after the merge moves the smaller unit's spikes by the lag, the pairs
// fall within duplicate_spike_ms and the later spike of each is removed
// as a duplicate.
func (p Params) coincidentHalf() int64 { return max(1, p.DuplicateSpikeBins()/2) }

// Coincidence returns the lag ∈ [−maxLag, maxLag] at which most spikes of
// train a have their nearest spike of train b (b − a; of two as near, the
// earlier; ties: the lag nearest 0, then the smaller), and how many spikes
// of a have a spike of b within lag ± half. Both trains are sample times
// sorted ascending. The mode, not the window's maximum, fixes the lag: a
// window wider than the peak could slide off it to take in chance
// coincidences.
func Coincidence(a, b []int64, maxLag, half int64) (count int, lag int64) {
	w := maxLag + half
	exact := make([]int, 2*w+1) // spikes of a whose nearest partner is at each lag
	lo := 0
	for _, t := range a {
		for lo < len(b) && b[lo] < t-w {
			lo++
		}
		found, nd := false, int64(0)
		for i := lo; i < len(b) && b[i] <= t+w; i++ {
			if d := b[i] - t; !found || abs64(d) < abs64(nd) {
				found, nd = true, d
			}
		}
		if found {
			exact[nd+w]++
		}
	}
	lag = -maxLag
	for L := -maxLag + 1; L <= maxLag; L++ {
		if e, el := exact[L+w], exact[lag+w]; e > el || e == el && abs64(L) < abs64(lag) {
			lag = L
		}
	}
	// The spikes of a with a partner within lag ± half.
	lo = 0
	for _, t := range a {
		for lo < len(b) && b[lo] < t+lag-half {
			lo++
		}
		if lo < len(b) && b[lo] <= t+lag+half {
			count++
		}
	}
	return count, lag
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// runCoincident runs the coincident rule on the merger's units: every unit,
// by decreasing template norm, takes each weaker unit (smaller norm, or
// equal and later) whose best channel lies within 2·position_limit µm of
// its own and that shares at least [CoincidentShared] of the smaller
// unit's spikes with it (at least coincidentMinCount, at the lag
// [Coincidence] finds): the weaker unit's copies of the shared spikes are
// marked in g.dropped and leave it, and if that leaves it at most 1 −
// p.Coincident of its spikes, it joins the stronger unit. The strongest
// pair is taken first and the unit examined again until no pair passes.
func (g *merger) runCoincident() {
	norms := make([]float64, g.n)
	for k := range g.n {
		norms[k] = norm2(g.template(k))
	}
	order := descending(g.n, func(k int) float64 { return norms[k] })
	rank := make([]int, g.n)
	for i, k := range order {
		rank[k] = i
	}
	g.order = newSpikeOrder(g.s)
	g.t0 = slices.Clone(g.s.Time)
	g.dropped = make([]bool, g.s.Len())
	g.near32 = make([]int32, g.n)
	maxLag, half := g.p.coincidentLags(), g.p.coincidentHalf()
	radius := 2 * g.p.PositionLimit
	for _, k := range order {
		for g.loop.Alive[k] && g.count[k] > 0 && (g.loop.Stop == nil || !g.loop.Stop()) {
			tk := g.times(k)
			bk := g.best(k)
			bestJ, bestF, bestLag := -1, 0.0, int64(0)
			for _, j := range g.near(k, tk, maxLag+half) {
				if rank[j] < rank[k] || !g.loop.Alive[j] || g.count[j] == 0 {
					continue
				}
				bj := g.best(j)
				if math.Hypot(g.ch.X[bk]-g.ch.X[bj], g.ch.Y[bk]-g.ch.Y[bj]) > radius {
					continue
				}
				tj := g.times(j)
				a, b, sign := tk, tj, int64(1)
				if len(tj) < len(tk) {
					a, b, sign = tj, tk, -1
				}
				c, lag := Coincidence(a, b, maxLag, half)
				f := float64(c) / float64(len(a))
				if c >= coincidentMinCount && f >= CoincidentShared && f > bestF {
					bestJ, bestF, bestLag = j, f, sign*lag // t_j − t_k
				}
			}
			if bestJ < 0 {
				break
			}
			j, before := bestJ, g.count[bestJ]
			g.dropShared(k, j, tk, bestLag, half)
			if float64(g.count[j]) <= (1-g.p.Coincident)*float64(before) {
				g.sim[j], g.lag[k], g.lag[j] = bestF, 0, int(-bestLag)
				g.join(k, j)
				g.loop.Alive[j] = false
			}
		}
	}
}

// near returns the units other than k with a spike within w (plus the
// most any spike has moved) samples of one of k's spikes tk.
func (g *merger) near(k int, tk []int64, w int64) []int {
	w += g.maxShift
	var out []int
	g.stamp++ // g.near32[j] == g.stamp: j already listed in this call
	stamp := g.stamp
	i := 0
	for _, t := range tk {
		// tk is sorted: the window's start only moves forward.
		d, _ := slices.BinarySearch(g.order.t[i:], t-w)
		i += d
		for q := i; q < len(g.order.t) && g.order.t[q] <= t+w; q++ {
			if r := g.order.row[q]; !g.dropped[r] {
				if j := int(g.s.Cluster[r]); j != k && g.near32[j] != stamp {
					g.near32[j] = stamp
					out = append(out, j)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// dropShared marks the spikes of unit j that have a spike of unit k (times
// tk, sorted) at t_j − lag ± half as dropped, takes them out of j and
// labels them k (whose spikes they copy).
func (g *merger) dropShared(k, j int, tk []int64, lag, half int64) {
	kept := g.members[j][:0]
	n := 0
	for _, r := range g.members[j] {
		t := g.s.Time[r] - lag
		i, _ := slices.BinarySearch(tk, t-half)
		if i < len(tk) && tk[i] <= t+half {
			g.dropped[r] = true
			g.s.Cluster[r] = int32(k) // a copy of k's spike
			n++
			continue
		}
		kept = append(kept, r)
	}
	g.members[j] = kept
	g.count[j] = len(kept)
	g.shared += n
}

// times returns unit k's spike times in samples, sorted.
func (g *merger) times(k int) []int64 {
	t := make([]int64, len(g.members[k]))
	for i, r := range g.members[k] {
		t[i] = g.s.Time[r]
	}
	slices.Sort(t)
	return t
}

// best returns the channel on which unit k's template has the most
// energy.
func (g *merger) best(k int) int {
	W, P := g.template(k), g.bs.P
	bc, be := 0, -1.0
	for c := range g.c {
		var e float64
		for _, v := range W[c*P : (c+1)*P] {
			e += float64(v) * float64(v)
		}
		if e > be {
			bc, be = c, e
		}
	}
	return bc
}

// spikeOrder is every spike's row by time as the coincident merge
// starts; joins move times by at most maxShift samples from it.
type spikeOrder struct {
	t   []int64
	row []int
}

// newSpikeOrder returns the spikes of s by time.
func newSpikeOrder(s *Spikes) spikeOrder {
	row := make([]int, s.Len())
	for i := range row {
		row[i] = i
	}
	slices.SortStableFunc(row, func(a, b int) int {
		switch ta, tb := s.Time[a], s.Time[b]; {
		case ta < tb:
			return -1
		case ta > tb:
			return 1
		}
		return 0
	})
	t := make([]int64, len(row))
	for i, r := range row {
		t[i] = s.Time[r]
	}
	return spikeOrder{t: t, row: row}
}

// unionTemplate writes into W_k the template of two parts of one
// footprint: on each channel the template of the unit that has one
// there, the count-weighted mean where both have.
func unionTemplate(wk, wj []float32, nk, nj float64, P int) {
	for c := 0; c < len(wk); c += P {
		a, b := wk[c:c+P], wj[c:c+P]
		za := !slices.ContainsFunc(a, func(v float32) bool { return v != 0 })
		zb := !slices.ContainsFunc(b, func(v float32) bool { return v != 0 })
		switch {
		case zb:
		case za:
			copy(a, b)
		default:
			for i := range a {
				a[i] = float32((nk*float64(a[i]) + nj*float64(b[i])) / (nk + nj))
			}
		}
	}
}
