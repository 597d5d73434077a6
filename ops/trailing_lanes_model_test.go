package ops

import "math"

// The Go model of the float32-lane kernels (trailing_lanes.go), operation
// for operation as the AVX-512 kernels (trailing_lanes_amd64.s) compute, so
// that the tests can check the assembly bit for bit.

// scan16 replaces d by its inclusive prefix sums in the order of the
// AVX-512 kernels: four steps d[j] += d[j−k] (d[j] + 0 for j < k), each
// from the previous step's values.
func scan16(d *[16]float32) {
	for k := 1; k < 16; k <<= 1 {
		for j := 15; j >= k; j-- {
			d[j] = float32(d[j] + d[j-k])
		}
		for j := range k {
			d[j] = float32(d[j] + 0)
		}
	}
}

// laneMeans turns the prefix sums d into means (c32 + d[j])·inv in place
// and reports whether all are normal or zero float32 values.
func laneMeans(d *[16]float32, c32, inv float32) bool {
	ok := true
	for j := range d {
		m := float32(float32(c32+d[j]) * inv)
		d[j] = m
		b := math.Float32bits(m) & 0x7fffffff
		if b >= 0x7f800000 || b != 0 && b < 0x00800000 {
			ok = false
		}
	}
	return ok
}

// steadyBF16Lanes is the Go model of the bfloat16 lane kernel. It takes
// 32 positions at a time as sixteen pairs (2i, 2i+1), as one 64-byte load
// splits into even and odd elements without a shuffle:
//
//	e[i] = x[2i] − lag[2i], o[i] = x[2i+1] − lag[2i+1]   float32
//	q[i] = e[i] + o[i]                                    pair sums
//	p = inclusive prefix sums of q (scan16)               sums through 2i+1
//	means of 2i+1: (c32 + p[i])·inv; of 2i: (c32 + (p[i] − o[i]))·inv
//	s += float64(p[15])
func steadyBF16Lanes(y, x, lag []BFloat16, s float64, inv float32) (float64, bool) {
	n := len(y)
	x, lag = x[:n], lag[:n]
	ok := true
	var o, p, ev [16]float32
	f := func(b BFloat16) float32 { return math.Float32frombits(uint32(b) << 16) }
	for i := 0; i+32 <= n; i += 32 {
		xx, ll, yy := x[i:i+32:i+32], lag[i:i+32:i+32], y[i:i+32:i+32]
		for j := range p {
			e := float32(f(xx[2*j]) - f(ll[2*j]))
			o[j] = float32(f(xx[2*j+1]) - f(ll[2*j+1]))
			p[j] = float32(e + o[j])
		}
		scan16(&p)
		for j := range ev {
			ev[j] = float32(p[j] - o[j])
		}
		c32 := float32(s)
		s += float64(p[15])
		if !laneMeans(&ev, c32, inv) {
			ok = false
		}
		if !laneMeans(&p, c32, inv) {
			ok = false
		}
		for j := range p {
			yy[2*j] = BFloat16(f32toBF16(math.Float32bits(ev[j])))
			yy[2*j+1] = BFloat16(f32toBF16(math.Float32bits(p[j])))
		}
	}
	return s, ok
}

// steadyF16Lanes is the Go model of the binary16 lane kernel; it never
// reports a flagged mean.
func steadyF16Lanes(y, x, lag []Float16, s float64, inv float32) (float64, bool) {
	tab := f16table()
	n := len(y)
	x, lag = x[:n], lag[:n]
	var d [16]float32
	for i := 0; i+16 <= n; i += 16 {
		xx, ll, yy := x[i:i+16:i+16], lag[i:i+16:i+16], y[i:i+16:i+16]
		for j := range d {
			d[j] = float32(tab[xx[j]] - tab[ll[j]])
		}
		scan16(&d)
		c32 := float32(s)
		s += float64(d[15])
		laneMeans(&d, c32, inv) // binary16 means are never flagged
		for j := range d {
			yy[j] = Float16(f32toF16(math.Float32bits(d[j])))
		}
	}
	return s, true
}

// Kernel sets of the Go model of the lane kernels (warm-up and sums as the
// float64-lane Go kernels), against which the tests check the assembly.
var (
	kernelBF16Lanes = kernel[BFloat16]{
		steady: func(y, x, lag []BFloat16, s, inv float64) float64 {
			return steadyLanes(steadyBF16Lanes, steadyBF16Go, y, x, lag, s, inv)
		},
		warm: warmBF16Go, sum: sumBF16,
	}
	kernelF16Lanes = kernel[Float16]{
		steady: func(y, x, lag []Float16, s, inv float64) float64 {
			return steadyLanes(steadyF16Lanes, steadyF16Go, y, x, lag, s, inv)
		},
		warm: warmF16Go, sum: sumF16,
	}
)
