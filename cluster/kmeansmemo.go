package cluster

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// kmeansMemoBytes bounds the inner products that the groups in flight
// keep in kmeansPPMemo, together: a group's rows (n rounded up to 8
// float64 per distinct candidate, at most min(n, rounds × candidates)
// rows) are reserved before it starts, and a group whose reservation
// would pass the bound takes the pruned path of kmeansPP instead. Both
// paths give the same labels bit for bit, so which one a group takes
// changes only its time. A variable so that tests can force either path.
var kmeansMemoBytes int64 = 768 << 20

// memoInUse is the memo bytes reserved by the groups in flight.
var memoInUse atomic.Int64

// memoReserve reserves the rows of a group of n spikes and reports how
// many bytes it took (0: none, run the pruned path).
func memoReserve(n, nInit, nCand int) int64 {
	n8 := (n + 7) / 8 * 8
	need := int64(n8) * int64(min(n, nInit*nCand)) * 8
	if need > kmeansMemoBytes {
		return 0
	}
	if memoInUse.Add(need) > kmeansMemoBytes {
		memoInUse.Add(-need)
		return 0
	}
	return need
}

// kmeansPPMemo is kmeansPP for groups small enough to keep, for every
// spike ever drawn as a candidate, its inner products with all the group's
// spikes: a spike is drawn many times over the rounds (a 2 000-spike group
// sees 20 000 draws), and each inner product is computed once instead of
// once per draw. Row q holds x_i·x_q for every i, summed in the order
// t = 0 … d−1 from 0 (products of float32 values are exact, so this is
// dot(x_i, x_q) bit for bit), and a round then only reads rows: its
// candidate scores, the terms of every spike in the blocked order of
// scoreBlock, and its update are those of the reference, bit for bit, with
// no pruning (a term ≤ 0 adds nothing either way).
func kmeansPPMemo(x []float64, n, d, nInit, nCand int, rng *rand.Rand, stop func() bool) []int32 {
	n8 := (n + 7) / 8 * 8
	v := make([]float64, n)
	for i := range v {
		xi := x[i*d : (i+1)*d]
		v[i] = dot(xi, xi)
	}
	// The rows transposed (d × n8, zero-padded): one candidate's inner
	// products with every spike are then dotsT of the candidate's row
	// against them, contiguous in i.
	xt := make([]float64, d*n8)
	for i := 0; i < n; i++ {
		for t, val := range x[i*d : (i+1)*d] {
			xt[t*n8+i] = val
		}
	}
	e := make([]float64, n)
	c := make([]int32, n)
	w := make([]float64, n)
	idx := make([]int32, 0, nCand)
	keys := make([]float64, 0, nCand)
	rows := make([][]float64, n) // spike → its inner products, once drawn
	slab := memoSlab{n8: n8}
	defer slab.release()
	score := make([]float64, nCand)
	var fresh []int32
	for j := 0; j < nInit; j++ {
		q := drawCandidates(rng, v, e, w, nCand, idx, keys, stop)
		nq := len(q)
		if nq == 0 {
			break
		}
		fresh = fresh[:0]
		for _, qi := range q {
			if rows[qi] == nil {
				rows[qi] = slab.row()
				fresh = append(fresh, qi)
			}
		}
		memoRows(rows, fresh, x, xt, d, n8)
		for a, qi := range q {
			score[a] = memoScore(rows[qi][:n], e, v[qi])
		}
		best := pickBest(j, score[:nq])
		row, vb := rows[q[best]][:n], v[q[best]]
		for i, g := range row {
			if gi := 2*g - vb; gi-e[i] > 0 {
				c[i] = int32(j)
				e[i] = gi
			}
		}
	}
	return c
}

// memoRows fills the rows of the candidates fresh: rows[q][i] = x_i·x_q,
// four candidates at a time against the transposed rows xt (d × n8), in
// column blocks of memoCols so that the block of xt stays in the core's
// second-level cache while every candidate passes over it.
func memoRows(rows [][]float64, fresh []int32, x, xt []float64, d, n8 int) {
	for b0 := 0; b0 < n8; b0 += memoCols {
		m := min(memoCols, n8-b0)
		tr := xt[b0:]
		k := 0
		for ; k+4 <= len(fresh); k += 4 {
			var acc, xs [4][]float64
			for j, q := range fresh[k : k+4] {
				acc[j] = rows[q][b0:]
				xs[j] = x[int(q)*d : (int(q)+1)*d]
			}
			dots4T(acc, xs, tr, n8, m)
		}
		for _, q := range fresh[k:] {
			dotsT(rows[q][b0:], x[int(q)*d:(int(q)+1)*d], tr, n8, m)
		}
	}
}

// memoCols is memoRows' column block: d × memoCols float64 of xt, 368 KB
// at d = 90.
const memoCols = 512

// memoScore returns a candidate's score Σ_i max((2·g_i − vq) − e_i, 0)
// from its row g of inner products: the terms of each block of scoreBlock
// spikes summed in spike order from 0, the block sums in block order
// (the order of kmeansPP and of the CUDA back end).
func memoScore(g, e []float64, vq float64) float64 {
	s := 0.0
	for b0 := 0; b0 < len(g); b0 += scoreBlock {
		b1 := min(len(g), b0+scoreBlock)
		s += blockTerms(g[b0:b1], e[b0:b1], vq)
	}
	return s
}

// memoChunk is the length of the pooled chunks memo rows are cut from
// (4 MiB of float64).
const memoChunk = 1 << 19

// memoChunks keeps the chunks between groups: a clustering runs many
// groups on each worker, and fresh memory would be faulted in (and
// zeroed) anew for every one of them. Rows are written whole before they
// are read, so a chunk is reused as it is.
var memoChunks = sync.Pool{New: func() any { return new([memoChunk]float64) }}

// memoSlab hands out rows of n8 float64 cut from pooled chunks.
type memoSlab struct {
	n8     int
	chunks []*[memoChunk]float64
	used   int // rows cut from the last chunk
}

// row returns a new row of n8 values (n8 ≤ memoChunk), contents
// unspecified.
func (s *memoSlab) row() []float64 {
	per := memoChunk / s.n8
	if len(s.chunks) == 0 || s.used == per {
		s.chunks = append(s.chunks, memoChunks.Get().(*[memoChunk]float64))
		s.used = 0
	}
	c := s.chunks[len(s.chunks)-1]
	r := c[s.used*s.n8 : (s.used+1)*s.n8 : (s.used+1)*s.n8]
	s.used++
	return r
}

// release returns the chunks to the pool; the rows must not be used
// after it.
func (s *memoSlab) release() {
	for _, c := range s.chunks {
		memoChunks.Put(c)
	}
	s.chunks = nil
}
