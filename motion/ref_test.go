package motion

import (
	"math"
	"math/rand/v2"
)

// This file is the plain float64 reference of kilosort4-sort.md §3.1–3.4,
// written from the spec without the fast paths: arrays are rolled
// physically, every sum is spelled out.

// refSpikes is one window's detections.
type refSpikes struct{ y, amp []float32 }

// refEstimate returns dshift [nb][B] and yblk as §3 computes them
// (Kilosort4's reference min(300, ⌊nb/2⌋), no empty-window rule).
func refEstimate(yc []float64, win []refSpikes, p Params) ([][]float64, []float64) {
	nb := len(win)
	dy := p.BinningDepth
	ymin, ymax := yc[0], yc[0]
	for _, v := range yc {
		ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
	}
	y0 := ymin - 1
	Y := 1 + int(math.Ceil((ymax-y0)/dy))
	// §3.1 histograms.
	G := make([][][20]float64, nb)
	for t := range nb {
		cnt := make([][20]float64, Y)
		for i := range win[t].y {
			r := int((float64(win[t].y[i]) - y0) / dy)
			r = max(0, min(Y-1, r))
			lt := math.Log10(p.ThUniversal)
			a := math.Min(99, float64(win[t].amp[i]))
			v := (math.Log10(a) - lt) / (2 - lt)
			cf := math.Floor(1e-5 + 20*v)
			c := 0
			if cf > 0 {
				c = int(math.Min(cf, 19))
			}
			cnt[r][c]++
		}
		G[t] = make([][20]float64, Y)
		for c := range 20 {
			var m float64
			for r := range Y {
				G[t][r][c] = math.Log2(1 + cnt[r][c])
				m += G[t][r][c]
			}
			m /= float64(Y)
			for r := range Y {
				G[t][r][c] -= m
			}
		}
	}
	roll := func(h [][20]float64, s int) [][20]float64 { // content moves to higher rows for s > 0
		n := len(h)
		out := make([][20]float64, n)
		for r := range n {
			out[((r+s)%n+n)%n] = h[r]
		}
		return out
	}
	score := refScore
	mean := func() [][20]float64 {
		R := make([][20]float64, Y)
		for r := range Y {
			for c := range 20 {
				for t := range nb {
					R[r][c] += G[t][r][c]
				}
				R[r][c] /= float64(nb)
			}
		}
		return R
	}
	// §3.2 rigid.
	R := append([][20]float64(nil), G[min(300, nb/2)]...)
	D := make([]int, nb)
	for it := range 10 {
		for t := range nb {
			best, bs := math.Inf(-1), 0
			for s := -15; s <= 15; s++ {
				if v := score(roll(G[t], s), R); v > best {
					best, bs = v, s
				}
			}
			if it <= 8 {
				G[t] = roll(G[t], bs)
				D[t] += bs
			}
		}
		R = mean()
	}
	// §3.3 blocks.
	nbk := p.NBlocks
	L := Y / nbk
	B := 2*nbk - 1
	starts := make([]int, B)
	yblk := make([]float64, B)
	for j := range B {
		if B > 1 {
			starts[j] = int(math.RoundToEven(float64(j) * float64(Y-L) / float64(B-1)))
		}
		for k := starts[j]; k < starts[j]+L; k++ {
			yblk[j] += y0 + dy*float64(k) - dy/2
		}
		yblk[j] /= float64(L)
	}
	e := make([][][]float64, 11) // [s][t][j]
	for si := range 11 {
		e[si] = make([][]float64, nb)
		for t := range nb {
			e[si][t] = make([]float64, B)
			for j := range B {
				blk := G[t][starts[j] : starts[j]+L]
				e[si][t][j] = score(roll(blk, si-5), R[starts[j]:starts[j]+L])
			}
		}
	}
	e = refGauss(e, p.DriftSmoothing)
	d := make([][]float64, nb)
	for t := range nb {
		d[t] = make([]float64, B)
		for j := range B {
			best, bw := math.Inf(-1), 0.0
			for k := range 101 {
				w := -5 + float64(k)*0.1
				if k == 100 {
					w = 5
				}
				var v float64
				for si := range 11 {
					x := float64(si-5) - w
					v += math.Exp(-x*x/2) * e[si][t][j]
				}
				if v > best {
					best, bw = v, w
				}
			}
			d[t][j] = dy * (float64(D[t]) + bw)
		}
	}
	return d, yblk
}

// refScore is the mean of a·b over the cells, summed in the fixed order
// of scoreLanes: cell i = 20r + c to lane i mod 256, each product
// rounded then added (never fused), then the lanes pairwise (o = 128, …,
// 1).
func refScore(a, b [][20]float64) float64 {
	var lane [256]float64
	for r := range a {
		for c := range 20 {
			i := 20*r + c
			lane[i%256] += float64(a[r][c] * b[r][c])
		}
	}
	for o := 128; o >= 1; o /= 2 {
		for q := 0; q < o; q++ {
			lane[q] = lane[q] + lane[q+o]
		}
	}
	return lane[0] / float64(len(a)*20)
}

// refGauss is scipy.ndimage.gaussian_filter on e [s][t][j] with σ per
// axis, mode reflect, truncate 4.
func refGauss(e [][][]float64, sig [3]float64) [][][]float64 {
	n := [3]int{len(e), len(e[0]), len(e[0][0])}
	get := func(a [][][]float64, i [3]int) *float64 { return &a[i[0]][i[1]][i[2]] }
	for ax := range 3 {
		if sig[ax] == 0 {
			continue
		}
		rad := int(4*sig[ax] + 0.5)
		var w []float64
		var sum float64
		for k := -rad; k <= rad; k++ {
			w = append(w, math.Exp(-float64(k*k)/(2*sig[ax]*sig[ax])))
			sum += w[len(w)-1]
		}
		out := make([][][]float64, n[0])
		for a := range n[0] {
			out[a] = make([][]float64, n[1])
			for b := range n[1] {
				out[a][b] = make([]float64, n[2])
				for c := range n[2] {
					idx := [3]int{a, b, c}
					var v float64
					for k := -rad; k <= rad; k++ {
						q := idx
						i := idx[ax] + k
						for i < 0 || i >= n[ax] {
							if i < 0 {
								i = -i - 1
							} else {
								i = 2*n[ax] - 1 - i
							}
						}
						q[ax] = i
						v += w[k+rad] / sum * *get(e, q)
					}
					out[a][b][c] = v
				}
			}
		}
		e = out
	}
	return e
}

// refMatrix is M = Kyx·(Kxx + ridge·I)⁻¹ in float64 by Gauss–Jordan
// elimination, for per-channel shifts sh; rows scaled to unit norm if
// norm.
func refMatrix(x, y, sh []float64, sigma, ridge float64, norm bool) [][]float64 {
	C := len(x)
	k := func(ax, ay, bx, by float64) float64 {
		d2 := (ax-bx)*(ax-bx) + (ay-by)*(ay-by)
		return math.Exp(-d2 / (2 * sigma * sigma))
	}
	// Solve (Kxx + 0.01 I) Z = Kyxᵀ, then M = Zᵀ (Kxx symmetric).
	A := make([][]float64, C)
	for i := range C {
		A[i] = make([]float64, 2*C)
		for j := range C {
			A[i][j] = k(x[i], y[i], x[j], y[j])
			if i == j {
				A[i][j] += ridge
			}
			A[i][C+j] = k(x[j], y[j]-sh[j], x[i], y[i])
		}
	}
	for col := range C {
		piv := col
		for r := col + 1; r < C; r++ {
			if math.Abs(A[r][col]) > math.Abs(A[piv][col]) {
				piv = r
			}
		}
		A[col], A[piv] = A[piv], A[col]
		for r := range C {
			if r == col {
				continue
			}
			f := A[r][col] / A[col][col]
			for c := col; c < 2*C; c++ {
				A[r][c] -= f * A[col][c]
			}
		}
	}
	M := make([][]float64, C)
	for c := range C {
		M[c] = make([]float64, C)
		var ss float64
		for j := range C {
			M[c][j] = A[j][C+c] / A[j][j]
			ss += M[c][j] * M[c][j]
		}
		if norm {
			for j := range C {
				M[c][j] /= math.Sqrt(ss)
			}
		}
	}
	return M
}

// randomWindows draws nb windows of detections over depths [lo, hi]: n
// per window on average, from units at fixed depths plus background.
func randomWindows(rng *rand.Rand, nb, n int, lo, hi float64) []refSpikes {
	units := make([]float64, 40)
	amps := make([]float64, len(units))
	for i := range units {
		units[i] = lo + rng.Float64()*(hi-lo)
		amps[i] = 9 * math.Exp(rng.Float64()*math.Log(12))
	}
	out := make([]refSpikes, nb)
	for t := range nb {
		m := n/2 + rng.IntN(n+1)
		for range m {
			var yy, aa float64
			if rng.IntN(4) == 0 {
				yy, aa = lo+rng.Float64()*(hi-lo), 9+rng.ExpFloat64()*5
			} else {
				u := rng.IntN(len(units))
				yy, aa = units[u]+rng.NormFloat64()*3, amps[u]*(1+0.1*rng.NormFloat64())
			}
			out[t].y = append(out[t].y, float32(yy))
			out[t].amp = append(out[t].amp, float32(aa))
		}
	}
	return out
}
