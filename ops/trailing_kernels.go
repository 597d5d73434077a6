package ops

import (
	"math"
	"sync"
)

// The plain Go kernels of the fused pass. They follow the assembly kernels
// operation for operation (same association of the additions, same rounding
// on store), so the two give the same results and each checks the other;
// tests compare both with the float64 reference.
//
// Blocks of eight positions are summed as two groups of four: with
// differences d0 … d3 the running sums are c+d0, c+(d0+d1),
// c+((d0+d1)+d2), c+((d0+d1)+(d2+d3)); the second group starts from
// c+p3 of the first; the carry moves on as c + (p3 + q3). Only that one
// addition per eight positions is a dependency chain, the rest pipelines.

var (
	kernelF32Go  = kernel[float32]{steady: steadyF32Go, warm: warmF32Go, sum: sumF32}
	kernelF16Go  = kernel[Float16]{steady: steadyF16Go, warm: warmF16Go, sum: sumF16}
	kernelBF16Go = kernel[BFloat16]{steady: steadyBF16Go, warm: warmBF16Go, sum: sumBF16}
)

// scan8 replaces the eight differences in d by the running sums c+d0,
// c+d0+d1, … in the order described above and returns the carry for the
// next block.
func scan8(d *[8]float64, c float64) float64 {
	p1 := d[1] + d[0]
	p3 := (d[3] + d[2]) + p1
	p2 := d[2] + p1
	q1 := d[5] + d[4]
	q3 := (d[7] + d[6]) + q1
	q2 := d[6] + q1
	cB := c + p3
	next := c + (p3 + q3)
	d[0] = c + d[0]
	d[1] = c + p1
	d[2] = c + p2
	d[3] = c + p3
	d[4] = cB + d[4]
	d[5] = cB + q1
	d[6] = cB + q2
	d[7] = cB + q3
	return next
}

// warmCounts8 replaces the eight running sums in d by their means at
// positions t … t+7, whose window holds t+1 … t+8 samples.
func warmCounts8(d *[8]float64, t int) {
	c := float64(t + 1)
	for j := range d {
		d[j] /= c + float64(j)
	}
}

// roundOdd32 returns the float32 bits of v rounded to odd (roundToOdd32).
// The AVX-512 kernels compute exactly this (truncate, then set the last bit
// if inexact); the AVX2 kernels truncate in the float64 domain, which agrees
// except for float32-subnormal means (|v| < 2⁻¹²⁶).
func roundOdd32(v float64) uint32 {
	return math.Float32bits(roundToOdd32(v))
}

// f16table returns the float32 values of all binary16 patterns.
var f16table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = math.Float32frombits(f16bits32(uint16(i)))
	}
	return &t
})

func sumF32(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

func sumBF16(x []BFloat16) float64 {
	var s float64
	for _, v := range x {
		s += float64(math.Float32frombits(uint32(v) << 16))
	}
	return s
}

func sumF16(x []Float16) float64 {
	tab := f16table()
	var s float64
	for _, v := range x {
		s += float64(tab[v])
	}
	return s
}

func steadyF32Go(y, x, lag []float32, s, inv float64) float64 {
	n := len(y)
	x, lag = x[:n], lag[:n]
	i := 0
	var d [8]float64
	for ; i+8 <= n; i += 8 {
		xx, ll, yy := x[i:i+8:i+8], lag[i:i+8:i+8], y[i:i+8:i+8]
		for j := range d {
			d[j] = float64(xx[j]) - float64(ll[j])
		}
		s = scan8(&d, s)
		for j := range d {
			yy[j] = float32(d[j] * inv)
		}
	}
	for ; i < n; i++ {
		s += float64(x[i]) - float64(lag[i])
		y[i] = float32(s * inv)
	}
	return s
}

func warmF32Go(y, x []float32, t0 int, s float64) float64 {
	n := len(y)
	x = x[:n]
	i := 0
	var d [8]float64
	for ; i+8 <= n; i += 8 {
		xx, yy := x[i:i+8:i+8], y[i:i+8:i+8]
		for j := range d {
			d[j] = float64(xx[j])
		}
		s = scan8(&d, s)
		warmCounts8(&d, t0+i)
		for j := range d {
			yy[j] = float32(d[j])
		}
	}
	for ; i < n; i++ {
		s += float64(x[i])
		y[i] = float32(s / float64(t0+i+1))
	}
	return s
}

func steadyBF16Go(y, x, lag []BFloat16, s, inv float64) float64 {
	n := len(y)
	x, lag = x[:n], lag[:n]
	i := 0
	var d [8]float64
	for ; i+8 <= n; i += 8 {
		xx, ll, yy := x[i:i+8:i+8], lag[i:i+8:i+8], y[i:i+8:i+8]
		for j := range d {
			d[j] = float64(math.Float32frombits(uint32(xx[j])<<16)) - float64(math.Float32frombits(uint32(ll[j])<<16))
		}
		s = scan8(&d, s)
		for j := range d {
			yy[j] = BFloat16(f32toBF16(roundOdd32(d[j] * inv)))
		}
	}
	for ; i < n; i++ {
		s += float64(math.Float32frombits(uint32(x[i])<<16)) - float64(math.Float32frombits(uint32(lag[i])<<16))
		y[i] = BFloat16(f32toBF16(roundOdd32(s * inv)))
	}
	return s
}

func warmBF16Go(y, x []BFloat16, t0 int, s float64) float64 {
	n := len(y)
	x = x[:n]
	i := 0
	var d [8]float64
	for ; i+8 <= n; i += 8 {
		xx, yy := x[i:i+8:i+8], y[i:i+8:i+8]
		for j := range d {
			d[j] = float64(math.Float32frombits(uint32(xx[j]) << 16))
		}
		s = scan8(&d, s)
		warmCounts8(&d, t0+i)
		for j := range d {
			yy[j] = BFloat16(f32toBF16(roundOdd32(d[j])))
		}
	}
	for ; i < n; i++ {
		s += float64(math.Float32frombits(uint32(x[i]) << 16))
		y[i] = BFloat16(f32toBF16(roundOdd32(s / float64(t0+i+1))))
	}
	return s
}

func steadyF16Go(y, x, lag []Float16, s, inv float64) float64 {
	tab := f16table()
	n := len(y)
	x, lag = x[:n], lag[:n]
	i := 0
	var d [8]float64
	for ; i+8 <= n; i += 8 {
		xx, ll, yy := x[i:i+8:i+8], lag[i:i+8:i+8], y[i:i+8:i+8]
		for j := range d {
			d[j] = float64(tab[xx[j]]) - float64(tab[ll[j]])
		}
		s = scan8(&d, s)
		for j := range d {
			yy[j] = Float16(f32toF16(roundOdd32(d[j] * inv)))
		}
	}
	for ; i < n; i++ {
		s += float64(tab[x[i]]) - float64(tab[lag[i]])
		y[i] = Float16(f32toF16(roundOdd32(s * inv)))
	}
	return s
}

func warmF16Go(y, x []Float16, t0 int, s float64) float64 {
	tab := f16table()
	n := len(y)
	x = x[:n]
	i := 0
	var d [8]float64
	for ; i+8 <= n; i += 8 {
		xx, yy := x[i:i+8:i+8], y[i:i+8:i+8]
		for j := range d {
			d[j] = float64(tab[xx[j]])
		}
		s = scan8(&d, s)
		warmCounts8(&d, t0+i)
		for j := range d {
			yy[j] = Float16(f32toF16(roundOdd32(d[j])))
		}
	}
	for ; i < n; i++ {
		s += float64(tab[x[i]])
		y[i] = Float16(f32toF16(roundOdd32(s / float64(t0+i+1))))
	}
	return s
}
