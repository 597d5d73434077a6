package match

import (
	"fmt"
	"math"
	"sort"
)

// support returns, per template, the channels where it is non-zero
// (ascending) and their coefficients [channel][P], and ‖U_u‖² and the
// best channel (first maximum of Σ_p U²: Kilosort4's iU).
func support(tm *Templates) (chans [][]int32, coef [][]float32, nm []float64, best []int32) {
	C, P := tm.C, tm.P
	chans, coef = make([][]int32, tm.N), make([][]float32, tm.N)
	nm, best = make([]float64, tm.N), make([]int32, tm.N)
	for u := range tm.N {
		bestE := -1.0
		for c := range C {
			row := tm.U[(u*C+c)*P : (u*C+c+1)*P]
			var e float64
			for _, v := range row {
				e += float64(v) * float64(v)
			}
			if e > bestE {
				bestE, best[u] = e, int32(c)
			}
			if e > 0 {
				chans[u] = append(chans[u], int32(c))
				coef[u] = append(coef[u], row...)
				nm[u] += e
			}
		}
	}
	return chans, coef, nm, best
}

// nearest returns each channel's nc nearest channels [C][nc], itself
// first, then by squared distance with ties in channel order (Kilosort4's
// iCC, whose numpy argsort leaves ties unspecified).
func nearest(x, y []float64, nc int) []int32 {
	C := len(x)
	out := make([]int32, C*nc)
	idx := make([]int, C)
	for c := range C {
		for i := range idx {
			idx[i] = i
		}
		d := func(i int) float64 { dx, dy := x[i]-x[c], y[i]-y[c]; return dx*dx + dy*dy }
		sort.SliceStable(idx, func(a, b int) bool {
			ia, ib := idx[a], idx[b]
			if (ia == c) != (ib == c) {
				return ia == c
			}
			return d(ia) < d(ib)
		})
		for r := range nc {
			out[c*nc+r] = int32(idx[r])
		}
	}
	return out
}

// basisLags returns W[(p*P+q)*L + d+nt−1] = Σ_j wPCA[p,j]·wPCA[q,j+d] for
// lags d = −(nt−1) … nt−1 (L = 2nt−1), in float64.
func basisLags(wpca []float32, P, nt int) []float64 {
	L := 2*nt - 1
	w := make([]float64, P*P*L)
	for p := range P {
		for q := range P {
			for d := -(nt - 1); d <= nt-1; d++ {
				var s float64
				for j := max(0, -d); j < min(nt, nt-d); j++ {
					s += float64(wpca[p*nt+j]) * float64(wpca[q*nt+j+d])
				}
				w[(p*P+q)*L+d+nt-1] = s
			}
		}
	}
	return w
}

// pairs lists, for each template u, the templates v that share a channel
// with u (ascending) and K_uv[d] = ΔB[v, t+d] per unit coefficient of u
// subtracted at column t: Σ_c Σ_j ũ_v,c(j)·ũ_u,c(j+d), through the PCA
// basis as Σ_{p,q} (Σ_c U[v,c,p]·U[u,c,q])·W[p,q,d]. Layout of kc[u]:
// [neighbour][2nt−1].
func pairs(tm *Templates, chans [][]int32, w []float64, nt int) (nbr [][]int32, kc [][]float32) {
	N, C, P := tm.N, tm.C, tm.P
	L := 2*nt - 1
	byChan := make([][]int32, C)
	for u, cs := range chans {
		for _, c := range cs {
			byChan[c] = append(byChan[c], int32(u))
		}
	}
	nbr, kc = make([][]int32, N), make([][]float32, N)
	seen := make([]int32, N)
	for i := range seen {
		seen[i] = -1
	}
	g := make([]float64, P*P)
	for u := range N {
		for _, c := range chans[u] {
			for _, v := range byChan[c] {
				if seen[v] != int32(u) {
					seen[v] = int32(u)
					nbr[u] = append(nbr[u], v)
				}
			}
		}
		sort.Slice(nbr[u], func(a, b int) bool { return nbr[u][a] < nbr[u][b] })
		kc[u] = make([]float32, len(nbr[u])*L)
		for i, v := range nbr[u] {
			clear(g)
			for _, c := range chans[u] {
				bv := tm.U[(int(v)*C+int(c))*P:]
				bu := tm.U[(u*C+int(c))*P:]
				for p := range P {
					for q := range P {
						g[p*P+q] += float64(bv[p]) * float64(bu[q])
					}
				}
			}
			k := kc[u][i*L : (i+1)*L]
			for d := range L {
				var s float64
				for pq := range P * P {
					s += g[pq] * w[pq*L+d]
				}
				k[d] = float32(s)
			}
		}
	}
	return nbr, kc
}

// timeTemplates returns ũ_u,c(j) = Σ_p U[u,c,p]·wPCA[p,j] on each
// template's support channels: [channel of chans[u]][nt].
func timeTemplates(tm *Templates, chans [][]int32, nt int) [][]float32 {
	C, P := tm.C, tm.P
	out := make([][]float32, tm.N)
	for u, cs := range chans {
		out[u] = make([]float32, len(cs)*nt)
		for i, c := range cs {
			for j := range nt {
				var s float64
				for p := range P {
					s += float64(tm.U[(u*C+int(c))*P+p]) * float64(tm.WPCA[p*nt+j])
				}
				out[u][i*nt+j] = float32(s)
			}
		}
	}
	return out
}

// checkGeometry reports site positions that do not fit the templates.
func checkGeometry(x, y []float64, C, nc int) error {
	if len(x) != C || len(y) != C {
		return fmt.Errorf("match: %d and %d site positions for %d channels", len(x), len(y), C)
	}
	if nc > C {
		return fmt.Errorf("match: nearest_chans = %d is more than the probe's %d channels", nc, C)
	}
	for i := range C {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) || math.IsInf(x[i], 0) || math.IsInf(y[i], 0) {
			return fmt.Errorf("match: site %d at (%g, %g) µm", i, x[i], y[i])
		}
	}
	return nil
}
