package linalg

import (
	"fmt"
	"math"

	"dspk/internal/par"
)

// zcaChunks is the number of channel chunks LocalZCA shares out among
// goroutines.
const zcaChunks = 64

// localNeighbours returns the nrange channels nearest to c by squared
// Euclidean distance in (x, y): c itself first, then the others in order of
// increasing squared distance, ties broken by lower channel index. d and buf
// are scratch of len(x) elements.
func localNeighbours(c int, x, y []float64, nrange int, d []float64, buf []int) []int {
	buf = append(buf[:0], c)
	for i := range x {
		dx, dy := x[i]-x[c], y[i]-y[c]
		d[i] = dx*dx + dy*dy
	}
	// The nearest nrange−1 others, kept sorted as the channels come in
	// index order: a channel goes after those of equal distance, which is
	// the order of a stable sort by distance.
	for i := range x {
		if i == c || (len(buf) == nrange && d[i] >= d[buf[nrange-1]]) {
			continue
		}
		at := len(buf)
		for at > 1 && d[buf[at-1]] > d[i] {
			at--
		}
		if len(buf) < nrange {
			buf = append(buf, 0)
		}
		copy(buf[at+1:], buf[at:len(buf)-1])
		buf[at] = i
	}
	return buf
}

// LocalZCA returns Kilosort4's local whitening operator (whitening_local)
// for the C×C second moment cc (row-major) of channels at positions
// (x[c], y[c]):
//
// For each channel c, N(c) are its n = min(nrange, C) nearest channels:
// c itself first, then the others by increasing squared Euclidean distance,
// equal distances in increasing channel order. (Kilosort4 uses np.argsort,
// whose order among equal distances is not specified; with ties at the
// n-th place the chosen sets can differ.) The n×n block B = cc[N(c), N(c)]
// is decomposed, B = E·diag(λ)·Eᵀ ([EigSym], float64), and
//
//	W_c = E·diag((|λ| + eps)^−½)·Eᵀ,
//
// |λ| being the singular values of the symmetric B, as Kilosort4 takes
// them from svd(B). Row c of the result is row 0 of W_c (the row of c),
// placed in the columns N(c): Index[c*n+j] = N(c)[j] and Value[c*n+j] =
// float32(W_c[0, j]); K = n. eps is Kilosort4's 1e−6 (kilosort.WhiteningEps) for
// data in µV; there is no other regularisation or scaling.
//
// LocalZCA panics unless C ≥ 1, nrange ≥ 1, eps ≥ 0, len(cc) == C*C and
// len(x) == len(y) == C. NaN or Inf in cc (for example the result of a
// [SecondMoment] with no windows), or a failed decomposition, is an error
// naming the channel.
func LocalZCA(cc []float64, C int, x, y []float64, nrange int, eps float64) (*Whitening, error) {
	if C < 1 || nrange < 1 || !(eps >= 0) || len(cc) != C*C || len(x) != C || len(y) != C {
		panic(fmt.Sprintf("linalg: LocalZCA: C=%d nrange=%d eps=%g len(cc)=%d len(x)=%d len(y)=%d",
			C, nrange, eps, len(cc), len(x), len(y)))
	}
	for i, v := range cc {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("linalg: LocalZCA: second moment entry (%d, %d) is %v", i/C, i%C, v)
		}
	}
	n := min(nrange, C)
	w := &Whitening{C: C, K: n, Index: make([]int32, C*n), Value: make([]float32, C*n)}
	// Channels are independent: share them out in chunks, each with its own
	// scratch. failed[k] records a failed decomposition in chunk k.
	chunks := min(C, zcaChunks)
	failed := make([]int, chunks)
	par.Each(chunks, par.Workers(chunks), func(_, k int) {
		failed[k] = -1
		block := make([]float64, n*n)
		vals, vecs := make([]float64, n), make([]float64, n*n)
		eig := newEigWork(n)
		scale := make([]float64, n)
		buf, dist := make([]int, 0, C), make([]float64, C)
		for c := k * C / chunks; c < (k+1)*C/chunks; c++ {
			nb := localNeighbours(c, x, y, n, dist, buf)
			for a, i := range nb {
				for b, j := range nb {
					block[a*n+b] = cc[i*C+j]
				}
			}
			if !eig.eigSym(vals, vecs, block) {
				failed[k] = c
				return
			}
			for q, l := range vals {
				scale[q] = 1 / math.Sqrt(math.Abs(l)+eps)
			}
			// Row 0 of E·diag(scale)·Eᵀ, vecs holding the eigenvectors as rows.
			for b := 0; b < n; b++ {
				var s float64
				for q := 0; q < n; q++ {
					s += vecs[q*n] * scale[q] * vecs[q*n+b]
				}
				w.Index[c*n+b] = int32(nb[b])
				w.Value[c*n+b] = float32(s)
			}
		}
	})
	for _, c := range failed {
		if c >= 0 {
			return nil, fmt.Errorf("linalg: LocalZCA: eigendecomposition failed for channel %d", c)
		}
	}
	return w, nil
}

// LocalZCAGroups is [LocalZCA] with each channel's neighbourhood taken
// within its group only (group[c], e.g. a probe's shank ids): N(c) holds
// the min(nrange, size of c's group) nearest channels of c's group, so
// that no channel is whitened with another group's. K is the largest
// neighbourhood; the rows of smaller ones are padded with zero values in
// the channel's own column. With a single group the result equals
// LocalZCA's. LocalZCAGroups panics as LocalZCA does, or if len(group)
// != C.
func LocalZCAGroups(cc []float64, C int, x, y []float64, group []int, nrange int, eps float64) (*Whitening, error) {
	if len(group) != C {
		panic(fmt.Sprintf("linalg: LocalZCAGroups: %d group ids for %d channels", len(group), C))
	}
	members := map[int][]int{}
	for c, g := range group {
		members[g] = append(members[g], c)
	}
	if len(members) <= 1 {
		return LocalZCA(cc, C, x, y, nrange, eps)
	}
	for i, v := range cc {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("linalg: LocalZCA: second moment entry (%d, %d) is %v", i/C, i%C, v)
		}
	}
	k := 0
	for _, m := range members {
		k = max(k, min(nrange, len(m)))
	}
	w := &Whitening{C: C, K: k, Index: make([]int32, C*k), Value: make([]float32, C*k)}
	// Each group is whitened alone: its second moment block, its
	// positions, LocalZCA; the rows are mapped back to channel numbers.
	for _, m := range members {
		n := len(m)
		sub := make([]float64, n*n)
		sx, sy := make([]float64, n), make([]float64, n)
		for a, i := range m {
			sx[a], sy[a] = x[i], y[i]
			for b, j := range m {
				sub[a*n+b] = cc[i*C+j]
			}
		}
		gw, err := LocalZCA(sub, n, sx, sy, nrange, eps)
		if err != nil {
			return nil, fmt.Errorf("%w (in the group of channel %d)", err, m[0])
		}
		for a, c := range m {
			for j := range k {
				w.Index[c*k+j] = int32(c)
				if j < gw.K {
					w.Index[c*k+j] = int32(m[gw.Index[a*gw.K+j]])
					w.Value[c*k+j] = gw.Value[a*gw.K+j]
				}
			}
		}
	}
	return w, nil
}
