package ops

import (
	"math"
	"sync"
)

// The plain Go kernels of the fused pass, operation for operation those of the assembly, so each
// checks the other. Blocks of eight (scan8) have one dependent addition; the rest pipelines.

var (
	kernelF32Go  = kernel[float32]{steady: steadyF32Go, warm: warmF32Go, sum: sumF32}
	kernelF16Go  = kernel[Float16]{steady: steadyF16Go, warm: warmF16Go, sum: sumF16}
	kernelBF16Go = kernel[BFloat16]{steady: steadyBF16Go, warm: warmBF16Go, sum: sumBF16}
)

// scan8 replaces the differences d by running sums from c: c+d0, c+(d0+d1), c+((d0+d1)+d2),
// c+((d0+d1)+(d2+d3)), then likewise from c+p3; it returns the carry c + (p3 + q3).
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

// warmCounts8 divides the running sums d at positions t … t+7 by t+1 … t+8.
func warmCounts8(d *[8]float64, t int) {
	c := float64(t + 1)
	for j := range d {
		d[j] /= c + float64(j)
	}
}

// roundOdd32 returns the float32 bits of v rounded to odd (AVX2 differs only for |v| < 2⁻¹²⁶).
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
