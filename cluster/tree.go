package cluster

import "math"

// merge is one step of the merge tree: node = a ∪ b, a the first stored
// child (node of x), b the second (node of y), rho the merge ratio.
type merge struct {
	a, b, node int
	rho        float64
}

// makeTree builds the greedy merge tree of a group's K labels
// (kilosort4-sort.md §5.6, float64): link counts cc[a,b] from spikes of
// label a to landmarks of label b and expectations cneg[a,b] = 0.001 +
// (Σ k_i)(Σ k_s)/m, both symmetrised; K−1 merges of the first maximum of
// ρ = cc/cneg in row-major order.
func makeTree(g *graph, c, d []int32, K int) []merge {
	cc := make([]float64, K*K)
	cneg := make([]float64, K*K)
	kiSum := make([]float64, K)
	ksSum := make([]float64, K)
	for i := 0; i < g.n; i++ {
		a := int(c[i])
		kiSum[a] += float64(g.ki[i])
		for _, s := range g.kn[i*g.k : (i+1)*g.k] {
			if s != g.selfOf[i] {
				cc[a*K+int(d[s])]++
			}
		}
	}
	for s := 0; s < g.s; s++ {
		ksSum[d[s]] += float64(g.ks[s])
	}
	m := float64(g.m)
	for a := 0; a < K; a++ {
		for b := 0; b < K; b++ {
			cneg[a*K+b] = 0.001
			if m > 0 {
				cneg[a*K+b] += kiSum[a] * ksSum[b] / m
			}
		}
	}
	symmetrise(cc, K)
	symmetrise(cneg, K)
	rho := make([]float64, K*K)
	for i := range rho {
		rho[i] = cc[i] / cneg[i]
	}
	for a := 0; a < K; a++ {
		rho[a*K+a] = -1
	}
	node := make([]int, K)
	for a := range node {
		node[a] = a
	}
	out := make([]merge, 0, max(K-1, 0))
	for k := 0; k < K-1; k++ {
		best := 0
		for i := 1; i < K*K; i++ {
			if rho[i] > rho[best] {
				best = i
			}
		}
		y, x := best/K, best%K
		out = append(out, merge{a: node[x], b: node[y], node: K + k, rho: rho[best]})
		node[y] = K + k
		for j := 0; j < K; j++ {
			cc[y*K+j] += cc[x*K+j]
			cneg[y*K+j] += cneg[x*K+j]
		}
		for j := 0; j < K; j++ {
			cc[j*K+y] += cc[j*K+x]
			cneg[j*K+y] += cneg[j*K+x]
		}
		for j := 0; j < K; j++ {
			cc[x*K+j], cc[j*K+x] = -1, -1
		}
		for j := 0; j < K; j++ {
			rho[y*K+j] = cc[y*K+j] / cneg[y*K+j]
			rho[j*K+y] = cc[j*K+y] / cneg[j*K+y]
		}
		rho[y*K+y] = -1
		for j := 0; j < K; j++ {
			rho[x*K+j], rho[j*K+x] = -1, -1
		}
	}
	return out
}

// symmetrise sets a ← a + aᵀ for a K×K matrix.
func symmetrise(a []float64, K int) {
	for i := 0; i < K; i++ {
		a[i*K+i] *= 2
		for j := i + 1; j < K; j++ {
			s := a[i*K+j] + a[j*K+i]
			a[i*K+j], a[j*K+i] = s, s
		}
	}
}

// splitter decides the splits of a group's merge tree
// (kilosort4-sort.md §5.7).
type splitter struct {
	x    []float64 // [n·d] features
	n, d int
	c    []int32 // spike labels (leaves)
	prm  *Params
}

// keep reports whether the split of merge mg stays: its ρ is below
// SplitModularity or the bimodality score of its children reaches
// SplitBimodality (a NaN score keeps it too).
func (sp *splitter) keep(mg merge, leaves [][]int, K int) bool {
	if mg.rho < sp.prm.SplitModularity {
		return true
	}
	return !(sp.bimodality(leaves[mg.a], leaves[mg.b], K) < sp.prm.SplitBimodality)
}

// finalLabels visits the merges from the root down, asks keep about each
// merge not yet invalidated, and where keep says no makes the node one
// cluster (invalidating every merge below it). It returns each leaf's
// final cluster (clusters numbered in ascending node id) and the number
// of clusters.
func finalLabels(tree []merge, K int, keep func(mg merge, leaves [][]int) bool) ([]int32, int) {
	nodes := K + len(tree)
	made := make([]int, nodes) // node → merge creating it, −1 for leaves
	parent := make([]int, nodes)
	for i := range made {
		made[i], parent[i] = -1, -1
	}
	leaves := make([][]int, nodes)
	for k := 0; k < K; k++ {
		leaves[k] = []int{k}
	}
	for k, mg := range tree {
		made[mg.node] = k
		parent[mg.a], parent[mg.b] = mg.node, mg.node
		// The new node's leaves: y's (b) then x's (a).
		leaves[mg.node] = append(append([]int(nil), leaves[mg.b]...), leaves[mg.a]...)
	}
	valid := make([]bool, len(tree))
	for k := range valid {
		valid[k] = true
	}
	var invalidate func(node int)
	invalidate = func(node int) {
		if k := made[node]; k >= 0 && valid[k] {
			valid[k] = false
			invalidate(tree[k].a)
			invalidate(tree[k].b)
		}
	}
	for k := len(tree) - 1; k >= 0; k-- {
		if !valid[k] {
			continue
		}
		if !keep(tree[k], leaves) {
			invalidate(tree[k].node)
		}
	}
	// Final clusters: children of a valid merge not made by a valid one.
	final := make([]int, nodes)
	for i := range final {
		final[i] = -1
	}
	nf := 0
	for nd := 0; nd < nodes; nd++ {
		p := parent[nd]
		if p < 0 || !valid[made[p]] {
			continue
		}
		if k := made[nd]; k >= 0 && valid[k] {
			continue
		}
		final[nd] = nf
		nf++
	}
	out := make([]int32, K)
	if nf == 0 {
		return out, 1
	}
	for l := 0; l < K; l++ {
		nd := l
		for final[nd] < 0 {
			nd = parent[nd]
		}
		out[l] = int32(final[nd])
	}
	return out, nf
}

// bimodality returns the split score of the spikes of leaves a (label +1)
// against those of leaves b (−1): a ridge regression of the labels on the
// features (last feature replaced by 1) weighted by the other class's
// share, then the dip of the smoothed histogram of the projections.
func (sp *splitter) bimodality(a, b []int, K int) float64 {
	side := make([]int8, K)
	for _, l := range a {
		side[l] = 1
	}
	for _, l := range b {
		side[l] = -1
	}
	var na, nb int
	for _, l := range sp.c {
		switch side[l] {
		case 1:
			na++
		case -1:
			nb++
		}
	}
	d := sp.d
	tot := float64(na + nb)
	wa, wb := float64(nb)/tot, float64(na)/tot
	A := make([]float64, d*d)
	rhs := make([]float64, d)
	xt := make([]float64, d)
	for i, l := range sp.c {
		s := side[l]
		if s == 0 {
			continue
		}
		copy(xt, sp.x[i*d:(i+1)*d])
		xt[d-1] = 1
		w, y := wa, 1.0
		if s < 0 {
			w, y = wb, -1
		}
		for p := 0; p < d; p++ {
			wp := w * xt[p]
			row := A[p*d : p*d+p+1]
			for q := range row {
				row[q] += wp * xt[q]
			}
			rhs[p] += wp * y
		}
	}
	for p := 0; p < d; p++ {
		for q := 0; q < p; q++ {
			A[q*d+p] = A[p*d+q]
		}
		A[p*d+p] += sp.prm.Ridge
	}
	wv, ok := solveSPD(A, rhs, d)
	if !ok {
		return math.Inf(-1) // a singular system: no split
	}
	bins := sp.prm.Bins
	edges := linspace(-2, 2, bins+1)
	proj := make([]float64, 0, na+nb)
	for i, l := range sp.c {
		if side[l] == 0 {
			continue
		}
		copy(xt, sp.x[i*d:(i+1)*d])
		xt[d-1] = 1
		proj = append(proj, dot(xt, wv))
	}
	return dipScore(gaussSmooth(histogram(proj, edges), sp.prm.Sigma))
}

// dipScore returns 1 − max(h_min/h1, h_min/h2) for a smoothed histogram h
// (rounded to float32 as Kilosort4 smooths in float32): h_min is the first
// minimum over the 50 central bins (175…224 of 399), h1 the maximum left
// of it, h2 the maximum from it on. A NaN ratio gives NaN (a split).
func dipScore(h []float64) float64 {
	hf := make([]float64, len(h))
	for i, v := range h {
		hf[i] = float64(float32(v))
	}
	lo := (len(hf) - 49) / 2
	lo = max(lo, 1)
	hi := min(lo+50, len(hf))
	b := lo
	for i := lo + 1; i < hi; i++ {
		if hf[i] < hf[b] {
			b = i
		}
	}
	hmin := hf[b]
	h1, h2 := hf[0], hf[b]
	for _, v := range hf[:b] {
		h1 = max(h1, v)
	}
	for _, v := range hf[b:] {
		h2 = max(h2, v)
	}
	r1, r2 := hmin/h1, hmin/h2
	if math.IsNaN(r1) || math.IsNaN(r2) {
		return math.NaN()
	}
	return 1 - max(r1, r2)
}

// solveSPD solves A·x = b for a symmetric positive definite d×d A by
// Cholesky (A is overwritten); ok is false if A is not positive definite.
func solveSPD(A, b []float64, d int) ([]float64, bool) {
	for j := 0; j < d; j++ {
		s := A[j*d+j]
		for k := 0; k < j; k++ {
			s -= A[j*d+k] * A[j*d+k]
		}
		if !(s > 0) {
			return nil, false
		}
		ljj := math.Sqrt(s)
		A[j*d+j] = ljj
		for i := j + 1; i < d; i++ {
			t := A[i*d+j]
			for k := 0; k < j; k++ {
				t -= A[i*d+k] * A[j*d+k]
			}
			A[i*d+j] = t / ljj
		}
	}
	x := make([]float64, d)
	for i := 0; i < d; i++ {
		t := b[i]
		for k := 0; k < i; k++ {
			t -= A[i*d+k] * x[k]
		}
		x[i] = t / A[i*d+i]
	}
	for i := d - 1; i >= 0; i-- {
		t := x[i]
		for k := i + 1; k < d; k++ {
			t -= A[k*d+i] * x[k]
		}
		x[i] = t / A[i*d+i]
	}
	return x, true
}
