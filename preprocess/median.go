package preprocess

// LowerMedian returns the lower median of x, the element of rank
// (len(x)−1)/2 in ascending order, which is what torch.median returns: the
// middle value for odd lengths and the lower of the two middle values for
// even lengths (no averaging). It reorders x, in expected linear time
// (quickselect). It panics if x is empty. With NaNs in x the result is
// unspecified, but LowerMedian returns.
func LowerMedian(x []float32) float32 {
	if len(x) == 0 {
		panic("preprocess: LowerMedian of no values")
	}
	return selectRank(x, (len(x)-1)/2)
}

// selectRank reorders x so that x[k] is the element of rank k and returns
// it: quickselect with a median-of-three pivot and a branch-free Lomuto
// partition (a data-dependent branch per element would be mispredicted
// about half the time on noise), finished by insertion sort on short
// ranges.
func selectRank(x []float32, k int) float32 {
	lo, hi := 0, len(x) // the rank-k element lies in x[lo:hi]
	for hi-lo > 16 {
		// Median of three to x[hi-1], the pivot.
		a, m, b := lo, lo+(hi-lo)/2, hi-1
		if x[m] < x[a] {
			x[m], x[a] = x[a], x[m]
		}
		if x[b] < x[a] {
			x[b], x[a] = x[a], x[b]
		}
		if x[m] < x[b] {
			x[m], x[b] = x[b], x[m]
		}
		p := x[b]
		// Lomuto: x[lo:j] < p ≤ x[j:i]. Swapping unconditionally and
		// advancing j by the comparison keeps the loop branch-free.
		j := lo
		s := x[lo:b]
		for i := range s {
			v := s[i]
			s[i] = x[j]
			x[j] = v
			var inc int
			if v < p {
				inc = 1
			}
			j += inc
		}
		x[b], x[j] = x[j], p
		// Now x[lo:j] < p = x[j] ≤ x[j+1:hi].
		switch {
		case k < j:
			hi = j
		case k > j:
			lo = j + 1
		default:
			return p
		}
	}
	for a := lo + 1; a < hi; a++ {
		v := x[a]
		b := a
		for ; b > lo && v < x[b-1]; b-- {
			x[b] = x[b-1]
		}
		x[b] = v
	}
	return x[k]
}

// median3 returns the median of a, b and c (the pivot of
// lowerMedianVec).
func median3(a, b, c float32) float32 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}
