package phy

import (
	"math"
	"sort"

	"dspk/detect"
	"dspk/internal/par"
)

// clusters accumulates, per template centre, what the cluster files
// need: the spike count, the amplitude sum and the sum of the spikes'
// wPCA features (NC×P per centre, in the detector's (channel, pc) order).
type clusters struct {
	nc, p  int
	count  []int64
	ampSum []float64
	feat   []float64 // feat[(f*nc+j)*p+q]
}

func newClusters(centres, nc, p int) *clusters {
	return &clusters{nc: nc, p: p, count: make([]int64, centres), ampSum: make([]float64, centres),
		feat: make([]float64, centres*nc*p)}
}

// add accumulates the spikes of one window.
func (c *clusters) add(s *detect.Spikes) {
	m := c.nc * c.p
	for i, f := range s.Center {
		c.count[f]++
		c.ampSum[f] += float64(s.Amplitude[i])
		dst := c.feat[int(f)*m : int(f+1)*m]
		for k, v := range s.Features[i*m : (i+1)*m] {
			dst[k] += float64(v)
		}
	}
}

// order returns the centres that have spikes, sorted by the shank of
// their nearest site, then y, then x (then centre index): cluster k is
// centre order[k].
func (c *clusters) order(g *detect.Grid, shank []int) []int {
	var used []int
	for f, n := range c.count {
		if n > 0 {
			used = append(used, f)
		}
	}
	sort.Slice(used, func(a, b int) bool {
		fa, fb := used[a], used[b]
		sa, sb := shank[g.IC[fa*g.NC]], shank[g.IC[fb*g.NC]]
		switch {
		case sa != sb:
			return sa < sb
		case g.Y[fa] != g.Y[fb]:
			return g.Y[fa] < g.Y[fb]
		case g.X[fa] != g.X[fb]:
			return g.X[fa] < g.X[fb]
		}
		return fa < fb
	})
	return used
}

// mean returns the mean features of centre f (NC×P, (channel, pc)).
func (c *clusters) mean(f int) []float64 {
	m := c.nc * c.p
	out := make([]float64, m)
	inv := 1 / float64(c.count[f])
	for k, v := range c.feat[f*m : (f+1)*m] {
		out[k] = v * inv
	}
	return out
}

// denseTemplate writes into dst (nt×C, zeroed here) the template of mean
// features w (NC×P) on channels chans: dst[t·C+chans[j]] = Σ_q w[j·P+q]·
// wPCA[q·nt+t], as Kilosort4 turns its cluster features into templates.
func denseTemplate(dst []float32, w []float64, chans []int32, wpca []float32, p, nt, C int) {
	clear(dst)
	for j, c := range chans {
		for t := 0; t < nt; t++ {
			var v float64
			for q := 0; q < p; q++ {
				v += w[j*p+q] * float64(wpca[q*nt+t])
			}
			dst[t*C+int(c)] = float32(v)
		}
	}
}

// similarity returns the K×K similarity of the templates of features w[k]
// (NC×P) on channels chans[k]: the maximum over lags |τ| < nt of the
// cross-correlation Σ_t Σ_c T_a[t, c]·T_b[t+τ, c] of the L2-normalised
// templates (Kilosort4's similar_templates). It works in feature space:
// with R_pq(τ) = Σ_t wPCA[p, t]·wPCA[q, t+τ] the cross-correlation is
// Σ_pq M_pq R_pq(τ), M_pq = Σ over shared channels of w_a[c, p]·w_b[c, q],
// so only pairs that share a channel cost anything. Pairs that share none
// are 0.
func similarity(w [][]float64, chans [][]int32, wpca []float32, p, nt, C int) []float32 {
	K := len(w)
	nl := 2*nt - 1
	// R[(pq)*nl + τ+nt-1]
	R := make([]float64, p*p*nl)
	for a := 0; a < p; a++ {
		for b := 0; b < p; b++ {
			for tau := -(nt - 1); tau < nt; tau++ {
				var s float64
				for t := max(0, -tau); t < nt && t+tau < nt; t++ {
					s += float64(wpca[a*nt+t]) * float64(wpca[b*nt+t+tau])
				}
				R[(a*p+b)*nl+tau+nt-1] = s
			}
		}
	}
	onSite := make([][]int, C)
	for k, ch := range chans {
		for _, c := range ch {
			onSite[c] = append(onSite[c], k)
		}
	}
	// cross is the best correlation of a and b over the lags (lag 0 only
	// if only0), with M as scratch.
	cross := func(M []float64, a, b int, only0 bool) (best float64) {
		clear(M)
		for ja, ca := range chans[a] {
			for jb, cb := range chans[b] {
				if ca != cb {
					continue
				}
				for x := 0; x < p; x++ {
					for y := 0; y < p; y++ {
						M[x*p+y] += w[a][ja*p+x] * w[b][jb*p+y]
					}
				}
			}
		}
		lo, hi := 0, nl
		if only0 {
			lo, hi = nt-1, nt
		}
		best = math.Inf(-1)
		for l := lo; l < hi; l++ {
			var s float64
			for pq, m := range M {
				s += m * R[pq*nl+l]
			}
			best = max(best, s)
		}
		return best
	}
	norm := make([]float64, K)
	out := make([]float32, K*K)
	// Rows a are shared out among the cores in small chunks taken in
	// turn (the first rows have the most partners b ≥ a); row a writes
	// (a, b) and (b, a) for b ≥ a only, so no two rows write one element,
	// and every value is computed as one loop would.
	eachRow := func(fn func(M []float64, seen []int, a int)) {
		const chunk = 4
		chunks := (K + chunk - 1) / chunk
		W := par.Workers(chunks)
		Ms, seens := make([][]float64, W), make([][]int, W)
		for w := range W {
			Ms[w], seens[w] = make([]float64, p*p), make([]int, K)
			for i := range seens[w] {
				seens[w][i] = -1
			}
		}
		par.Each(chunks, W, func(w, c int) {
			for a := c * chunk; a < min((c+1)*chunk, K); a++ {
				fn(Ms[w], seens[w], a)
			}
		})
	}
	eachRow(func(M []float64, _ []int, k int) { norm[k] = math.Sqrt(max(cross(M, k, k, true), 0)) })
	eachRow(func(M []float64, seen []int, a int) {
		for _, c := range chans[a] {
			for _, b := range onSite[c] {
				if b < a || seen[b] == a {
					continue
				}
				seen[b] = a
				var v float64
				if norm[a] > 0 && norm[b] > 0 {
					v = cross(M, a, b, false) / (norm[a] * norm[b])
				}
				out[a*K+b] = float32(v)
				out[b*K+a] = float32(v)
			}
		}
	})
	return out
}
