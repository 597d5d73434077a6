package match

import (
	"math"
	"math/rand/v2"
	"sort"
)

// refSpike is a spike of the reference matcher.
type refSpike struct {
	t    int
	u    int
	a, q float64
}

// refMatch is a plain float64 statement of the matching rule: every round
// recomputes B from the residual directly (no cross-correlation updates,
// no sparsity, no chunks), finds the round's spikes and subtracts their
// fitted templates from the residual. It returns the spikes in order of
// column, then template, and the features [spike][nc][P].
func refMatch(tm *Templates, x []float32, T, owned int, prm Params, icc func(u int) []int) ([]refSpike, [][]float64) {
	N, C, P, nt := tm.N, tm.C, tm.P, prm.NT
	h := nt / 2
	ut := make([][]float64, N) // [c][j]
	nm := make([]float64, N)
	for u := range N {
		ut[u] = make([]float64, C*nt)
		for c := range C {
			for j := range nt {
				var s float64
				for p := range P {
					s += float64(tm.U[(u*C+c)*P+p]) * float64(tm.WPCA[p*nt+j])
				}
				ut[u][c*nt+j] = s
			}
			for p := range P {
				v := float64(tm.U[(u*C+c)*P+p])
				nm[u] += v * v
			}
		}
	}
	xr := make([]float64, len(x))
	for i, v := range x {
		xr[i] = float64(v)
	}
	at := func(c, t int) float64 {
		if t < 0 || t >= T {
			return 0
		}
		return xr[c*T+t]
	}
	th2 := prm.ThLearned * prm.ThLearned
	var all []refSpike
	for range prm.MaxPeels {
		s := make([]float64, T)
		su := make([]int, T)
		b := make([][]float64, N)
		for u := range N {
			b[u] = make([]float64, T)
			for t := nt; t < T-nt; t++ {
				var v float64
				for c := range C {
					for j := range nt {
						v += at(c, t+j-h) * ut[u][c*nt+j]
					}
				}
				b[u][t] = v
				if v > 0 && v*v/nm[u] > s[t] {
					s[t], su[t] = v*v/nm[u], u
				}
			}
		}
		var round []refSpike
		for t := nt; t < nt+owned; t++ {
			sb := math.Inf(-1)
			for i := max(0, t-nt); i <= min(T-1, t+nt); i++ {
				sb = math.Max(sb, s[i])
			}
			if sb > th2 && math.Abs(sb-s[t]) < 1e-9 {
				u := su[t]
				round = append(round, refSpike{t: t, u: u, a: b[u][t] / nm[u], q: b[u][t] / math.Sqrt(nm[u])})
			}
		}
		if len(round) == 0 {
			break
		}
		for _, sp := range round {
			for c := range C {
				for j := range nt {
					xr[c*T+sp.t+j-h] -= sp.a * ut[sp.u][c*nt+j]
				}
			}
		}
		all = append(all, round...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].t != all[j].t {
			return all[i].t < all[j].t
		}
		return all[i].u < all[j].u
	})
	feats := make([][]float64, len(all))
	for i, sp := range all {
		for _, c := range icc(sp.u) {
			for p := range P {
				var v float64
				for j := range nt {
					v += xr[c*T+sp.t+j-h] * float64(tm.WPCA[p*nt+j])
				}
				v += sp.a * float64(tm.U[(sp.u*C+c)*P+p])
				feats[i] = append(feats[i], v)
			}
		}
	}
	return all, feats
}

// basis returns P orthonormal rows of nt samples shaped like spike
// components (smooth, centred), from r.
func basis(r *rand.Rand, P, nt int) []float32 {
	w := make([]float64, P*nt)
	for p := range P {
		for j := range nt {
			d := float64(j-nt/2) / float64(nt)
			w[p*nt+j] = math.Exp(-d*d*40)*math.Cos(float64(p+1)*d*7) + 0.2*r.NormFloat64()
		}
		for q := range p {
			var dot float64
			for j := range nt {
				dot += w[p*nt+j] * w[q*nt+j]
			}
			for j := range nt {
				w[p*nt+j] -= dot * w[q*nt+j]
			}
		}
		var n float64
		for j := range nt {
			n += w[p*nt+j] * w[p*nt+j]
		}
		for j := range nt {
			w[p*nt+j] /= math.Sqrt(n)
		}
	}
	out := make([]float32, len(w))
	for i, v := range w {
		out[i] = float32(v)
	}
	return out
}

// problem is a random matching problem: templates on a few neighbouring
// channels each, a line of sites, noise and planted spikes.
type problem struct {
	tm      Templates
	x, y    []float64
	win     []float32
	T       int
	owned   int
	planted []refSpike
}

func newProblem(seed uint64, N, C, P, T, spikes int, nt int) problem {
	r := rand.New(rand.NewPCG(seed, 7))
	tm := Templates{N: N, C: C, P: P, U: make([]float32, N*C*P), WPCA: basis(r, P, nt)}
	for u := range N {
		c0 := r.IntN(C)
		w := 1 + r.IntN(min(4, C))
		for c := c0; c < min(C, c0+w); c++ {
			for p := range P {
				tm.U[(u*C+c)*P+p] = float32(r.NormFloat64() * 10)
			}
		}
	}
	x, y := make([]float64, C), make([]float64, C)
	for c := range C {
		x[c], y[c] = float64(c%2)*16, float64(c/2)*20
	}
	win := make([]float32, C*T)
	for i := range win {
		win[i] = float32(r.NormFloat64() * 0.5)
	}
	pr := problem{tm: tm, x: x, y: y, win: win, T: T, owned: T - 2*nt}
	for range spikes {
		pr.plant(nt+r.IntN(pr.owned), r.IntN(N), 1+r.Float64(), nt)
	}
	return pr
}

// plant adds a·ũ_u centred at column t to the window.
func (pr *problem) plant(t, u int, a float64, nt int) {
	tm := &pr.tm
	C, P, h := tm.C, tm.P, nt/2
	for c := range C {
		for j := range nt {
			var v float64
			for p := range P {
				v += float64(tm.U[(u*C+c)*P+p]) * float64(tm.WPCA[p*nt+j])
			}
			if k := t + j - h; k >= 0 && k < pr.T {
				pr.win[c*pr.T+k] += float32(a * v)
			}
		}
	}
	pr.planted = append(pr.planted, refSpike{t: t, u: u, a: a})
}
