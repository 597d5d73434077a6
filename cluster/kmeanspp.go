package cluster

import (
	"math"
	"math/rand/v2"
)

// dot is the inner product of two float64 rows, summed in order. Rows are
// float32 values widened, so every product is exact and only the sums
// round: the blocked kernel below gives the same bits.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	s := 0.0
	for t, v := range a {
		s += v * b[t]
	}
	return s
}

// dot4 returns the inner products of a with four rows, each summed in
// order as dot does.
func dot4(a, b0, b1, b2, b3 []float64) (s0, s1, s2, s3 float64) {
	n := len(a)
	b0, b1, b2, b3 = b0[:n], b1[:n], b2[:n], b3[:n]
	for t, v := range a {
		s0 += v * b0[t]
		s1 += v * b1[t]
		s2 += v * b2[t]
		s3 += v * b3[t]
	}
	return
}

// kmeansPP returns the initial labels of a group (kilosort4-sort.md §5.4):
// nInit rounds of greedy D²-sampling whose centroids are spikes. Each round
// draws nCand distinct candidates with probability ∝ max(‖x_i‖² − e_i, 0),
// scores candidate q by Σ_i max(2·x_i·x_q − ‖x_q‖² − e_i, 0) (float64, in
// the blocked order of scoreBlock, shared with the CUDA back end) and
// moves every spike that the first best candidate improves to label j. x is the group's [n·d] features widened to float64.
//
// Groups whose inner products fit the memo budget (kmeansMemoBytes) run
// kmeansPPMemo, which computes each drawn candidate's products once; the
// others run the pruned loop below. Both give the reference's sums.
//
// Pruning (exact): w_i = ‖x_i‖² − e_i is the squared distance of spike i
// to its anchor a_i (the centroid that last improved it, or the origin),
// and candidate q can improve i only if ‖x_i − x_q‖² < w_i, which the
// triangle inequality rules out when ‖x_q − a_i‖ ≥ 2·√w_i. Pairs beyond
// that bound plus a margin (1e−5·(1 + d/1000)·(1 + 2·max‖x‖), far above
// the float64 rounding of the terms) are skipped: their term would be
// ≤ 0 and add nothing, so the sums, and the labels, are those of the
// unpruned loop bit for bit.
func kmeansPP(x []float64, n, d, nInit, nCand int, rng *rand.Rand, stop func() bool) []int32 {
	if held := memoReserve(n, nInit, nCand); held > 0 {
		defer memoInUse.Add(-held)
		return kmeansPPMemo(x, n, d, nInit, nCand, rng, stop)
	}
	p := newPPState(x, n, d, nCand)
	for j := 0; j < nInit; j++ {
		q := drawCandidates(rng, p.v, p.e, p.w, nCand, p.idx, p.keys, stop)
		if len(q) == 0 {
			break
		}
		p.round(j, q)
	}
	return p.c
}

// ppState is the state of kmeansPP's pruned loop, kept across rounds.
type ppState struct {
	x      []float64 // [n·d] rows
	n, d   int
	margin float64   // of the pruning bound
	v      []float64 // per spike: ‖x_i‖²
	e      []float64 // per spike: best gain so far
	c      []int32   // per spike: label
	anchor []int32   // per spike: spike index + 1 of the anchor; 0 = origin
	w      []float64 // per spike: the sampling weight
	idx    []int32   // sampleWeighted's scratch
	keys   []float64
	cx     []float64 // candidate rows
	vq     []float64 // candidate squared norms
	score  []float64
	blk    []float64 // padded for termsAcc
	slot   []int32   // anchor → row of dist/order + 1
	// The round's anchors in use; per anchor and candidate ‖x_q − a‖
	// (dist), the candidates by distance (order) and those distances
	// (sorted); per spike its bound 2·√w_i + margin (lim); per anchor the
	// largest bound of its spikes (maxLim) and the candidates within it
	// (cnt).
	anchors      []int32
	dist, sorted []float64
	order        []int32
	lim, maxLim  []float64
	cnt          []int32
	ws           vecWork
}

// newPPState returns kmeansPP's state for the n×d rows x and nCand
// candidates a round.
func newPPState(x []float64, n, d, nCand int) *ppState {
	p := &ppState{x: x, n: n, d: d, v: make([]float64, n)}
	maxNorm := 0.0
	for i := range p.v {
		xi := x[i*d : (i+1)*d]
		p.v[i] = dot(xi, xi)
		maxNorm = max(maxNorm, math.Sqrt(p.v[i]))
	}
	p.margin = 1e-5 * (1 + float64(d)/1000) * (1 + 2*maxNorm)
	p.e = make([]float64, n)
	p.c = make([]int32, n)
	p.anchor = make([]int32, n)
	p.w = make([]float64, n)
	p.idx = make([]int32, 0, nCand)
	p.keys = make([]float64, 0, nCand)
	p.cx = make([]float64, nCand*d)
	p.vq = make([]float64, nCand)
	p.score = make([]float64, nCand)
	p.blk = make([]float64, (nCand+7)/8*8)
	p.slot = make([]int32, n+1)
	return p
}

// round runs round j with the candidates q: their scores, and the move
// of every spike the first best improves to label j.
func (p *ppState) round(j int, q []int32) {
	x, d, nq := p.x, p.d, len(q)
	for a, qi := range q {
		copy(p.cx[a*d:(a+1)*d], x[int(qi)*d:(int(qi)+1)*d])
		p.vq[a] = p.v[qi]
		p.score[a] = 0
	}
	p.findAnchors(nq)
	p.anchorTables(nq)
	rd := &roundData{x: x, d: d, nq: nq, cx: p.cx, vq: p.vq, e: p.e, lim: p.lim,
		slot: p.slot, anchor: p.anchor, order: p.order, sorted: p.sorted, cnt: p.cnt, score: p.score, blk: p.blk}
	if useDots512 {
		rd.scoreVec(&p.ws)
	} else {
		rd.scoreScalar()
	}
	best := pickBest(j, p.score[:nq])
	xq := p.cx[best*d : (best+1)*d]
	for i := 0; i < p.n; i++ {
		r := int(p.slot[p.anchor[i]] - 1)
		if p.dist[r*nq+best] >= p.lim[i] {
			continue
		}
		gi := 2*dot(x[i*d:(i+1)*d], xq) - p.vq[best]
		if gi-p.e[i] > 0 {
			p.c[i] = int32(j)
			p.e[i] = gi
			p.anchor[i] = q[best] + 1
		}
	}
}

// findAnchors lists the anchors in use (slot numbers them from 1), sizes
// the round's tables for nq candidates and, for the vector kernel, lays
// out the candidates transposed (d × nq8).
func (p *ppState) findAnchors(nq int) {
	d := p.d
	for _, a := range p.anchors {
		p.slot[a] = 0
	}
	p.anchors = p.anchors[:0]
	for i := 0; i < p.n; i++ {
		if a := p.anchor[i]; p.slot[a] == 0 {
			p.anchors = append(p.anchors, a)
			p.slot[a] = int32(len(p.anchors))
		}
	}
	na := len(p.anchors)
	p.dist = growF(p.dist, na*nq)
	p.sorted = growF(p.sorted, na*nq)
	p.order = growI(p.order, na*nq)
	if useDots512 {
		ws := &p.ws
		nq8 := (nq + 7) / 8 * 8
		ws.trAll = growF(ws.trAll, d*nq8)
		for t := 0; t < d; t++ {
			row := ws.trAll[t*nq8 : (t+1)*nq8]
			for b := 0; b < nq8; b++ {
				if b < nq {
					row[b] = p.cx[b*d+t]
				} else {
					row[b] = 0
				}
			}
		}
		ws.nq8 = nq8
	}
}

// anchorTables computes each spike's bound and per anchor the largest
// bound of its spikes (only the candidates nearer the anchor than that
// can improve any of them, so only those are sorted), the distances from
// the anchors to the candidates, and the candidates of each anchor by
// distance.
func (p *ppState) anchorTables(nq int) {
	x, d, v, ws := p.x, p.d, p.v, &p.ws
	na := len(p.anchors)
	p.lim = growF(p.lim, p.n)
	p.maxLim = growF(p.maxLim, na)
	clear(p.maxLim)
	for i := 0; i < p.n; i++ {
		l := 2*math.Sqrt(p.w[i]) + p.margin
		p.lim[i] = l
		r := p.slot[p.anchor[i]] - 1
		p.maxLim[r] = max(p.maxLim[r], l)
	}
	p.cnt = growI(p.cnt, na)
	for r, a := range p.anchors {
		row := p.dist[r*nq : (r+1)*nq]
		switch {
		case a == 0:
			for b := range row {
				row[b] = math.Sqrt(p.vq[b])
			}
		case useDots512:
			// ‖x_q − a‖² = ‖a‖² + ‖x_q‖² − 2·a·x_q: its rounding
			// (≲ 1e−13·max‖x‖² for d ≤ 1000) moves the distance by
			// far less than the margin.
			ws.acc = growF(ws.acc, ws.nq8)
			dotsT(ws.acc, x[int(a-1)*d:int(a)*d], ws.trAll, ws.nq8, ws.nq8)
			va := v[a-1]
			for b := range row {
				row[b] = math.Sqrt(max(va+p.vq[b]-2*ws.acc[b], 0))
			}
		default:
			for b := range row {
				row[b] = math.Sqrt(sqDist(x[int(a-1)*d:int(a)*d], p.cx[b*d:(b+1)*d]))
			}
		}
		// The candidates within the anchor's largest bound, nearest
		// first: every spike's own list is a prefix of them.
		ord := p.order[r*nq : (r+1)*nq]
		k := 0
		for b, v := range row {
			if v < p.maxLim[r] {
				ord[k] = int32(b)
				k++
			}
		}
		p.cnt[r] = int32(k)
		sortByDist(ord[:k], row)
		for b, o := range ord[:k] {
			p.sorted[r*nq+b] = row[o]
		}
	}
}

// drawCandidates starts a k-means++ round: it sets the weights
// w = max(v − e, 0) and draws the round's candidates (sampleWeighted). It
// returns none when the rounds should end: stop (if not nil) reports true
// (the caller's labels are then discarded), or no spike can improve any
// more.
func drawCandidates(rng *rand.Rand, v, e, w []float64, nCand int, idx []int32, keys []float64, stop func() bool) []int32 {
	if stop != nil && stop() {
		return nil
	}
	for i := range w {
		w[i] = max(v[i]-e[i], 0)
	}
	return sampleWeighted(rng, w, nCand, idx, keys)
}

// pickBest ends the scoring of round j: it hands the scores to the test
// hook and returns the first best candidate.
func pickBest(j int, score []float64) int {
	if kmeansTrace != nil {
		kmeansTrace(j, score)
	}
	best := 0
	for a := 1; a < len(score); a++ {
		if score[a] > score[best] {
			best = a
		}
	}
	return best
}

// searchBelow returns the number of leading values of the ascending ds
// below lim.
func searchBelow(ds []float64, lim float64) int {
	lo, hi := 0, len(ds)
	for lo < hi {
		m := (lo + hi) / 2
		if ds[m] < lim {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// sortByDist sorts the candidate indices ord by ascending dist (ties by
// index; insertion sort, a hundred values).
func sortByDist(ord []int32, dist []float64) {
	for i := 1; i < len(ord); i++ {
		o := ord[i]
		j := i
		for j > 0 && (dist[ord[j-1]] > dist[o] || (dist[ord[j-1]] == dist[o] && ord[j-1] > o)) {
			ord[j] = ord[j-1]
			j--
		}
		ord[j] = o
	}
}

// growF returns s resized to n, reallocated (with room to double) when
// its capacity is short: the per-anchor tables grow every round, and
// exact-size allocations made a new one each time. Callers write every
// value they read.
func growF(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n, max(n, 2*cap(s)))
	}
	return s[:n]
}

// growI is growF for int32.
func growI(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n, max(n, 2*cap(s)))
	}
	return s[:n]
}
