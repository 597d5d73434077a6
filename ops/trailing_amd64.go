//go:build amd64 && !noasm

package ops

import "golang.org/x/sys/cpu"

// The AVX2 (trailing_amd64.s) and AVX-512 (trailing_avx512_amd64.s)
// kernels process blocks of eight positions with exactly the operations of
// the Go kernels (trailing_kernels.go); the wrappers below hand them the
// largest multiple of eight and finish the tail with the Go kernel. Both
// need AVX2, F16C and OS support for YMM state, the AVX-512 ones also
// AVX-512 F, BW, VL and ZMM state. The AVX2 kernels' round-to-odd truncates
// in the float64 domain, which is exact except for float32-subnormal means
// (|v| < 2⁻¹²⁶, bfloat16 subnormals); everything else rounds like Go.

// bestISA is the best kernel set this CPU supports (x/sys/cpu also checks
// that the OS saves the YMM, ZMM and opmask state).
var bestISA = func() isa {
	x := cpu.X86
	switch {
	case !(x.HasAVX && x.HasAVX2 && x.HasF16C):
		return isaGo
	case !(x.HasAVX512 && x.HasAVX512BW && x.HasAVX512VL):
		return isaAVX2
	}
	return isaAVX512
}()

var (
	kernelsF32 = [...]*kernel[float32]{
		isaGo:     &kernelF32Go,
		isaAVX2:   {steady: steadyF32Asm, warm: warmF32Asm, sum: sumF32},
		isaAVX512: {steady: steadyF32Asm512, warm: warmF32Asm512, sum: sumF32},
	}
	kernelsF16 = [...]*kernel[Float16]{
		isaGo:     &kernelF16Go,
		isaAVX2:   {steady: steadyF16Asm, warm: warmF16Asm, sum: sumF16},
		isaAVX512: {steady: steadyF16Asm, warm: warmF16Asm, sum: sumF16}, // steady: float32 lanes with DQ
	}
	kernelsBF16 = [...]*kernel[BFloat16]{
		isaGo:     &kernelBF16Go,
		isaAVX2:   {steady: steadyBF16Asm, warm: warmBF16Asm, sum: sumBF16},
		isaAVX512: {steady: steadyBF16Asm512, warm: warmBF16Asm512, sum: sumBF16},
	}
)

// The assembly kernels take n > 0, a multiple of 8, and the carried sum s
// and return it; steady kernels multiply by inv, warm kernels divide by the
// window counts c0, c0+1, …

//go:noescape
func steadyF32AVX2(y, x, lag *float32, n int, s, inv float64) float64

//go:noescape
func warmF32AVX2(y, x *float32, n int, s, c0 float64) float64

//go:noescape
func steadyBF16AVX2(y, x, lag *BFloat16, n int, s, inv float64) float64

//go:noescape
func warmBF16AVX2(y, x *BFloat16, n int, s, c0 float64) float64

//go:noescape
func steadyF16AVX2(y, x, lag *Float16, n int, s, inv float64) float64

//go:noescape
func warmF16AVX2(y, x *Float16, n int, s, c0 float64) float64

//go:noescape
func steadyF32AVX512(y, x, lag *float32, n int, s, inv float64) float64

//go:noescape
func warmF32AVX512(y, x *float32, n int, s, c0 float64) float64

//go:noescape
func steadyBF16AVX512(y, x, lag *BFloat16, n int, s, inv float64) float64

//go:noescape
func warmBF16AVX512(y, x *BFloat16, n int, s, c0 float64) float64

var (
	steadyF32Asm     = steadyAsm(steadyF32AVX2, steadyF32Go)
	warmF32Asm       = warmAsm(warmF32AVX2, warmF32Go)
	steadyBF16Asm    = steadyAsm(steadyBF16AVX2, steadyBF16Go)
	warmBF16Asm      = warmAsm(warmBF16AVX2, warmBF16Go)
	steadyF16Asm     = steadyAsm(steadyF16AVX2, steadyF16Go)
	warmF16Asm       = warmAsm(warmF16AVX2, warmF16Go)
	steadyF32Asm512  = steadyAsm(steadyF32AVX512, steadyF32Go)
	warmF32Asm512    = warmAsm(warmF32AVX512, warmF32Go)
	steadyBF16Asm512 = steadyAsm(steadyBF16AVX512, steadyBF16Go)
	warmBF16Asm512   = warmAsm(warmBF16AVX512, warmBF16Go)
)

// steadyAsm returns the steady kernel that runs k over the largest
// multiple of eight positions and g over the rest.
func steadyAsm[T Storage](k func(y, x, lag *T, n int, s, inv float64) float64,
	g func(y, x, lag []T, s, inv float64) float64) func(y, x, lag []T, s, inv float64) float64 {
	return func(y, x, lag []T, s, inv float64) float64 {
		n := len(y)
		x, lag = x[:n], lag[:n]
		if m := n &^ 7; m > 0 {
			s = k(&y[0], &x[0], &lag[0], m, s, inv)
			y, x, lag = y[m:], x[m:], lag[m:]
		}
		return g(y, x, lag, s, inv)
	}
}

// warmAsm returns the warm-up kernel that runs k over the largest multiple
// of eight positions and g over the rest.
func warmAsm[T Storage](k func(y, x *T, n int, s, c0 float64) float64,
	g func(y, x []T, t0 int, s float64) float64) func(y, x []T, t0 int, s float64) float64 {
	return func(y, x []T, t0 int, s float64) float64 {
		n := len(y)
		x = x[:n]
		if m := n &^ 7; m > 0 {
			s = k(&y[0], &x[0], m, s, float64(t0+1))
			y, x, t0 = y[m:], x[m:], t0+m
		}
		return g(y, x, t0, s)
	}
}
