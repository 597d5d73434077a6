package ops

// CausalTrailingMeanRef is the float64 reference of CausalTrailingMean:
//
//	dst[r*n+t] = (src[r*n+t-k+1] + … + src[r*n+t]) / k,  k = min(t+1, cf)
//
// Window sums are differences of double-double prefix sums. It panics like CausalTrailingMean.
func CausalTrailingMeanRef(dst, src []float64, rows, n, cf int) {
	checkShape("CausalTrailingMeanRef", len(dst), len(src), rows, n, cf)
	if rows*n == 0 {
		return
	}
	inPlace := &dst[0] == &src[0]
	for r := range rows {
		x, y := src[r*n:(r+1)*n], dst[r*n:(r+1)*n]
		// lead: prefix sum of x[0 … t]; trail: prefix sum of x[0 … t−cf].
		var leadHi, leadLo, trailHi, trailLo float64
		// In place, keep the last cf inputs in a ring for trail.
		var ring []float64
		if inPlace {
			ring = make([]float64, min(cf, n))
		}
		for t := range n {
			v := x[t]
			leadHi, leadLo = twoSumAdd(leadHi, leadLo, v)
			if t >= cf {
				old := 0.0
				if ring != nil {
					old = ring[t%cf]
				} else {
					old = x[t-cf]
				}
				trailHi, trailLo = twoSumAdd(trailHi, trailLo, old)
			}
			if ring != nil {
				ring[t%cf] = v
			}
			// (leadHi + leadLo) − (trailHi + trailLo), in double-double.
			h, l := twoSum(leadHi, -trailHi)
			l += leadLo - trailLo
			y[t] = (h + l) / float64(min(t+1, cf))
		}
	}
}

// twoSum returns s = fl(a+b) and the exact error e with a + b = s + e.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// twoSumAdd adds v to the double-double (hi, lo).
func twoSumAdd(hi, lo, v float64) (float64, float64) {
	s, e := twoSum(hi, v)
	e += lo
	return fastTwoSum(s, e)
}

// fastTwoSum renormalises s + e with |s| ≥ |e|.
func fastTwoSum(s, e float64) (float64, float64) {
	h := s + e
	return h, e - (h - s)
}
