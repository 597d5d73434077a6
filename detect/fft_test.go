package detect

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// digitReverse4 reverses the base-4 digits of p (n = 4^m).
func digitReverse4(p, n int) int {
	r := 0
	for m := n; m > 1; m /= 4 {
		r = r*4 + p%4
		p /= 4
	}
	return r
}

func TestFFT4(t *testing.T) {
	t.Parallel()
	for _, n := range []int{4, 16, 64, 256, 1024} {
		rng := rand.New(rand.NewPCG(uint64(n), 3))
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		f := newFFT4(n)
		y := append([]complex128(nil), x...)
		f.forward(y)
		var scale float64
		for _, v := range x {
			scale += cmplx.Abs(v)
		}
		for p := range n {
			k := digitReverse4(p, n)
			var want complex128
			for j, v := range x {
				want += v * cmplx.Rect(1, -2*math.Pi*float64(j*k%n)/float64(n))
			}
			if cmplx.Abs(y[p]-want) > 1e-13*scale {
				t.Fatalf("n %d: position %d holds %v, DFT[%d] = %v", n, p, y[p], k, want)
			}
		}
		f.inverse(y)
		for i := range x {
			if cmplx.Abs(y[i]/complex(float64(n), 0)-x[i]) > 1e-14*scale {
				t.Fatalf("n %d: round trip [%d] = %v, want %v", n, i, y[i]/complex(float64(n), 0), x[i])
			}
		}
	}
	for _, bad := range []int{0, 2, 8, 32, 48, 1000} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("newFFT4(%d) did not panic", bad)
				}
			}()
			newFFT4(bad)
		}()
	}
}
