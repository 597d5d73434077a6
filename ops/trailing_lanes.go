package ops

// The float32-lane kernels of the 16-bit steady state (positions t ≥ cf).
//
// The float64-lane kernels (trailing_kernels.go) carry eight positions per
// 512-bit vector and round every mean correctly; for 16-bit storage that
// costs more than a cycle per element. These carry sixteen positions (or,
// for bfloat16, sixteen pairs of positions) per vector in float32, which
// halves the instructions per element. Binary16:
//
//	d[j] = x[j] − lag[j]                    float32, j = 0 … 15
//	p = inclusive prefix sums of d           four shift-and-add steps:
//	                                         p[j] += p[j−k] (or + 0) for k = 1, 2, 4, 8
//	c32 = float32(s)                         s: the float64 carry (window sum)
//	mean[j] = (c32 + p[j]) · float32(1/cf)   float32
//	y[j] = mean[j] rounded to nearest even   one rounding to 16 bits
//	s += float64(p[15])                      the carry moves on in float64
//
// Bfloat16 takes 32 positions at a time as sixteen pairs (2i, 2i+1), which
// one 64-byte load splits into even and odd elements without a shuffle (a
// bfloat16 is the top half of a float32):
//
//	e[i] = x[2i] − lag[2i], o[i] = x[2i+1] − lag[2i+1]
//	p = inclusive prefix sums of e + o       the sums through position 2i+1
//	mean[2i+1] = (c32 + p[i]) · float32(1/cf)
//	mean[2i]   = (c32 + (p[i] − o[i])) · float32(1/cf)
//	s += float64(p[15])
//
// Every operation rounds to float32 where written, in this order, in the
// AVX-512 kernels (trailing_lanes_amd64.s) and in the tests' Go model of
// them (trailing_lanes_model_test.go), which give identical bits. The
// stored value is the float32 mean rounded once to 16 bits; it differs from
// the correctly rounded exact mean only where that lies within the float32
// error below of a rounding midpoint of the 16-bit grid (then by one unit).
//
// Error of the float32 mean, with M the largest |sample| of the row and k
// the window count: c32 and the final add and multiply each contribute
// about 2⁻²⁴·M; the prefix sums of a block (binary16: 16 positions,
// magnitudes ≤ 32·M, up to 5·2⁻²⁴·32·M/k; bfloat16: 32 positions as pair
// sums, magnitudes ≤ 64·M, up to 6·2⁻²⁴·64·M/k); and the carry, which
// takes p[15] with that same error per block, random-walks like
// √(blocks)·2⁻²⁴·(32 or 64)·M/k. When the differences and
// their prefix sums are exact in float32 (16-bit samples of one binade, as
// with a DC offset: mean 1000, SD 1), only the first three terms remain.
//
// For bfloat16, a chunk of laneChunk positions whose float32 means are not
// all normal or zero (an overflowed sum near the largest bfloat16, an Inf
// or NaN sample, a float32-subnormal mean, which VCVTNEPS2BF16 would flush
// to zero) is recomputed with the float64-lane kernel from the chunk's
// carried-in sum, so such data gets the correctly rounded float64 results.
// Binary16 needs no such check (and the kernel saves its two instructions
// per 16 positions): its samples, at most 65504 in magnitude and multiples
// of 2⁻²⁴, can neither overflow a float32 sum nor make a nonzero mean
// smaller than 2⁻⁵⁵; an Inf or NaN sample gives non-finite outputs, as
// CausalTrailingMean documents.

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
