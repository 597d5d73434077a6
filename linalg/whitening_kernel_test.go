package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestWhiteningApplyVectorMatchesGo compares Apply through the AVX-512
// and AVX2 kernels with Apply through gonum's axpy, bit for bit, on odd
// sizes (tails of every length), rows starting at unaligned addresses (odd
// T), inputs with NaN, ±Inf and signed zeros, and NaN-poisoned outputs.
// Without the kernels it compares the Go path with itself.
func TestWhiteningApplyVectorMatchesGo(t *testing.T) {
	if !useCombine {
		t.Log("no vector kernel in this build or on this CPU: Go against Go")
	}
	for _, tc := range []struct{ C, K, T int }{
		{1, 1, 1}, {3, 2, 15}, {5, 3, 17}, {7, 4, 63}, {9, 5, 65}, {17, 7, 1025}, {40, 32, 2049 + 80}, {384, 32, 301},
	} {
		t.Run(fmt.Sprintf("C%d_K%d_T%d", tc.C, tc.K, tc.T), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.C)+19, uint64(tc.T)))
			w := randomWhitening(rng, tc.C, tc.K)
			src := randomFloat32(rng, tc.C*tc.T)
			if len(src) > 20 {
				src[3] = float32(math.NaN())
				src[7] = float32(math.Inf(1))
				src[11] = float32(math.Copysign(0, -1))
				w.Value[0] = float32(math.Copysign(0, -1))
			}
			b := nan32(len(src))
			old, old512 := useCombine, combine512
			useCombine = false
			w.Apply(b, src, tc.T)
			useCombine = old
			// The AVX-512 kernel where the CPU has it, then the AVX2 one.
			for _, wide := range []bool{true, false} {
				if wide && !old512 {
					continue
				}
				combine512 = wide
				a := nan32(len(src))
				w.Apply(a, src, tc.T)
				combine512 = old512
				for i := range a {
					if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
						t.Fatalf("AVX-512 %v: dst[%d] = %v (%#x), Go %v (%#x)", wide, i, a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
					}
				}
			}
		})
	}
}
