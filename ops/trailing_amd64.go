//go:build amd64 && !noasm

package ops

// The AVX2 kernels (trailing_amd64.s) and the AVX-512 kernels
// (trailing_avx512_amd64.s) process blocks of eight positions with exactly
// the operations of the Go kernels (trailing_kernels.go); the Go wrappers
// below hand them the largest multiple of eight and finish the tail with the
// Go kernel, which then does what the Go kernel alone would do.
//
// Both need AVX2 and F16C (binary16 loads and stores) and an OS that saves
// the YMM registers; the AVX-512 ones also AVX-512 F, BW and VL and the ZMM
// state. The rounding of 16-bit outputs is correct everywhere in the Go and
// AVX-512 kernels (the AVX-512 bfloat16 store rounds in the float64 domain
// with VGETEXPPD/VRNDSCALEPD/VSCALEFPD); the AVX2 kernels' round-to-odd
// truncates in the float64 domain, which is exact except for
// float32-subnormal means (|v| < 2⁻¹²⁶, i.e. bfloat16 subnormals).

// bestISA is the best kernel set this CPU supports.
var bestISA = func() isa {
	switch {
	case !hasAVX2F16C():
		return isaGo
	case !hasAVX512():
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
		isaAVX512: {steady: steadyF16Asm512, warm: warmF16Asm512, sum: sumF16},
	}
	kernelsBF16 = [...]*kernel[BFloat16]{
		isaGo:     &kernelBF16Go,
		isaAVX2:   {steady: steadyBF16Asm, warm: warmBF16Asm, sum: sumBF16},
		isaAVX512: {steady: steadyBF16Asm512, warm: warmBF16Asm512, sum: sumBF16},
	}
)

// hasAVX512 reports AVX-512 F, BW and VL and OS support for the opmask and
// ZMM state (trailing_avx512_amd64.s).
func hasAVX512() bool

// hasAVX2F16C reports AVX, AVX2, F16C and OS support for YMM state.
func hasAVX2F16C() bool

// The assembly kernels take n > 0, a multiple of 8, and the carried sum s;
// steady kernels divide by multiplying with inv, warm kernels by the window
// counts c0, c0+1, … They return the carried sum.

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

func steadyF32Asm(y, x, lag []float32, s, inv float64) float64 {
	n := len(y)
	x, lag = x[:n], lag[:n]
	if m := n &^ 7; m > 0 {
		s = steadyF32AVX2(&y[0], &x[0], &lag[0], m, s, inv)
		y, x, lag = y[m:], x[m:], lag[m:]
	}
	return steadyF32Go(y, x, lag, s, inv)
}

func warmF32Asm(y, x []float32, t0 int, s float64) float64 {
	n := len(y)
	x = x[:n]
	if m := n &^ 7; m > 0 {
		s = warmF32AVX2(&y[0], &x[0], m, s, float64(t0+1))
		y, x, t0 = y[m:], x[m:], t0+m
	}
	return warmF32Go(y, x, t0, s)
}

func steadyBF16Asm(y, x, lag []BFloat16, s, inv float64) float64 {
	n := len(y)
	x, lag = x[:n], lag[:n]
	if m := n &^ 7; m > 0 {
		s = steadyBF16AVX2(&y[0], &x[0], &lag[0], m, s, inv)
		y, x, lag = y[m:], x[m:], lag[m:]
	}
	return steadyBF16Go(y, x, lag, s, inv)
}

func warmBF16Asm(y, x []BFloat16, t0 int, s float64) float64 {
	n := len(y)
	x = x[:n]
	if m := n &^ 7; m > 0 {
		s = warmBF16AVX2(&y[0], &x[0], m, s, float64(t0+1))
		y, x, t0 = y[m:], x[m:], t0+m
	}
	return warmBF16Go(y, x, t0, s)
}

func steadyF16Asm(y, x, lag []Float16, s, inv float64) float64 {
	n := len(y)
	x, lag = x[:n], lag[:n]
	if m := n &^ 7; m > 0 {
		s = steadyF16AVX2(&y[0], &x[0], &lag[0], m, s, inv)
		y, x, lag = y[m:], x[m:], lag[m:]
	}
	return steadyF16Go(y, x, lag, s, inv)
}

func warmF16Asm(y, x []Float16, t0 int, s float64) float64 {
	n := len(y)
	x = x[:n]
	if m := n &^ 7; m > 0 {
		s = warmF16AVX2(&y[0], &x[0], m, s, float64(t0+1))
		y, x, t0 = y[m:], x[m:], t0+m
	}
	return warmF16Go(y, x, t0, s)
}

//go:noescape
func steadyF32AVX512(y, x, lag *float32, n int, s, inv float64) float64

//go:noescape
func warmF32AVX512(y, x *float32, n int, s, c0 float64) float64

//go:noescape
func steadyBF16AVX512(y, x, lag *BFloat16, n int, s, inv float64) float64

//go:noescape
func warmBF16AVX512(y, x *BFloat16, n int, s, c0 float64) float64

//go:noescape
func steadyF16AVX512(y, x, lag *Float16, n int, s, inv float64) float64

//go:noescape
func warmF16AVX512(y, x *Float16, n int, s, c0 float64) float64

func steadyF32Asm512(y, x, lag []float32, s, inv float64) float64 {
	n := len(y)
	x, lag = x[:n], lag[:n]
	if m := n &^ 7; m > 0 {
		s = steadyF32AVX512(&y[0], &x[0], &lag[0], m, s, inv)
		y, x, lag = y[m:], x[m:], lag[m:]
	}
	return steadyF32Go(y, x, lag, s, inv)
}

func warmF32Asm512(y, x []float32, t0 int, s float64) float64 {
	n := len(y)
	x = x[:n]
	if m := n &^ 7; m > 0 {
		s = warmF32AVX512(&y[0], &x[0], m, s, float64(t0+1))
		y, x, t0 = y[m:], x[m:], t0+m
	}
	return warmF32Go(y, x, t0, s)
}

func steadyBF16Asm512(y, x, lag []BFloat16, s, inv float64) float64 {
	n := len(y)
	x, lag = x[:n], lag[:n]
	if m := n &^ 7; m > 0 {
		s = steadyBF16AVX512(&y[0], &x[0], &lag[0], m, s, inv)
		y, x, lag = y[m:], x[m:], lag[m:]
	}
	return steadyBF16Go(y, x, lag, s, inv)
}

func warmBF16Asm512(y, x []BFloat16, t0 int, s float64) float64 {
	n := len(y)
	x = x[:n]
	if m := n &^ 7; m > 0 {
		s = warmBF16AVX512(&y[0], &x[0], m, s, float64(t0+1))
		y, x, t0 = y[m:], x[m:], t0+m
	}
	return warmBF16Go(y, x, t0, s)
}

func steadyF16Asm512(y, x, lag []Float16, s, inv float64) float64 {
	n := len(y)
	x, lag = x[:n], lag[:n]
	if m := n &^ 7; m > 0 {
		s = steadyF16AVX512(&y[0], &x[0], &lag[0], m, s, inv)
		y, x, lag = y[m:], x[m:], lag[m:]
	}
	return steadyF16Go(y, x, lag, s, inv)
}

func warmF16Asm512(y, x []Float16, t0 int, s float64) float64 {
	n := len(y)
	x = x[:n]
	if m := n &^ 7; m > 0 {
		s = warmF16AVX512(&y[0], &x[0], m, s, float64(t0+1))
		y, x, t0 = y[m:], x[m:], t0+m
	}
	return warmF16Go(y, x, t0, s)
}
