package sim

import (
	"math"
	"slices"
	"testing"
)

func TestNormalStream(t *testing.T) {
	const n = 1 << 21
	s := newNormalStream(3, kindNoise, 11)
	x := make([]float64, n)
	var m1, m2, m3, m4 float64
	tail := 0
	for i := range x {
		v := float64(s.next())
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("draw %d is %g", i, v)
		}
		x[i] = v
		m1 += v
		m2 += v * v
		m3 += v * v * v
		m4 += v * v * v * v
		if math.Abs(v) > zigR {
			tail++
		}
	}
	m1, m2, m3, m4 = m1/n, m2/n, m3/n, m4/n
	// Standard errors: 1/√n, √(2/n), √(15/n), √(96/n).
	se := 1 / math.Sqrt(n)
	if math.Abs(m1) > 5*se || math.Abs(m2-1) > 5*math.Sqrt(2)*se ||
		math.Abs(m3) > 5*math.Sqrt(15)*se || math.Abs(m4-3) > 5*math.Sqrt(96)*se {
		t.Errorf("moments %.5f %.5f %.5f %.5f, want 0 1 0 3", m1, m2, m3, m4)
	}
	// The tail path: P(|x| > r) = erfc(r/√2).
	p := math.Erfc(zigR / math.Sqrt2)
	if want := p * n; math.Abs(float64(tail)-want) > 5*math.Sqrt(want) {
		t.Errorf("%d draws beyond ±%g, expected %.0f", tail, zigR, want)
	}
	// Kolmogorov–Smirnov distance to Φ; 1.95/√n is the 0.1 % level.
	slices.Sort(x)
	d := 0.0
	for i, v := range x {
		c := 0.5 * math.Erfc(-v/math.Sqrt2)
		d = max(d, math.Abs(c-float64(i)/n), math.Abs(c-float64(i+1)/n))
	}
	if d > 1.95*se {
		t.Errorf("KS distance %.5f to the normal CDF, want < %.5f", d, 1.95*se)
	}
	// Streams differ and repeat.
	a, b := newNormalStream(3, kindNoise, 11), newNormalStream(3, kindNoise, 12)
	same := 0
	for range 1000 {
		if a.next() == b.next() {
			same++
		}
	}
	if same > 5 {
		t.Errorf("streams 11 and 12 agree on %d of 1000 draws", same)
	}
	c, d2 := newNormalStream(3, kindNoise, 11), newNormalStream(3, kindNoise, 11)
	for range 1000 {
		if c.next() != d2.next() {
			t.Fatal("the same stream gives different draws")
		}
	}
}
