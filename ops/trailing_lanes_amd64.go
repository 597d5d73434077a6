//go:build amd64 && !noasm

package ops

import "golang.org/x/sys/cpu"

// The AVX-512 float32-lane kernels (need DQ; bfloat16: BF16) take n > 0, a multiple of laneGranule.

//go:noescape
func steadyBF16Lanes512(y, x, lag *BFloat16, n int, s float64, inv float32) (float64, bool)

//go:noescape
func steadyF16Lanes512(y, x, lag *Float16, n int, s float64, inv float32) (float64, bool)

// Which 16-bit types the AVX-512 kernel set runs with float32 lanes.
var (
	lanesF16  = bestISA == isaAVX512 && cpu.X86.HasAVX512DQ
	lanesBF16 = lanesF16 && cpu.X86.HasAVX512BF16
)

func steadyBF16Lanes512Go(y, x, lag []BFloat16, s float64, inv float32) (float64, bool) {
	return steadyBF16Lanes512(&y[0], &x[0], &lag[0], len(y), s, inv)
}

func steadyF16Lanes512Go(y, x, lag []Float16, s float64, inv float32) (float64, bool) {
	return steadyF16Lanes512(&y[0], &x[0], &lag[0], len(y), s, inv)
}

// The float64-lane kernels finish the tails and redo flagged chunks.
func init() {
	if lanesF16 {
		kernelsF16[isaAVX512].steady = func(y, x, lag []Float16, s, inv float64) float64 {
			return steadyLanes(steadyF16Lanes512Go, steadyF16Asm, y, x, lag, s, inv)
		}
	}
	if lanesBF16 {
		kernelsBF16[isaAVX512].steady = func(y, x, lag []BFloat16, s, inv float64) float64 {
			return steadyLanes(steadyBF16Lanes512Go, steadyBF16Asm512, y, x, lag, s, inv)
		}
	}
}
