package cluster

// dotsTGo is the Go reference of dotsT: acc[b] = Σ_t x[t]·tr[t·ld + b] for
// b < m, each sum from 0 in the order t = 0 … len(x)−1.
func dotsTGo(acc, x, tr []float64, ld, m int) {
	for b := 0; b < m; b++ {
		s := 0.0
		for t, v := range x {
			s += v * tr[t*ld+b]
		}
		acc[b] = s
	}
}

// termsAccGo is the Go reference of termsAcc: blk[q] += max((2·acc[q] −
// vq[q]) − e, 0) for q < len(blk), a NaN term adding 0 — what adding the
// term only where it is > 0 gives, since blk is never −0.
func termsAccGo(blk, acc, vq []float64, e float64) {
	acc, vq = acc[:len(blk)], vq[:len(blk)]
	for q := range blk {
		if dl := 2*acc[q] - vq[q] - e; dl > 0 {
			blk[q] += dl
		}
	}
}

// blockTermsGo returns s + Σ_i max((2·g[i] − vq) − e[i], 0) over
// i < len(g), each positive term added in order (a term ≤ 0 or NaN adds
// nothing): the reference of blockTerms.
func blockTermsGo(g, e []float64, vq, s float64) float64 {
	e = e[:len(g)]
	for i, gi := range g {
		if dl := 2*gi - vq - e[i]; dl > 0 {
			s += dl
		}
	}
	return s
}
