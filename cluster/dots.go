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
