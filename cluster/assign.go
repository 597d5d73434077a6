package cluster

import "slices"

// assigner runs the alternating assignment of a group (kilosort4-sort.md
// §5.5) with sparse label counts: a landmark's score for label k is the
// number of its incoming links (self-links included) from spikes of label
// k minus (λ/m)·k_s·N_k, a spike's the number of its k nearest landmarks
// (itself included) of label k minus (λ/m)·k_i·N'_k; each takes the first
// maximiser over all K labels. Labels absent from a vertex's neighbours
// score −(λ/m)·k·N_k, so the best of them is the one of fewest members
// (lowest index among equals; any lowest-index one when the penalty is 0);
// it stays a candidate, as in the dense formulation. Scores are float64:
// cnt − ((λ/m)·k)·N_k.
type assigner struct {
	g      *graph
	lam    float64 // λ/m
	cnt    []int32 // [K] counts of the vertex at hand
	seen   []int32 // labels touched
	nk     []int32 // [K] label sizes of the other side
	order  []int32 // labels by (size, index)
	labels int
}

func newAssigner(g *graph, lambda float64, K int) *assigner {
	a := &assigner{g: g, cnt: make([]int32, K), nk: make([]int32, K), order: make([]int32, K), labels: K}
	if g.m > 0 {
		a.lam = lambda / float64(g.m)
	}
	return a
}

// setSizes counts the labels of src into nk and orders the labels by
// (size, index).
func (a *assigner) setSizes(src []int32) {
	clear(a.nk)
	for _, l := range src {
		a.nk[l]++
	}
	for k := range a.order {
		a.order[k] = int32(k)
	}
	slices.SortFunc(a.order, func(x, y int32) int {
		if a.nk[x] != a.nk[y] {
			return int(a.nk[x] - a.nk[y])
		}
		return int(x - y)
	})
}

// choose returns the first maximiser over all labels of cnt − pen·N_k,
// with cnt the counts gathered in a.cnt for the labels in a.seen. It
// clears the counts.
func (a *assigner) choose(pen float64) int32 {
	best, bs := int32(-1), 0.0
	consider := func(k int32, s float64) {
		if best < 0 || s > bs || (s == bs && k < best) {
			best, bs = k, s
		}
	}
	for _, k := range a.seen {
		consider(k, float64(a.cnt[k])-pen*float64(a.nk[k]))
	}
	// The best label without counts.
	if len(a.seen) < a.labels {
		if pen == 0 {
			for k := int32(0); ; k++ {
				if a.cnt[k] == 0 {
					consider(k, 0-pen*float64(a.nk[k]))
					break
				}
			}
		} else {
			for _, k := range a.order {
				if a.cnt[k] == 0 {
					consider(k, 0-pen*float64(a.nk[k]))
					break
				}
			}
		}
	}
	for _, k := range a.seen {
		a.cnt[k] = 0
	}
	a.seen = a.seen[:0]
	return best
}

func (a *assigner) add(k int32) {
	if a.cnt[k] == 0 {
		a.seen = append(a.seen, k)
	}
	a.cnt[k]++
}

// landmarkStep sets d from the spike labels c.
func (a *assigner) landmarkStep(c, d []int32) {
	g := a.g
	a.setSizes(c)
	for s := 0; s < g.s; s++ {
		for _, i := range g.inList[g.inStart[s]:g.inStart[s+1]] {
			a.add(c[i])
		}
		d[s] = a.choose(a.lam * float64(g.ks[s]))
	}
}

// spikeStep sets c from the landmark labels d.
func (a *assigner) spikeStep(c, d []int32) {
	g := a.g
	a.setSizes(d)
	for i := 0; i < g.n; i++ {
		for _, s := range g.kn[i*g.k : (i+1)*g.k] {
			a.add(d[s])
		}
		c[i] = a.choose(a.lam * float64(g.ki[i]))
	}
}

// assign runs rounds of landmark and spike steps from the spike labels c
// (in [0, K)), relabels c to 0…K'−1 in ascending order of the labels
// used and recomputes the landmark labels once with K' labels. It returns
// the landmark labels and K'.
func assign(g *graph, c []int32, K, rounds int, lambda float64) ([]int32, int) {
	d := make([]int32, g.s)
	a := newAssigner(g, lambda, K)
	for r := 0; r < rounds; r++ {
		a.landmarkStep(c, d)
		a.spikeStep(c, d)
	}
	used := make([]int32, K)
	for k := range used {
		used[k] = -1
	}
	for _, l := range c {
		used[l] = 0
	}
	kp := int32(0)
	for k := range used {
		if used[k] == 0 {
			used[k] = kp
			kp++
		}
	}
	for i, l := range c {
		c[i] = used[l]
	}
	a = newAssigner(g, lambda, int(kp))
	a.landmarkStep(c, d)
	return d, int(kp)
}
