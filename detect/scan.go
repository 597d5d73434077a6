package detect

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// runChunk is one item of Detect's loop: worker w detects the spikes of
// chunk ci.
func (d *Detector) runChunk(w, ci int) { d.chunkRun(d.ws[w], ci) }

// blockGroup is the number of channels correlated before the centres
// whose highest channel is among them are evaluated (an even number: the
// correlation takes channel pairs).
const blockGroup = 4

// chunkRun detects the spikes whose peak column lies in chunk ci.
func (d *Detector) chunkRun(w *worker, ci int) {
	C, T, K := d.c, d.t, d.k
	R := d.nt0
	c0 := d.nt + ci*d.chunk
	c1 := min(c0+d.chunk, d.nt+d.owned)
	e0, e1 := max(c0-R, d.nt), min(c1+R, T-d.nt)
	W := e1 - e0

	// Temporal correlation of every channel over the chunk and its halo,
	// blockGroup channels at a time (in pairs), into the worker's ring
	// of channels (b, m: ring·(K+1)·W floats, in L2), with the
	// per-channel block maxima of max_k B². After each group the centres
	// whose highest channel lies in it are evaluated: their channels are
	// all in the ring, and the B they read is still in cache.
	//
	// Bound, then the exact responses where the bound allows Th. The
	// bound U² is first taken over blocks of boundBlock columns with the
	// per-channel block maxima of max_k B²; float addition is monotone,
	// so a block whose coarse sum is ≤ Th²(1−boundSlack) has every fine
	// sum ≤ it too, and skipping it changes nothing. The order in which
	// (f, i) are evaluated changes nothing: each is evaluated once, the
	// suppression looks points up by centre and column, and the
	// detections are sorted by (column, centre) below.
	nb := (W + boundBlock - 1) / boundBlock
	ring := d.ring
	b, m := w.b[:ring*K*W], w.m[:ring*W]
	mb := w.mb[:ring*nb]
	w.strong, w.bv = w.strong[:0], w.bv[:0]
	var tConvSum, tEvalSum time.Duration
	for gi, g0 := 0, 0; g0 < C; gi, g0 = gi+1, g0+blockGroup {
		tConv := time.Now()
		ng := min(blockGroup, C-g0)
		for j := 0; j < ng; j += 2 {
			c := g0 + j
			sa := c % ring
			if j+1 < ng {
				sb := (c + 1) % ring
				w.cor.correlate(b[sa*K*W:(sa+1)*K*W], m[sa*W:(sa+1)*W], d.x[c*T:(c+1)*T],
					b[sb*K*W:(sb+1)*K*W], m[sb*W:(sb+1)*W], d.x[(c+1)*T:(c+2)*T], e0, W)
			} else {
				w.cor.correlate(b[sa*K*W:(sa+1)*K*W], m[sa*W:(sa+1)*W], d.x[c*T:(c+1)*T], nil, nil, nil, e0, W)
			}
		}
		for c := g0; c < g0+ng; c++ {
			sl := c % ring
			row, rb := m[sl*W:(sl+1)*W], mb[sl*nb:(sl+1)*nb]
			jb := blockMaxVec(rb, row)
			blockMaxGo(rb[jb:], row[jb*boundBlock:])
		}
		tEval := time.Now()
		tConvSum += tEval.Sub(tConv)
		for _, f32 := range d.fg[d.fgOff[gi]:d.fgOff[gi+1]] {
			d.evalCentre(w, int(f32), W, nb)
		}
		tEvalSum += time.Since(tEval)
	}
	w.st.Columns += int64(W)
	w.st.ConvFlops += int64(2*C*K*d.nt) * int64(W)
	nfft := w.cor.n
	w.st.FFTFlops += int64((C+1)/2) * int64((W+w.cor.l-1)/w.cor.l) *
		(int64(1+K)*int64(nfft/4*(bitsLen(nfft)-1)/2*34) + int64(K*6*nfft))
	w.st.BlockBounds += int64(d.f * nb)
	w.st.ConvTime += tConvSum
	w.st.EvalTime += tEvalSum
	tSup := time.Now()

	// Local maxima over the nc2 nearest centres × ±nt0min columns: a
	// strong point p of an owned column is kept unless a strong point of
	// one of p's nc2 nearest centres (p's own among them) within R
	// columns has a larger response. The points of p's own centre were
	// checked by keepB (p.v < 0: not kept); those of the others are
	// looked up in their centre's run of w.strong, in column order.
	w.dets = w.dets[:0]
	strong := w.strong
	for _, p := range strong {
		if p.v < 0 {
			continue
		}
		if col := e0 + int(p.i); col < c0 || col >= c1 {
			continue
		}
		if d.suppressed(w, p, R) {
			continue
		}
		w.dets = append(w.dets, p)
	}
	slices.SortFunc(w.dets, func(a, b strongPt) int {
		if a.i != b.i {
			return int(a.i - b.i)
		}
		return int(a.f - b.f)
	})
	w.st.Strong += int64(len(w.strong))
	w.st.Spikes += int64(len(w.dets))
	d.emit(&d.res[ci], w, e0, W)
	w.st.SuppressTime += time.Since(tSup)
}

// suppressed reports whether a strong point of one of p's nc2 nearest
// centres other than p's own lies within R columns of p with a larger
// response (w.run holds each centre's run of w.strong).
func (d *Detector) suppressed(w *worker, p strongPt, R int) bool {
	lo, hi := p.i-int32(R), p.i+int32(R)
	for _, g := range d.g.IC2[int(p.f)*d.nc2 : int(p.f+1)*d.nc2] {
		if g == p.f {
			continue
		}
		run := w.strong[w.run[2*g]:w.run[2*g+1]]
		// The first point at column ≥ lo, then those up to hi.
		j, k := 0, len(run)
		for j < k {
			h := int(uint(j+k) >> 1)
			if run[h].i < lo {
				j = h + 1
			} else {
				k = h
			}
		}
		for ; j < len(run) && run[j].i <= hi; j++ {
			if run[j].a > p.a {
				return true
			}
		}
	}
	return false
}

// evalCentre evaluates centre f over a chunk of W columns (nb blocks):
// its coarse bound per block from the block maxima, then in each block
// that passes the fine bounds and, where they pass, the responses and
// the choice, appending the strong points to w.strong and their B
// values to w.bv.
func (d *Detector) evalCentre(w *worker, f, W, nb int) {
	K, nc, ring := d.k, d.nc, d.ring
	ic := d.g.IC[f*nc : (f+1)*nc]
	boffs, moffs, bfoffs := w.boffs[:nc], w.moffs[:nc], w.bfoffs[:nc]
	for j, c := range ic {
		sl := int(c) % ring
		boffs[j], moffs[j], bfoffs[j] = sl*nb, sl*W, sl*K*W
	}
	sb := w.sb[:nb]
	rowSum(sb, w.mb, boffs)
	start := len(w.strong)
	mo, bo := newRowOffs(moffs), newRowOffs(bfoffs)
	// The passing blocks as bits (few pass: a branch per block would
	// often be mispredicted).
	pass := w.pass[:(nb+63)/64]
	if d.noPrune {
		for j := range pass {
			pass[j] = ^uint64(0)
		}
		if nb%64 != 0 {
			pass[len(pass)-1] = 1<<(nb%64) - 1
		}
	} else if !passBitsVec(pass, sb, d.thr2) {
		passBitsGo(pass, sb, d.thr2)
	}
	w.bblk, w.bcols = w.bblk[:0], w.bcols[:0]
	if n, ok := finePassVec(w.bblk[:nb], w.bcols[:nb], pass, w.m[:d.ring*W], mo, W, d.thr2, d.noPrune); ok {
		// The fine bounds of every passing block in one kernel call
		// (the blocks' dependent sums overlap), then the responses and
		// choices in batches.
		np := 0
		for _, word := range pass {
			np += bits.OnesCount64(word)
		}
		w.st.BlockPass += int64(np)
		w.st.BoundEvals += int64(np * boundBlock)
		if last := nb - 1; W%boundBlock != 0 && pass[last/64]>>(last%64)&1 != 0 {
			w.st.BoundEvals -= int64(boundBlock - W%boundBlock)
		}
		for s := 0; s < n; s += evalBatch {
			e := min(n, s+evalBatch)
			d.evalResp(w, f, W, bo, w.bblk[s:e], w.bcols[s:e])
		}
	} else {
		for wi, word := range pass {
			for ; word != 0; word &= word - 1 {
				blk := wi*64 + bits.TrailingZeros64(word)
				d.evalBlock(w, f, blk, W, mo, bo)
			}
		}
		if len(w.bblk) > 0 {
			d.evalResp(w, f, W, bo, w.bblk, w.bcols)
		}
	}
	w.bblk, w.bcols = w.bblk[:0], w.bcols[:0]
	d.keepB(w, start, W)
	w.run[2*f], w.run[2*f+1] = int32(start), int32(len(w.strong))
}

// evalBlock evaluates centre f in block blk, whose coarse bound passed:
// its fine bounds and, where they pass, the responses and the choice.
// mo and bo are the offsets of f's channels in the ring's m and b.
func (d *Detector) evalBlock(w *worker, f, blk, W int, mo, bo rowOffs) {
	m := w.m[:d.ring*W]
	w.st.BlockPass++
	i0, i1 := blk*boundBlock, min(W, (blk+1)*boundBlock)
	u := w.u[:i1-i0]
	if !rowSumOffs(u, m[i0:], mo) {
		rowSumGo(u, m[i0:], mo.o)
	}
	w.st.BoundEvals += int64(i1 - i0)
	if !useAsm {
		for _, v := range u {
			if d.noPrune || v > d.thr2 {
				w.st.RespBlocks++
				break
			}
		}
		for ii, v := range u {
			if d.noPrune || v > d.thr2 {
				d.evaluate(w, f, i0+ii, W)
			}
		}
		return
	}
	// The vector path forms every bound and response of the block at
	// once (the same sums as evaluate) and then makes evaluate's choices
	// from them, at the columns whose bound passes (bit ii of cols).
	// The blocks are gathered into batches (evalResp) so that the
	// kernels of consecutive blocks, independent of each other, overlap
	// rather than wait on the branches that follow each.
	var cols uint32
	for ii, v := range u {
		if d.noPrune || v > d.thr2 {
			cols |= 1 << ii
		}
	}
	if cols == 0 {
		return
	}
	w.bblk = append(w.bblk, int32(blk))
	w.bcols = append(w.bcols, cols)
	if len(w.bblk) == evalBatch {
		d.evalResp(w, f, W, bo, w.bblk, w.bcols)
		w.bblk, w.bcols = w.bblk[:0], w.bcols[:0]
	}
}

// evalBatch is the number of blocks whose responses and then choices
// are formed one kernel call after the other (evalResp); their 9 KB of
// responses stay in L1.
const evalBatch = 16

// respSize is the number of floats of one block's bounds and responses
// (respGo).
func (d *Detector) respSize() int { return (d.k + d.k%2) * respRows * respStride }

// evalResp forms the bounds, responses and choices of the blocks blks
// of centre f (at most evalBatch, their passing columns in bcols) and
// appends their strong points to w.strong in column order.
func (d *Detector) evalResp(w *worker, f, W int, bo rowOffs, blks []int32, bcols []uint32) {
	K, nc := d.k, d.nc
	b := w.b[:d.ring*K*W]
	wt := d.wt[f*nc*d.s : (f+1)*nc*d.s]
	rs, cs := d.respSize(), chooseRows*respStride
	c := float32(1 - boundSlack)
	for bi, blk := range blks {
		i0 := int(blk) * boundBlock
		n := min(W, i0+boundBlock) - i0
		resp := w.resp[bi*rs : (bi+1)*rs]
		if !respOffs(resp, b[i0:], bo, K, d.s, W, n, wt, d.thr2, d.noPrune) {
			respGo(resp, b[i0:], bo.o, K, d.s, W, n, wt, d.thr2, d.noPrune)
		}
	}
	for bi := range blks {
		resp, ch := w.resp[bi*rs:(bi+1)*rs], w.choice[bi*cs:(bi+1)*cs]
		if !chooseVec(ch, resp, K, d.thr2, c, d.noPrune) {
			chooseGo(ch, resp, K, d.thr2, c, d.noPrune)
		}
	}
	w.st.RespBlocks += int64(len(blks))
	for bi, blk := range blks {
		cols := bcols[bi]
		ch := w.choice[bi*cs : (bi+1)*cs]
		i0 := int(blk) * boundBlock
		w.st.Survivors += int64(bits.OnesCount32(cols))
		var shapes float32
		for ; cols != 0; cols &= cols - 1 {
			ii := bits.TrailingZeros32(cols)
			shapes += ch[3*respStride+ii]
			if best := ch[ii]; best > d.th {
				w.strong = append(w.strong, strongPt{f: int32(f), i: int32(i0 + ii), a: best,
					q: int16(ch[respStride+ii]), sign: int8(ch[2*respStride+ii])})
			}
		}
		w.st.ShapeEvals += int64(shapes)
	}
}

// keepB records, for the strong points of one centre (w.strong[start:],
// in column order), the B values that emit needs, of the points that can
// survive the suppression: a point with a larger one of its own centre
// within ±nt0min columns is never kept (the centre is among its own nc2
// nearest), so it gets v = −1 and no values. The centre's channels are
// still in the ring.
func (d *Detector) keepB(w *worker, start, W int) {
	run := w.strong[start:]
	R, K := int32(d.nt0), d.k
	b := w.b
	for a := range run {
		p := &run[a]
		p.v = -1
		// The next points first: within a run of columns most points
		// have a larger neighbour.
		if (a > 0 && run[a-1].i >= p.i-R && run[a-1].a > p.a) ||
			(a+1 < len(run) && run[a+1].i <= p.i+R && run[a+1].a > p.a) {
			continue
		}
		keep := true
		for j := a - 1; j >= 0 && run[j].i >= p.i-R; j-- {
			if run[j].a > p.a {
				keep = false
				break
			}
		}
		for j := a + 1; keep && j < len(run) && run[j].i <= p.i+R; j++ {
			if run[j].a > p.a {
				keep = false
			}
		}
		if !keep {
			continue
		}
		p.v = int32(len(w.bv))
		kw := int(p.q)%K*W + int(p.i)
		for _, o := range w.bfoffs[:d.nc] {
			w.bv = append(w.bv, b[o+kw])
		}
	}
}

// evaluate computes the best of the S·K responses at centre f, chunk
// column i, and records it if it exceeds Th. Responses are float32 sums
// over the nc channels in nearest-first order; the best is the largest
// |A|, the lowest q = s·K+k on ties (torch.argmax). With pruning a shape
// k is skipped when u_k = Σ_j B[iC(j,f),k,t]² ≤ Th²(1−boundSlack) (its S
// responses are then at most Th) or u_k < best²(1−boundSlack) (they are
// then below the best so far, so they can neither win nor tie).
func (d *Detector) evaluate(w *worker, f, i, W int) {
	K, S, nc := d.k, d.s, d.nc
	b := w.b
	offs := w.goffs[:nc]
	for j, o := range w.bfoffs[:nc] {
		offs[j] = o + i
	}
	wf := d.g.Weights[f*S*nc : (f+1)*S*nc]
	acc := w.acc[:S]
	best, bq, sign := float32(-1), 0, int8(0)
	w.st.Survivors++
	for k := range K {
		kw := k * W
		if !d.noPrune {
			var uk float32
			for _, o := range offs {
				v := b[o+kw]
				uk += v * v
			}
			if !(uk > d.thr2) || (best > 0 && uk < best*best*(1-boundSlack)) {
				continue
			}
		}
		w.st.ShapeEvals++
		if S == 5 {
			// The default sizes, with the sums in registers.
			wt := d.wt[f*nc*5 : (f+1)*nc*5]
			var a0, a1, a2, a3, a4 float32
			for j, o := range offs {
				v := b[o+kw]
				ws := wt[j*5 : j*5+5]
				a0 += ws[0] * v
				a1 += ws[1] * v
				a2 += ws[2] * v
				a3 += ws[3] * v
				a4 += ws[4] * v
			}
			acc[0], acc[1], acc[2], acc[3], acc[4] = a0, a1, a2, a3, a4
		} else {
			clear(acc)
			for j, o := range offs {
				v := b[o+kw]
				for s := range acc {
					acc[s] += wf[s*nc+j] * v
				}
			}
		}
		for s, a := range acc {
			aa := float32(math.Abs(float64(a)))
			if q := s*K + k; aa > best || (aa == best && q < bq) {
				best, bq = aa, q
				sign = 1
				if a < 0 {
					sign = -1
				}
			}
		}
	}
	if best > d.th {
		w.strong = append(w.strong, strongPt{f: int32(f), i: int32(i), a: best, q: int16(bq), sign: sign})
	}
}

// rowSum is rowSumGo, with the vector kernel where there is one.
func rowSum(dst, src []float32, offs []int) {
	if !rowSumVec(dst, src, offs) {
		rowSumGo(dst, src, offs)
	}
}

// emit writes the detections of w.dets (chunk columns from e0) into out.
func (d *Detector) emit(out *Spikes, w *worker, e0, W int) {
	out.Reset()
	out.NC, out.P = d.nc, d.p
	nc, nt, T, P := d.nc, d.nt, d.t, d.p
	g := d.g
	wpca := d.tm.WPCA
	for di, p := range w.dets {
		if di+1 < len(w.dets) {
			// The next detection's samples, requested while this one's
			// features are formed: the rows are far apart in memory.
			q := w.dets[di+1]
			qc := e0 + int(q.i) - d.half
			for _, c := range g.IC[int(q.f)*nc : int(q.f+1)*nc] {
				prefetch(d.x[int(c)*T+qc : int(c)*T+qc+nt])
			}
		}
		col := e0 + int(p.i)
		f := int(p.f)
		out.Sample = append(out.Sample, d.ownStart+int64(col-nt)-int64(d.half-d.nt0))
		out.Center = append(out.Center, p.f)
		out.Template = append(out.Template, p.q)
		out.Sign = append(out.Sign, p.sign)
		out.Amplitude = append(out.Amplitude, p.a)
		ic := g.IC[f*nc : (f+1)*nc]
		var sw, sx, sy float64
		bv := w.bv[p.v : int(p.v)+nc] // p.v ≥ 0: p was kept
		for j, c := range ic {
			v := float64(bv[j]) * float64(p.sign)
			if v > 0 {
				sw += v
				sx += v * g.ChanX[c]
				sy += v * g.ChanY[c]
			}
		}
		out.X = append(out.X, float32(sx/sw))
		out.Y = append(out.Y, float32(sy/sw))
		out.Channels = append(out.Channels, ic...)
		for _, c := range ic {
			xs := d.x[int(c)*T+col-d.half : int(c)*T+col-d.half+nt]
			// Four (then two) features at a time: independent sums, each
			// in sample order as one sum alone, overlap their latencies.
			q := 0
			for ; q+4 <= P; q += 4 {
				w0, w1 := wpca[q*nt:(q+1)*nt], wpca[(q+1)*nt:(q+2)*nt]
				w2, w3 := wpca[(q+2)*nt:(q+3)*nt], wpca[(q+3)*nt:(q+4)*nt]
				var a0, a1, a2, a3 float64
				for j, v := range xs {
					x := float64(v)
					a0 += x * float64(w0[j])
					a1 += x * float64(w1[j])
					a2 += x * float64(w2[j])
					a3 += x * float64(w3[j])
				}
				out.Features = append(out.Features, float32(a0), float32(a1), float32(a2), float32(a3))
			}
			for ; q+2 <= P; q += 2 {
				w0, w1 := wpca[q*nt:(q+1)*nt], wpca[(q+1)*nt:(q+2)*nt]
				var a0, a1 float64
				for j, v := range xs {
					x := float64(v)
					a0 += x * float64(w0[j])
					a1 += x * float64(w1[j])
				}
				out.Features = append(out.Features, float32(a0), float32(a1))
			}
			for ; q < P; q++ {
				wp := wpca[q*nt : (q+1)*nt]
				var acc float64
				for j, v := range xs {
					acc += float64(v) * float64(wp[j])
				}
				out.Features = append(out.Features, float32(acc))
			}
		}
	}
}
