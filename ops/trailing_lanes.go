package ops

// The float32-lane kernels of the 16-bit steady state (t ≥ cf), per block of sixteen binary16
// positions (bfloat16: pairs, p the sums of e + o, mean[2i] from p[i] − o[i]), each step rounded
// to float32 as in trailing_lanes_model_test.go; a mean may be one unit off (docs/perf-ops.md):
//
//	d[j] = x[j] − lag[j];  p = inclusive prefix sums of d
//	y[j] = round16((float32(s) + p[j]) · float32(1/cf));  s += float64(p[15])

// laneChunk is the lane kernels' chunk; in-place blocks are multiples of it, grouping alike.
const laneChunk = 1 << 12

// laneGranule returns the positions the lane kernel of T takes at a time.
func laneGranule[T Storage]() int {
	var z T
	if _, ok := any(z).(BFloat16); ok {
		return 32
	}
	return 16
}

// laneFunc is a lane kernel: it returns the carried sum and whether all means were normal or 0.
type laneFunc[T Storage] func(y, x, lag []T, s float64, inv float32) (float64, bool)

// steadyLanes runs lanes on chunks, redoing flagged ones and the tail (and cf = 1) with exact.
func steadyLanes[T Storage](lanes laneFunc[T], exact func(y, x, lag []T, s, inv float64) float64, y, x, lag []T, s, inv float64) float64 {
	if inv == 1 { // cf = 1: the float64 kernel copies exactly
		return exact(y, x, lag, s, inv)
	}
	n := len(y)
	x, lag = x[:n], lag[:n]
	inv32 := float32(inv)
	g := laneGranule[T]()
	for len(y) >= g {
		m := min(len(y), laneChunk) &^ (g - 1)
		s1, ok := lanes(y[:m], x[:m], lag[:m], s, inv32)
		if !ok {
			s1 = exact(y[:m], x[:m], lag[:m], s, inv)
		}
		s = s1
		y, x, lag = y[m:], x[m:], lag[m:]
	}
	if len(y) > 0 {
		s = exact(y, x, lag, s, inv)
	}
	return s
}
