//go:build amd64 && !noasm

package ops

import "golang.org/x/sys/cpu"

// The AVX2 and AVX-512 kernels (trailing_*amd64.s): blocks of eight, the Go kernels' operations.

// bestISA is the best kernel set this CPU supports (x/sys/cpu checks OS state).
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

// The kernels take n > 0, a multiple of 8; warm ones divide by c0, c0+1, …; they return s.

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

// steadyAsm returns the steady kernel: k on a multiple of eight, g on the rest.
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

// warmAsm returns the warm kernel: k on a multiple of eight, g on the rest.
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
