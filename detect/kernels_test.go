package detect

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The vector kernels against their Go references on random inputs, bit for
// bit: odd sizes, unaligned starts (slices from odd offsets), tails, and
// outputs poisoned with NaN so that anything left unwritten shows. Without
// the vector kernels (other architectures, -tags noasm, no AVX-512) the
// tests compare the Go kernels with themselves and only check the plumbing.

// withGo runs fn with the Go kernels selected.
func withGo(fn func()) {
	old := useAsm
	useAsm = false
	defer func() { useAsm = old }()
	fn()
}

func randComplex(rng *rand.Rand, n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(rng.NormFloat64()*math.Exp(rng.NormFloat64()*4), rng.NormFloat64())
	}
	return x
}

func randF32(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()*3))
	}
	return x
}

// sameC reports the first index where a and b differ in bits, NaNs of any
// payload or sign counting as equal (an infinite input may give NaNs
// whose sign differs: Go forms x·(−d), the kernels −(x·d)); −1 if none.
func sameC(a, b []complex128) int {
	eq := func(x, y float64) bool {
		return math.Float64bits(x) == math.Float64bits(y) || (x != x && y != y)
	}
	for i := range a {
		if !eq(real(a[i]), real(b[i])) || !eq(imag(a[i]), imag(b[i])) {
			return i
		}
	}
	return -1
}

// sameF reports the first index where a and b differ in bits, NaNs of any
// payload counting as equal; −1 if none.
func sameF(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return i
		}
	}
	return -1
}

func nanC(n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(math.NaN(), math.NaN())
	}
	return x
}

func nanF(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.NaN())
	}
	return x
}

func TestKernelFFT(t *testing.T) {
	if !haveAsm {
		t.Log("no vector kernels in this build or on this CPU: Go against Go")
	}
	rng := rand.New(rand.NewPCG(19, 1))
	for _, n := range []int{4, 16, 64, 256, 1024, 4096} {
		f := newFFT4(n)
		for rep := range 3 {
			for _, off := range []int{0, 1} {
				buf := randComplex(rng, n+off)
				if rep == 2 {
					buf[off+n/3] = complex(math.Inf(1), 0)
				}
				x := buf[off:]
				a := append([]complex128(nil), x...)
				b := append([]complex128(nil), x...)
				f.forward(a)
				f.forwardGo(b)
				if i := sameC(a, b); i >= 0 {
					t.Fatalf("forward n %d: at %d %v, Go %v", n, i, a[i], b[i])
				}
				f.inverse(a)
				f.inverseGo(b)
				if i := sameC(a, b); i >= 0 {
					t.Fatalf("inverse n %d: at %d %v, Go %v", n, i, a[i], b[i])
				}
			}
		}
	}
}

func TestKernelCmulCvt(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 2))
	for _, n := range []int{4, 8, 12, 964, 1024} {
		for _, off := range []int{0, 1, 3} {
			z := randComplex(rng, n+off)[off:]
			s := randComplex(rng, n+off)[off:]
			p, q := nanC(n+off)[off:], nanC(n)
			if !cmulVec(p, z, s) {
				cmulGo(p, z, s)
			}
			cmulGo(q, z, s)
			if i := sameC(p, q); i >= 0 {
				t.Fatalf("cmul n %d off %d: at %d %v, Go %v", n, off, i, p[i], q[i])
			}
		}
	}
	for _, n := range []int{1, 7, 8, 9, 17, 964, 1000} {
		for _, off := range []int{0, 1, 5} {
			p := randComplex(rng, n+off)[off:]
			for _, pair := range []bool{true, false} {
				a, b := nanF(n+off)[off:], nanF(n+off)[off:]
				ga, gb := nanF(n), nanF(n)
				if !pair {
					b, gb = nil, nil
				}
				i := cvtVec(a, b, p)
				var bt []float32
				if pair {
					bt = b[i:]
				}
				cvtGo(a[i:], bt, p[i:])
				cvtGo(ga, gb, p)
				if j := sameF(a, ga); j >= 0 {
					t.Fatalf("cvt real n %d: at %d %g, Go %g", n, j, a[j], ga[j])
				}
				if pair {
					if j := sameF(b, gb); j >= 0 {
						t.Fatalf("cvt imag n %d: at %d %g, Go %g", n, j, b[j], gb[j])
					}
				}
			}
		}
	}
}
