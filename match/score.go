package match

// scoreRowGo is scoreRow's loop in Go: over columns [lo, hi), where v =
// row[t] > 0 and sc = v·v·inv beats s[t], sc and u replace s[t] and su[t].
func scoreRowGo(row []float32, s []float64, su []int32, lo, hi int, inv float64, u int32) {
	for t := lo; t < hi; t++ {
		v := float64(row[t])
		if v <= 0 {
			continue
		}
		if sc := v * v * inv; sc > s[t] {
			s[t], su[t] = sc, u
		}
	}
}
