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
