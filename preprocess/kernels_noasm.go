//go:build !amd64 || noasm

package preprocess

// Without the amd64 assembly only the Go code exists.

// useAsm selects the vector kernels and avx512 the AVX-512 ones; always
// false here.
var useAsm, avx512 = false, false

// havePOPCNT is false here: no kernel needs it.
const havePOPCNT = false

func convertVec(dst []float32, src []int16, mean []float32, sign float32) bool { return false }

func lowerMedianVec(x, a, b []float32) (float32, bool) { return 0, false }

// useHPAsm selects the vector high-pass and hpAVX512 its AVX-512
// kernel; always false here.
var useHPAsm, hpAVX512 = false, false

func hpPass(e []float64, i0, n, dir int, st *hpState, c *[4]float64) {
	panic("preprocess: no vector high-pass")
}

func lanesIn(e []float64, block []float32, n, s0 int) { lanesInGo(e, block, n, s0) }

func lanesOut(block []float32, n int, e []float64, g float64) { lanesOutGo(block, n, e, g) }

func centreVec(out []float32, T int, cols []float32, C int, med *[blockT]float32) int { return 0 }

func sumRowsVec(acc []int32, src []int16, cf, rows int) int { return 0 }
