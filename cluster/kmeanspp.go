package cluster

import (
	"math"
	"math/rand/v2"
)

// initRNG returns the generator of a group's initial labels: PCG seeded
// with (cluster_init_seed, 0), fresh for every group as Kilosort4 re-seeds
// on every call, so a group's draws do not depend on the others.
func initRNG(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0))
}

// sampleWeighted draws up to k distinct indices with probability
// proportional to w (weighted sampling without replacement, as successive
// draws each proportional to the weights left), by Efraimidis–Spirakis
// keys log(u_i)/w_i with u_i uniform on (0, 1]: the k largest keys in
// descending order are a sample in draw order. One uniform is taken per
// index, in index order, whatever its weight; indices of weight ≤ 0 are
// never drawn, so fewer than k come back when fewer are positive. Equal
// keys go to the lower index. dst is reused.
func sampleWeighted(rng *rand.Rand, w []float64, k int, dst []int32, keys []float64) []int32 {
	h := keyHeap{idx: dst[:0], key: keys[:0]}
	for i, wi := range w {
		u := 1 - rng.Float64()
		if !(wi > 0) {
			continue
		}
		full := len(h.idx) == k
		if full && (u-1)/wi < h.key[0]*(1+1e-9) {
			// log(u) ≤ u − 1, so the key is below the worst kept by far
			// more than its rounding: it cannot replace it, and the
			// logarithm is not needed.
			continue
		}
		key := math.Log(u) / wi
		if !full {
			h.push(key, int32(i))
		} else if h.less(h.idx[0], h.key[0], int32(i), key) {
			// Strictly better than the worst kept: replace it.
			h.idx[0], h.key[0] = int32(i), key
			h.down(0)
		}
	}
	// Pop in ascending order of goodness, filling from the back.
	n := len(h.idx)
	out := make([]int32, n)
	for j := n - 1; j >= 0; j-- {
		out[j] = h.idx[0]
		last := len(h.idx) - 1
		h.idx[0], h.key[0] = h.idx[last], h.key[last]
		h.idx, h.key = h.idx[:last], h.key[:last]
		h.down(0)
	}
	return out
}

// keyHeap is a min-heap of (key, index) by goodness: a key is better when
// larger, or equal with a lower index; the root is the worst kept.
type keyHeap struct {
	idx []int32
	key []float64
}

// less reports whether (ia, ka) is worse than (ib, kb).
func (h *keyHeap) less(ia int32, ka float64, ib int32, kb float64) bool {
	return ka < kb || (ka == kb && ia > ib)
}

// worse reports whether a kept entry a is worse than b.
func (h *keyHeap) worse(a, b int) bool { return h.less(h.idx[a], h.key[a], h.idx[b], h.key[b]) }

func (h *keyHeap) swap(a, b int) {
	h.idx[a], h.idx[b] = h.idx[b], h.idx[a]
	h.key[a], h.key[b] = h.key[b], h.key[a]
}

func (h *keyHeap) push(key float64, i int32) {
	h.idx, h.key = append(h.idx, i), append(h.key, key)
	j := len(h.idx) - 1
	for j > 0 {
		p := (j - 1) / 2
		if !h.worse(j, p) {
			break
		}
		h.swap(j, p)
		j = p
	}
}

func (h *keyHeap) down(j int) {
	n := len(h.idx)
	for {
		l := 2*j + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.worse(r, l) {
			m = r
		}
		if !h.worse(m, j) {
			return
		}
		h.swap(j, m)
		j = m
	}
}

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
	v := make([]float64, n)
	maxNorm := 0.0
	for i := range v {
		xi := x[i*d : (i+1)*d]
		v[i] = dot(xi, xi)
		maxNorm = max(maxNorm, math.Sqrt(v[i]))
	}
	margin := 1e-5 * (1 + float64(d)/1000) * (1 + 2*maxNorm)
	e := make([]float64, n)
	c := make([]int32, n)
	anchor := make([]int32, n) // spike index + 1 of the anchor; 0 = origin
	w := make([]float64, n)
	idx := make([]int32, 0, nCand)
	keys := make([]float64, 0, nCand)
	cx := make([]float64, nCand*d) // candidate rows
	vq := make([]float64, nCand)
	score := make([]float64, nCand)
	blk := make([]float64, (nCand+7)/8*8) // padded for termsAcc
	slot := make([]int32, n+1)            // anchor → row of dist/order + 1
	var anchors []int32
	var dist []float64 // [anchors][nCand] ‖x_q − a‖
	var order []int32  // [anchors][nCand] candidates by distance
	var sorted []float64
	var lim, maxLim []float64 // per spike: 2·√w_i + margin; per anchor: the largest
	var cnt []int32           // per anchor: candidates within maxLim
	var ws vecWork
	for j := 0; j < nInit; j++ {
		q := drawCandidates(rng, v, e, w, nCand, idx, keys, stop)
		nq := len(q)
		if nq == 0 {
			break
		}
		for a, qi := range q {
			copy(cx[a*d:(a+1)*d], x[int(qi)*d:(int(qi)+1)*d])
			vq[a] = v[qi]
			score[a] = 0
		}
		// Distances from the anchors in use to the candidates, and the
		// candidates of each anchor by distance.
		for _, a := range anchors {
			slot[a] = 0
		}
		anchors = anchors[:0]
		for i := 0; i < n; i++ {
			if a := anchor[i]; slot[a] == 0 {
				anchors = append(anchors, a)
				slot[a] = int32(len(anchors))
			}
		}
		na := len(anchors)
		dist = growF(dist, na*nq)
		sorted = growF(sorted, na*nq)
		order = growI(order, na*nq)
		if useDots512 {
			// The candidates transposed (d × nq8), for the vector kernel.
			nq8 := (nq + 7) / 8 * 8
			ws.trAll = growF(ws.trAll, d*nq8)
			for t := 0; t < d; t++ {
				row := ws.trAll[t*nq8 : (t+1)*nq8]
				for b := 0; b < nq8; b++ {
					if b < nq {
						row[b] = cx[b*d+t]
					} else {
						row[b] = 0
					}
				}
			}
			ws.nq8 = nq8
		}
		// Each spike's bound, and per anchor the largest bound of its
		// spikes: only the candidates nearer the anchor than that can
		// improve any of them, so only those are sorted.
		lim = growF(lim, n)
		maxLim = growF(maxLim, na)
		clear(maxLim)
		for i := 0; i < n; i++ {
			l := 2*math.Sqrt(w[i]) + margin
			lim[i] = l
			r := slot[anchor[i]] - 1
			maxLim[r] = max(maxLim[r], l)
		}
		cnt = growI(cnt, na)
		for r, a := range anchors {
			row := dist[r*nq : (r+1)*nq]
			switch {
			case a == 0:
				for b := range row {
					row[b] = math.Sqrt(vq[b])
				}
			case useDots512:
				// ‖x_q − a‖² = ‖a‖² + ‖x_q‖² − 2·a·x_q: its rounding
				// (≲ 1e−13·max‖x‖² for d ≤ 1000) moves the distance by
				// far less than the margin.
				ws.acc = growF(ws.acc, ws.nq8)
				dotsT(ws.acc, x[int(a-1)*d:int(a)*d], ws.trAll, ws.nq8, ws.nq8)
				va := v[a-1]
				for b := range row {
					row[b] = math.Sqrt(max(va+vq[b]-2*ws.acc[b], 0))
				}
			default:
				for b := range row {
					row[b] = math.Sqrt(sqDist(x[int(a-1)*d:int(a)*d], cx[b*d:(b+1)*d]))
				}
			}
			// The candidates within the anchor's largest bound, nearest
			// first: every spike's own list is a prefix of them.
			ord := order[r*nq : (r+1)*nq]
			k := 0
			for b, v := range row {
				if v < maxLim[r] {
					ord[k] = int32(b)
					k++
				}
			}
			cnt[r] = int32(k)
			sortByDist(ord[:k], row)
			for b, o := range ord[:k] {
				sorted[r*nq+b] = row[o]
			}
		}
		rd := &roundData{x: x, d: d, nq: nq, cx: cx, vq: vq, e: e, lim: lim,
			slot: slot, anchor: anchor, order: order, sorted: sorted, cnt: cnt, score: score, blk: blk}
		if useDots512 {
			rd.scoreVec(&ws)
		} else {
			rd.scoreScalar()
		}
		best := pickBest(j, score[:nq])
		xq := cx[best*d : (best+1)*d]
		for i := 0; i < n; i++ {
			r := int(slot[anchor[i]] - 1)
			if dist[r*nq+best] >= lim[i] {
				continue
			}
			gi := 2*dot(x[i*d:(i+1)*d], xq) - vq[best]
			if gi-e[i] > 0 {
				c[i] = int32(j)
				e[i] = gi
				anchor[i] = q[best] + 1
			}
		}
	}
	return c
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

// roundData is what scoring the candidates of one k-means++ round reads.
type roundData struct {
	x      []float64 // [n·d] rows
	d, nq  int
	cx, vq []float64 // candidate rows and squared norms
	e      []float64 // per spike: best gain so far
	lim    []float64 // per spike: 2·√w_i + margin, the pruning bound
	slot   []int32   // anchor → row of order/sorted + 1
	anchor []int32
	order  []int32   // [anchors][nq] candidates by distance from the anchor, the first cnt in use
	sorted []float64 // [anchors][nq] those distances
	cnt    []int32   // [anchors] candidates within the anchor's largest bound
	score  []float64 // [nq] out: Σ_i max(δ_iq, 0), blocked (scoreBlock)
	blk    []float64 // [nq] the current block's partial sums
}

// scoreBlock is the block of the candidate score sums: the terms of spikes
// b·scoreBlock … (b+1)·scoreBlock−1 of a group are summed in spike order
// from 0, and the block sums are added to the scores in block order. The
// CUDA back end sums in the same order (a block of threads per spike
// block), so both give the same scores bit for bit.
const scoreBlock = 256

// flush adds the block's partial sums to the scores and clears them.
func (rd *roundData) flush() {
	for q, v := range rd.blk[:rd.nq] {
		rd.score[q] += v
		rd.blk[q] = 0
	}
}

// prefix returns how many of spike i's anchor's candidates (nearest first)
// may improve it, and the anchor's row.
func (rd *roundData) prefix(i int) (m, r int) {
	r = int(rd.slot[rd.anchor[i]] - 1)
	return searchBelow(rd.sorted[r*rd.nq:r*rd.nq+int(rd.cnt[r])], rd.lim[i]), r
}

// scoreScalar scores the candidates spike by spike, four candidates at a
// time (dot4).
func (rd *roundData) scoreScalar() {
	d, nq, cx := rd.d, rd.nq, rd.cx
	var g [4]float64
	var list [4]int
	n := len(rd.e)
	for i := 0; i < n; i++ {
		if i%scoreBlock == 0 && i > 0 {
			rd.flush()
		}
		m, r := rd.prefix(i)
		if m == 0 {
			continue
		}
		ord := rd.order[r*nq : r*nq+m]
		xi := rd.x[i*d : (i+1)*d]
		ei := rd.e[i]
		a := 0
		for ; a+4 <= m; a += 4 {
			list = [4]int{int(ord[a]), int(ord[a+1]), int(ord[a+2]), int(ord[a+3])}
			g[0], g[1], g[2], g[3] = dot4(xi, cx[list[0]*d:(list[0]+1)*d], cx[list[1]*d:(list[1]+1)*d],
				cx[list[2]*d:(list[2]+1)*d], cx[list[3]*d:(list[3]+1)*d])
			for b, qb := range list {
				if dl := 2*g[b] - rd.vq[qb] - ei; dl > 0 {
					rd.blk[qb] += dl
				}
			}
		}
		for ; a < m; a++ {
			qb := int(ord[a])
			if dl := 2*dot(xi, cx[qb*d:(qb+1)*d]) - rd.vq[qb] - ei; dl > 0 {
				rd.blk[qb] += dl
			}
		}
	}
	rd.flush()
}

// vecChunk is the number of spikes whose terms scoreVec holds at once (a
// multiple of scoreBlock).
const vecChunk = 16 * scoreBlock

// kmeansTrace, when set (tests), receives every round's candidate scores.
var kmeansTrace func(j int, score []float64)

// scoreLayout makes scoreVec lay out every anchor's candidates (1),
// score every anchor's spikes against all candidates (2) or score whole
// chunks densely in spike order (3) instead of choosing by cost (0);
// tests set it to check every way against the reference.
var scoreLayout = 0

// vecWork is scoreVec's scratch, kept across rounds.
type vecWork struct {
	m, byAnchor, start []int32
	delta, tr, acc     []float64
	acc2               []float64
	trAll              []float64 // the round's candidates, d × nq8
	nq8                int
	vq8                []float64    // the candidates' squared norms, zero-padded to nq8
	acc4               [4][]float64 // dots4T's four rows of sums
	full               []bool       // per spike of the chunk: scored against every candidate
	fullList           []int32      // those spikes
}

// scoreVec scores the candidates with the vector kernel dotsT: per chunk
// of spikes, the spikes of each anchor against that anchor's candidates
// laid out transposed (d × m, nearest first, gathered from ws.trAll), the
// terms kept, then added
// into the scores in spike order, so the sums are those of scoreScalar
// bit for bit.
func (rd *roundData) scoreVec(ws *vecWork) {
	d, nq := rd.d, rd.nq
	n := len(rd.e)
	na := len(rd.order) / nq
	ws.m = growI(ws.m, vecChunk)
	ws.byAnchor = growI(ws.byAnchor, vecChunk)
	ws.start = growI(ws.start, na+1)
	ws.delta = growF(ws.delta, vecChunk*nq)
	nq8 := (nq + 7) / 8 * 8
	ws.tr = growF(ws.tr, d*nq8)
	ws.acc = growF(ws.acc, nq8)
	ws.acc2 = growF(ws.acc2, nq8)
	for k := range ws.acc4 {
		ws.acc4[k] = growF(ws.acc4[k], nq8)
	}
	if len(ws.full) < vecChunk {
		ws.full = make([]bool, vecChunk)
	}
	rows := make([]int32, vecChunk) // anchor row per spike of the chunk
	// The candidates' squared norms padded with zeros to nq8, and the
	// padding of the block sums cleared: the dense chunks' kernel works on
	// whole vectors (a padded candidate's term is max(−e_i, 0) = 0).
	ws.vq8 = growF(ws.vq8, nq8)
	copy(ws.vq8, rd.vq[:nq])
	clear(ws.vq8[nq:])
	clear(rd.blk[nq:nq8])
	curBlk := 0 // the spike block whose sums rd.blk holds
	for i0 := 0; i0 < n; i0 += vecChunk {
		i1 := min(n, i0+vecChunk)
		clear(ws.start)
		sumM, nz := 0, 0
		for i := i0; i < i1; i++ {
			m, r := rd.prefix(i)
			ws.m[i-i0], rows[i-i0] = int32(m), int32(r)
			if m > 0 {
				ws.start[r+1]++
				sumM += m
				nz++
			}
		}
		// Where the pruning leaves most candidates (overlapping clusters),
		// the chunk's spikes are scored against all of them in spike
		// order and their terms summed at once; the extra terms are ≤ 0
		// and add nothing.
		dense := 2*sumM >= nz*nq
		if scoreLayout != 0 {
			dense = scoreLayout == 3
		}
		if dense {
			curBlk = rd.denseChunk(ws, i0, i1, curBlk)
			continue
		}
		for r := 0; r < na; r++ {
			ws.start[r+1] += ws.start[r]
		}
		pos := append([]int32(nil), ws.start[:na]...)
		for i := i0; i < i1; i++ {
			if ws.m[i-i0] > 0 {
				r := rows[i-i0]
				ws.byAnchor[pos[r]] = int32(i)
				pos[r]++
			}
		}
		full := ws.fullList[:0]
		for r := 0; r < na; r++ {
			list := ws.byAnchor[ws.start[r]:ws.start[r+1]]
			if len(list) == 0 {
				continue
			}
			mMax, mSum := int32(0), 0
			for _, i := range list {
				m := ws.m[int(i)-i0]
				mMax = max(mMax, m)
				mSum += int(m)
			}
			m8 := (int(mMax) + 7) / 8 * 8
			// Laying out the anchor's nearest candidates costs d·m8
			// scalar moves; scoring its spikes against all candidates in
			// place costs d·nq8/8 vector steps each. Few spikes per
			// anchor (small groups) score against all.
			all := len(list)*(d*nq8/8+nq) < 2*d*m8+len(list)*d*m8/8+mSum
			if scoreLayout != 0 {
				all = scoreLayout == 2
			}
			if all {
				for _, i := range list {
					ws.full[int(i)-i0] = true
				}
				full = append(full, list...)
				continue
			}
			ord := rd.order[r*nq : (r+1)*nq]
			tr := ws.tr[:d*m8]
			use := ord[:mMax]
			for t := 0; t < d; t++ {
				src := ws.trAll[t*ws.nq8 : (t+1)*ws.nq8]
				dst := tr[t*m8 : (t+1)*m8]
				for b, o := range use {
					dst[b] = src[o]
				}
				clear(dst[len(use):])
			}
			terms := func(i int32, acc []float64) {
				m := int(ws.m[int(i)-i0])
				row := ws.delta[(int(i)-i0)*nq : (int(i)-i0)*nq+m]
				ei := rd.e[i]
				for b := range row {
					row[b] = 2*acc[b] - rd.vq[ord[b]] - ei
				}
			}
			// Four, then two spikes at a time share the loads of tr.
			p := 0
			for ; p+4 <= len(list); p += 4 {
				var xs [4][]float64
				mq := int32(0)
				for k, i := range list[p : p+4] {
					xs[k] = rd.x[int(i)*d : (int(i)+1)*d]
					mq = max(mq, ws.m[int(i)-i0])
				}
				dots4T(ws.acc4, xs, tr, m8, (int(mq)+7)/8*8)
				for k, i := range list[p : p+4] {
					terms(i, ws.acc4[k])
				}
			}
			for ; p+2 <= len(list); p += 2 {
				i, k := list[p], list[p+1]
				mm := (int(max(ws.m[int(i)-i0], ws.m[int(k)-i0])) + 7) / 8 * 8
				dots2T(ws.acc, ws.acc2, rd.x[int(i)*d:(int(i)+1)*d], rd.x[int(k)*d:(int(k)+1)*d], tr, m8, mm)
				terms(i, ws.acc)
				terms(k, ws.acc2)
			}
			if p < len(list) {
				i := list[p]
				dotsT(ws.acc, rd.x[int(i)*d:(int(i)+1)*d], tr, m8, (int(ws.m[int(i)-i0])+7)/8*8)
				terms(i, ws.acc)
			}
		}
		// The spikes scored against every candidate: the terms of the
		// candidates beyond a spike's bound are ≤ 0 (see kmeansPP), so
		// they add nothing and the sums are the same.
		allTerms := func(i int32, acc []float64) {
			row := ws.delta[(int(i)-i0)*nq : (int(i)-i0)*nq+nq]
			ei := rd.e[i]
			for b := range row {
				row[b] = 2*acc[b] - rd.vq[b] - ei
			}
		}
		p := 0
		for ; p+4 <= len(full); p += 4 {
			var xs [4][]float64
			for k, i := range full[p : p+4] {
				xs[k] = rd.x[int(i)*d : (int(i)+1)*d]
			}
			dots4T(ws.acc4, xs, ws.trAll, nq8, nq8)
			for k, i := range full[p : p+4] {
				allTerms(i, ws.acc4[k])
			}
		}
		for ; p+2 <= len(full); p += 2 {
			i, k := full[p], full[p+1]
			dots2T(ws.acc, ws.acc2, rd.x[int(i)*d:(int(i)+1)*d], rd.x[int(k)*d:(int(k)+1)*d], ws.trAll, nq8, nq8)
			allTerms(i, ws.acc)
			allTerms(k, ws.acc2)
		}
		if p < len(full) {
			i := full[p]
			dotsT(ws.acc, rd.x[int(i)*d:(int(i)+1)*d], ws.trAll, nq8, nq8)
			allTerms(i, ws.acc)
		}
		ws.fullList = full
		for i := i0; i < i1; i++ {
			if i/scoreBlock != curBlk {
				rd.flush()
				curBlk = i / scoreBlock
			}
			m := int(ws.m[i-i0])
			if m == 0 {
				continue
			}
			if ws.full[i-i0] {
				ws.full[i-i0] = false
				for b, dl := range ws.delta[(i-i0)*nq : (i-i0)*nq+nq] {
					if dl > 0 {
						rd.blk[b] += dl
					}
				}
				continue
			}
			r := int(rows[i-i0])
			ord := rd.order[r*nq : r*nq+m]
			for b, dl := range ws.delta[(i-i0)*nq : (i-i0)*nq+m] {
				if dl > 0 {
					rd.blk[ord[b]] += dl
				}
			}
		}
	}
	rd.flush()
}

// denseChunk scores the spikes [i0, i1) with a candidate list (ws.m > 0)
// against all candidates, four at a time (dots4T on the round's transposed
// candidates), and adds max(δ, 0) of each into the block sums in spike
// order (termsAcc), flushing them where a spike starts a new block as the
// other path does. It returns the block the sums then hold.
func (rd *roundData) denseChunk(ws *vecWork, i0, i1, curBlk int) int {
	d, nq8 := rd.d, ws.nq8
	add := func(i int, acc []float64) {
		if i/scoreBlock != curBlk {
			rd.flush()
			curBlk = i / scoreBlock
		}
		termsAcc(rd.blk[:nq8], acc[:nq8], ws.vq8[:nq8], rd.e[i])
	}
	var pend [4]int
	np := 0
	for i := i0; i < i1; i++ {
		if ws.m[i-i0] == 0 {
			continue
		}
		pend[np] = i
		if np++; np < 4 {
			continue
		}
		var xs [4][]float64
		for k, j := range pend {
			xs[k] = rd.x[j*d : (j+1)*d]
		}
		dots4T(ws.acc4, xs, ws.trAll, nq8, nq8)
		for k, j := range pend {
			add(j, ws.acc4[k])
		}
		np = 0
	}
	for _, j := range pend[:np] {
		dotsT(ws.acc, rd.x[j*d:(j+1)*d], ws.trAll, nq8, nq8)
		add(j, ws.acc)
	}
	return curBlk
}
