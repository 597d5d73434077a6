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
// it: Hoare partitioning around a median-of-three pivot, finished by
// insertion sort on short ranges.
func selectRank(x []float32, k int) float32 {
	lo, hi := 0, len(x)-1
	for hi-lo > 12 {
		mid := lo + (hi-lo)/2
		if x[mid] < x[lo] {
			x[mid], x[lo] = x[lo], x[mid]
		}
		if x[hi] < x[lo] {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if x[hi] < x[mid] {
			x[hi], x[mid] = x[mid], x[hi]
		}
		p := x[mid]
		i, j := lo, hi
		for i <= j {
			for x[i] < p {
				i++
			}
			for p < x[j] {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		// Now x[lo:j+1] ≤ p ≤ x[i:hi+1] and x[j+1:i] equal p.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return x[k]
		}
	}
	for a := lo + 1; a <= hi; a++ {
		v := x[a]
		b := a
		for ; b > lo && v < x[b-1]; b-- {
			x[b] = x[b-1]
		}
		x[b] = v
	}
	return x[k]
}
