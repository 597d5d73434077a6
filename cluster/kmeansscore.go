package cluster

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
	nq := rd.nq
	n := len(rd.e)
	rows := rd.vecScratch(ws)
	curBlk := 0 // the spike block whose sums rd.blk holds
	for i0 := 0; i0 < n; i0 += vecChunk {
		i1 := min(n, i0+vecChunk)
		sumM, nz := rd.chunkPrefixes(ws, rows, i0, i1)
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
		rd.sparseChunk(ws, rows, i0, i1)
		curBlk = rd.addChunk(ws, rows, i0, i1, curBlk)
	}
	rd.flush()
}

// vecScratch sizes scoreVec's scratch for the round and returns the
// chunk's table of anchor rows per spike. The candidates' squared norms
// are padded with zeros to nq8, and the padding of the block sums
// cleared: the dense chunks' kernel works on whole vectors (a padded
// candidate's term is max(−e_i, 0) = 0).
func (rd *roundData) vecScratch(ws *vecWork) []int32 {
	d, nq := rd.d, rd.nq
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
	ws.vq8 = growF(ws.vq8, nq8)
	copy(ws.vq8, rd.vq[:nq])
	clear(ws.vq8[nq:])
	clear(rd.blk[nq:nq8])
	return rows
}

// chunkPrefixes sets, for the spikes [i0, i1), their candidate counts
// (ws.m) and anchor rows, and counts the spikes of each anchor with
// candidates (ws.start[r+1]); it returns the sum of the counts and the
// number of spikes with candidates.
func (rd *roundData) chunkPrefixes(ws *vecWork, rows []int32, i0, i1 int) (sumM, nz int) {
	clear(ws.start)
	for i := i0; i < i1; i++ {
		m, r := rd.prefix(i)
		ws.m[i-i0], rows[i-i0] = int32(m), int32(r)
		if m > 0 {
			ws.start[r+1]++
			sumM += m
			nz++
		}
	}
	return sumM, nz
}

// sparseChunk computes the terms (ws.delta) of the spikes [i0, i1) with
// candidates, anchor by anchor: against the anchor's candidates laid out
// (anchorTerms), or, where that costs more, against every candidate
// (fullTerms; those spikes marked in ws.full).
func (rd *roundData) sparseChunk(ws *vecWork, rows []int32, i0, i1 int) {
	d, nq := rd.d, rd.nq
	na := len(rd.order) / nq
	nq8 := (nq + 7) / 8 * 8
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
		rd.anchorTerms(ws, r, list, mMax, i0)
	}
	rd.fullTerms(ws, full, i0)
	ws.fullList = full
}

// anchorTerms computes the terms of the spikes list of anchor row r
// against the anchor's mMax nearest candidates, laid out transposed in
// ws.tr.
func (rd *roundData) anchorTerms(ws *vecWork, r int, list []int32, mMax int32, i0 int) {
	d, nq := rd.d, rd.nq
	m8 := (int(mMax) + 7) / 8 * 8
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

// fullTerms computes the terms of the spikes full against every
// candidate: the terms of the candidates beyond a spike's bound are ≤ 0
// (see kmeansPP), so they add nothing and the sums are the same.
func (rd *roundData) fullTerms(ws *vecWork, full []int32, i0 int) {
	d, nq, nq8 := rd.d, rd.nq, (rd.nq+7)/8*8
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
}

// addChunk adds the positive terms of the spikes [i0, i1) into the block
// sums in spike order, flushing them where a spike starts a new block,
// and returns the block the sums then hold.
func (rd *roundData) addChunk(ws *vecWork, rows []int32, i0, i1, curBlk int) int {
	nq := rd.nq
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
	return curBlk
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
