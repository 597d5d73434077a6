package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSqDist32Kernel compares the vector sqDist32 with the Go code bit for
// bit: every length from 1 to 70, starts at every offset of a float32 and
// a float64 slice, values of mixed magnitudes, ±Inf and NaN inputs.
func TestSqDist32Kernel(t *testing.T) {
	if !useSqDist {
		t.Skip("no AVX2 (or -tags noasm): sqDist32 is the Go code")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	x := make([]float32, 80)
	c := make([]float64, 80)
	for trial := range 400 {
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-4)))
			c[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-4))
		}
		switch trial % 10 {
		case 7:
			x[rng.IntN(len(x))] = float32(math.Inf(1 - 2*rng.IntN(2)))
		case 8:
			c[rng.IntN(len(c))] = math.NaN()
		}
		for n := 1; n <= 70; n++ {
			ox, oc := trial%5, (trial/5)%7
			xs, cs := x[ox:ox+n], c[oc:oc+n+trial%3] // c may be longer
			want := sqDist32Go(xs, cs)
			got := sqDist32AVX2(&xs[0], &cs[0], n)
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("trial %d, n %d: %v (%#x), Go %v (%#x)", trial, n, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
	// sqDist32 dispatches to the kernel.
	if sqDist32(x[:61], c[:61]) != sqDist32AVX2(&x[0], &c[0], 61) {
		t.Error("sqDist32 does not use the kernel")
	}
}
