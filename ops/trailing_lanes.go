package ops

// The float32-lane kernels of the 16-bit steady state (positions t ≥ cf)
// carry sixteen positions (bfloat16: sixteen pairs of positions) per
// vector in float32, with the window sum carried in float64; the
// float64-lane kernels (trailing_kernels.go) carry eight. Per block of
// binary16 positions:
//
//	d[j] = x[j] − lag[j]                    float32, j = 0 … 15
//	p = inclusive prefix sums of d           p[j] += p[j−k] (or + 0), k = 1, 2, 4, 8
//	mean[j] = (float32(s) + p[j]) · float32(1/cf)
//	y[j] = mean[j] rounded to nearest even   one rounding to 16 bits
//	s += float64(p[15])
//
// Bfloat16 takes 32 positions as sixteen pairs (2i, 2i+1) of one 64-byte
// load: p = prefix sums of e + o (e, o the even and odd differences),
// mean[2i+1] from p[i] and mean[2i] from p[i] − o[i]. Every operation
// rounds to float32 where written, in this order, in the AVX-512 kernels
// (trailing_lanes_amd64.s) and in the tests' Go model of them
// (trailing_lanes_model_test.go). The float32 mean differs from the
// correctly rounded one by one 16-bit unit where the exact mean lies
// within its error of a 16-bit rounding midpoint; docs/perf-ops.md bounds
// that error. A bfloat16 chunk whose float32 means are not all normal or
// zero is redone with the float64-lane kernel; binary16 sums can neither
// overflow float32 nor give a nonzero mean below 2⁻⁵⁵.

// laneChunk is the length of the chunks the lane kernels are called on, a
// multiple of 16; the in-place path's blocks are multiples of it, so that
// in place and out of place group positions identically.
const laneChunk = 1 << 12

// laneGranule returns the positions the lane kernel of T takes at a time:
// 32 for bfloat16 (pairs of positions in sixteen lanes), 16 for binary16.
func laneGranule[T Storage]() int {
	var z T
	if _, ok := any(z).(BFloat16); ok {
		return 32
	}
	return 16
}

// laneFunc is a float32-lane steady kernel on len(y) positions, a multiple
// of its laneGranule: it returns the carried sum and whether every float32
// mean was normal or zero.
type laneFunc[T Storage] func(y, x, lag []T, s float64, inv float32) (float64, bool)

// steadyLanes runs the lane kernel on chunks of laneChunk positions, redoes
// a chunk with the float64 kernel exact where the lane kernel reports a
// non-normal mean, and finishes the last len(y) mod laneGranule positions
// with exact. For cf = 1 (inv = 1) it runs exact alone, so that the output
// is a copy.
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
