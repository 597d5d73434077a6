//go:build amd64 && !noasm

#include "textflag.h"

// Assembly kernels of the detector, one file per instruction set and use:
// kernels_avx512_fft_amd64.s (the FFT and its conversions),
// kernels_avx512_scan_amd64.s (maxima, sums and the template responses),
// kernels_avx2_amd64.s (the AVX2 twins) and kernels_amd64.h (constants
// they share). See kernels_amd64.go, and for the exact
// order of operations they share with the Go code, fft.go and kernels.go.
// Every output is computed by the same IEEE operations, in the same order,
// as its Go reference: the vectors run across independent outputs
// (frequencies, columns), never across the terms of one sum. No fused
// multiply-add is used; MXCSR is left as Go leaves it (round to nearest,
// no flush to zero).
//
// Complex numbers are (re, im) pairs of float64; a ZMM register holds four.
// A complex product x·w is formed as x·(c, c) + (xi, xr)·(−d, d) with
// w = (c, d): the real part xr·c + (−(xi·d)) equals Go's xr·c − xi·d
// exactly, the imaginary part xi·c + xr·d is Go's xr·d + xi·c.

// func prefetchLines(p *float32, n int)
//
// PREFETCHT0 of the n 64-byte lines from p on (n ≥ 1): a hint, no
// result.
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX

prefetchLoop:
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	DECQ       CX
	JNZ        prefetchLoop
	RET
