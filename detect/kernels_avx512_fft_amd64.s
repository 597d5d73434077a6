//go:build amd64 && !noasm

#include "textflag.h"
#include "kernels_amd64.h"

// AVX-512 kernels of the detector's FFT: butterfly stages, products with
// the templates' spectra and the conversions between float32 and complex
// (see kernels_amd64.s for the rules every kernel keeps).

// Lane indices that gather the real (even) and imaginary (odd) float64s of
// two ZMM registers of complex numbers (VPERMI2PD).
DATA idxRe<>+0(SB)/8, $0
DATA idxRe<>+8(SB)/8, $2
DATA idxRe<>+16(SB)/8, $4
DATA idxRe<>+24(SB)/8, $6
DATA idxRe<>+32(SB)/8, $8
DATA idxRe<>+40(SB)/8, $10
DATA idxRe<>+48(SB)/8, $12
DATA idxRe<>+56(SB)/8, $14
GLOBL idxRe<>(SB), RODATA|NOPTR, $64

DATA idxIm<>+0(SB)/8, $1
DATA idxIm<>+8(SB)/8, $3
DATA idxIm<>+16(SB)/8, $5
DATA idxIm<>+24(SB)/8, $7
DATA idxIm<>+32(SB)/8, $9
DATA idxIm<>+40(SB)/8, $11
DATA idxIm<>+48(SB)/8, $13
DATA idxIm<>+56(SB)/8, $15
GLOBL idxIm<>(SB), RODATA|NOPTR, $64

// CMUL sets r = x·w for w at memory operand m (four complex): Z12–Z13
// and Z9 are scratch, neg holds negRe. Only Z0–Z15 are used anywhere, so
// that VZEROUPPER leaves no dirty upper register state behind for the
// SSE code of the Go compiler.
#define CMUL(m, x, r, neg) \
	VMOVDDUP m, Z12; \
	VPERMILPD $0xff, m, Z13; \
	VPERMILPD $0x55, x, Z9; \
	VMULPD Z12, x, Z12; \
	VMULPD Z13, Z9, Z9; \
	VPXORQ neg, Z9, Z9; \
	VADDPD Z9, Z12, r

// CMULX sets r = x·w (or x·conj(w)) for w split by splitTwiddles: mc
// holds four (c, c), md four (−d, d) (conj: (d, −d)); Z12 and Z9 are
// scratch. The real part is xr·c + xi·(−d), which is CMUL's xr·c +
// (−(xi·d)), Go's xr·c − xi·d (conj: xr·c + xi·d, Go's xr·c − xi·(−d));
// the imaginary part xi·c + xr·d (conj: xi·c + xr·(−d), Go's xr·(−d) +
// xi·c).
#define CMULX(mc, md, x, r) \
	VPERMILPD $0x55, x, Z9; \
	VMULPD mc, x, Z12; \
	VMULPD md, Z9, Z9; \
	VADDPD Z9, Z12, r

// func fftFwdStageAVX512(x *complex128, n, q int, wx *complex128)
//
// One decimation-in-frequency radix-4 stage of fft4.forward with quarter
// span q (a multiple of 4) over x[0:n]; wx is the stage's xf.
TEXT ·fftFwdStageAVX512(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ q+16(FP), DX
	MOVQ wx+24(FP), R8
	SHLQ $4, CX
	ADDQ DI, CX                  // end of x
	SHLQ $4, DX                  // q in bytes
	VMOVUPD negIm<>(SB), Z14

fwdBlock:
	LEAQ (DI)(DX*1), R13
	LEAQ (R13)(DX*1), R14
	LEAQ (R14)(DX*1), BX
	MOVQ R8, R9                  // the twiddles of j
	XORQ AX, AX

fwdJ:
	VMOVUPD (DI)(AX*1), Z0
	VMOVUPD (R13)(AX*1), Z1
	VMOVUPD (R14)(AX*1), Z2
	VMOVUPD (BX)(AX*1), Z3
	VADDPD  Z2, Z0, Z4           // t0 = a0 + a2
	VSUBPD  Z2, Z0, Z5           // t1 = a0 − a2
	VADDPD  Z3, Z1, Z6           // t2 = a1 + a3
	VSUBPD  Z3, Z1, Z7           // d = a1 − a3
	VPERMILPD $0x55, Z7, Z7
	VPXORQ  Z14, Z7, Z7          // t3 = −i·d = (d.im, −d.re)
	VADDPD  Z6, Z4, Z8           // t0 + t2
	VMOVUPD Z8, (DI)(AX*1)
	VADDPD  Z7, Z5, Z8           // t1 + t3
	CMULX(0(R9), 64(R9), Z8, Z8)
	VMOVUPD Z8, (R13)(AX*1)
	VSUBPD  Z6, Z4, Z10          // t0 − t2
	CMULX(128(R9), 192(R9), Z10, Z10)
	VMOVUPD Z10, (R14)(AX*1)
	VSUBPD  Z7, Z5, Z11          // t1 − t3
	CMULX(256(R9), 320(R9), Z11, Z11)
	VMOVUPD Z11, (BX)(AX*1)
	ADDQ    $384, R9
	ADDQ    $64, AX
	CMPQ    AX, DX
	JLT     fwdJ

	LEAQ (BX)(DX*1), DI
	CMPQ DI, CX
	JLT  fwdBlock
	VZEROUPPER
	RET

// func fftInvStageAVX512(x *complex128, n, q int, wx *complex128)
//
// One decimation-in-time radix-4 stage of fft4.inverse with quarter span
// q (a multiple of 4) over x[0:n]; wx is the stage's xi.
TEXT ·fftInvStageAVX512(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ q+16(FP), DX
	MOVQ wx+24(FP), R8
	SHLQ $4, CX
	ADDQ DI, CX
	SHLQ $4, DX
	VMOVUPD negRe<>(SB), Z15

invBlock:
	LEAQ (DI)(DX*1), R13
	LEAQ (R13)(DX*1), R14
	LEAQ (R14)(DX*1), BX
	MOVQ R8, R9                  // the twiddles of j
	XORQ AX, AX

invJ:
	VMOVUPD (DI)(AX*1), Z0
	VMOVUPD (R13)(AX*1), Z1
	VMOVUPD (R14)(AX*1), Z2
	VMOVUPD (BX)(AX*1), Z3
	CMULX(0(R9), 64(R9), Z1, Z1)
	CMULX(128(R9), 192(R9), Z2, Z2)
	CMULX(256(R9), 320(R9), Z3, Z3)
	VADDPD  Z2, Z0, Z4           // t0
	VSUBPD  Z2, Z0, Z5           // t1
	VADDPD  Z3, Z1, Z6           // t2
	VSUBPD  Z3, Z1, Z7           // d
	VPERMILPD $0x55, Z7, Z7
	VPXORQ  Z15, Z7, Z7          // t3 = +i·d = (−d.im, d.re)
	VADDPD  Z6, Z4, Z8
	VMOVUPD Z8, (DI)(AX*1)
	VADDPD  Z7, Z5, Z9
	VMOVUPD Z9, (R13)(AX*1)
	VSUBPD  Z6, Z4, Z10
	VMOVUPD Z10, (R14)(AX*1)
	VSUBPD  Z7, Z5, Z11
	VMOVUPD Z11, (BX)(AX*1)
	ADDQ    $384, R9
	ADDQ    $64, AX
	CMPQ    AX, DX
	JLT     invJ

	LEAQ (BX)(DX*1), DI
	CMPQ DI, CX
	JLT  invBlock
	VZEROUPPER
	RET

// TRANSPOSE4 transposes four ZMM registers seen as 4×4 matrices of complex
// numbers (one 128-bit lane each): afterwards a holds the first complex of
// a, b, c, d, and so on. Z8–Z11 are scratch.
#define TRANSPOSE4(a, b, c, d) \
	VSHUFF64X2 $0x44, b, a, Z8; \
	VSHUFF64X2 $0xee, b, a, Z9; \
	VSHUFF64X2 $0x44, d, c, Z10; \
	VSHUFF64X2 $0xee, d, c, Z11; \
	VSHUFF64X2 $0x88, Z10, Z8, a; \
	VSHUFF64X2 $0xdd, Z10, Z8, b; \
	VSHUFF64X2 $0x88, Z11, Z9, c; \
	VSHUFF64X2 $0xdd, Z11, Z9, d

// func fftSpan4AVX512(x *complex128, n int, inv bool)
//
// The twiddle-free span-4 stage of fft4 (last of forward, first of
// inverse) over x[0:n], n a multiple of 16: four groups at a time,
// transposed so that each register holds one position of four groups.
TEXT ·fftSpan4AVX512(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	SHLQ $4, CX
	ADDQ DI, CX
	VMOVUPD negIm<>(SB), Z15     // forward: −i·d
	CMPB inv+16(FP), $0
	JEQ  span4Loop
	VMOVUPD negRe<>(SB), Z15     // inverse: +i·d

span4Loop:
	VMOVUPD (DI), Z0
	VMOVUPD 64(DI), Z1
	VMOVUPD 128(DI), Z2
	VMOVUPD 192(DI), Z3
	TRANSPOSE4(Z0, Z1, Z2, Z3)
	VADDPD  Z2, Z0, Z4           // t0
	VSUBPD  Z2, Z0, Z5           // t1
	VADDPD  Z3, Z1, Z6           // t2
	VSUBPD  Z3, Z1, Z7           // d
	VPERMILPD $0x55, Z7, Z7
	VPXORQ  Z15, Z7, Z7          // t3
	VADDPD  Z6, Z4, Z0
	VADDPD  Z7, Z5, Z1
	VSUBPD  Z6, Z4, Z2
	VSUBPD  Z7, Z5, Z3
	TRANSPOSE4(Z0, Z1, Z2, Z3)
	VMOVUPD Z0, (DI)
	VMOVUPD Z1, 64(DI)
	VMOVUPD Z2, 128(DI)
	VMOVUPD Z3, 192(DI)
	ADDQ    $256, DI
	CMPQ    DI, CX
	JLT     span4Loop
	VZEROUPPER
	RET

// func cmulAVX512(p, z, s *complex128, n int)
//
// p[i] = z[i]·s[i] for i < n, n a multiple of 4 (Go's complex product).
TEXT ·cmulAVX512(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ s+16(FP), R8
	MOVQ n+24(FP), CX
	SHLQ $4, CX
	VMOVUPD negRe<>(SB), Z15
	XORQ AX, AX

cmulLoop:
	VMOVUPD (SI)(AX*1), Z0
	CMUL((R8)(AX*1), Z0, Z0, Z15)
	VMOVUPD Z0, (DI)(AX*1)
	ADDQ    $64, AX
	CMPQ    AX, CX
	JLT     cmulLoop
	VZEROUPPER
	RET

// func cvtAVX512(dA, dB *float32, p *complex128, n int)
//
// dA[i] = float32(real(p[i])) and, unless dB is nil, dB[i] =
// float32(imag(p[i])) for i < n, n a multiple of 8.
TEXT ·cvtAVX512(SB), NOSPLIT, $0-32
	MOVQ dA+0(FP), DI
	MOVQ dB+8(FP), R9
	MOVQ p+16(FP), SI
	MOVQ n+24(FP), CX
	VMOVUPD idxRe<>(SB), Z14
	VMOVUPD idxIm<>(SB), Z15
	XORQ AX, AX                  // column

cvtLoop:
	VMOVUPD   (SI), Z0
	VMOVUPD   64(SI), Z1
	VMOVAPD   Z14, Z2
	VPERMI2PD Z1, Z0, Z2         // real parts
	VCVTPD2PS Z2, Y3
	VMOVUPS   Y3, (DI)(AX*4)
	TESTQ     R9, R9
	JEQ       cvtNext
	VMOVAPD   Z15, Z4
	VPERMI2PD Z1, Z0, Z4         // imaginary parts
	VCVTPD2PS Z4, Y5
	VMOVUPS   Y5, (R9)(AX*4)

cvtNext:
	ADDQ $128, SI
	ADDQ $8, AX
	CMPQ AX, CX
	JLT  cvtLoop
	VZEROUPPER
	RET

// Lane indices interleaving two ZMM registers of float64 (a0 b0 a1 b1 …):
// low and high halves.
DATA idxLo<>+0(SB)/8, $0
DATA idxLo<>+8(SB)/8, $8
DATA idxLo<>+16(SB)/8, $1
DATA idxLo<>+24(SB)/8, $9
DATA idxLo<>+32(SB)/8, $2
DATA idxLo<>+40(SB)/8, $10
DATA idxLo<>+48(SB)/8, $3
DATA idxLo<>+56(SB)/8, $11
GLOBL idxLo<>(SB), RODATA|NOPTR, $64

DATA idxHi<>+0(SB)/8, $4
DATA idxHi<>+8(SB)/8, $12
DATA idxHi<>+16(SB)/8, $5
DATA idxHi<>+24(SB)/8, $13
DATA idxHi<>+32(SB)/8, $6
DATA idxHi<>+40(SB)/8, $14
DATA idxHi<>+48(SB)/8, $7
DATA idxHi<>+56(SB)/8, $15
GLOBL idxHi<>(SB), RODATA|NOPTR, $64

// func fillAVX512(z *complex128, a, b *float32, n int)
//
// z[j] = complex(float64(a[j]), float64(b[j])) for j < n, n a multiple of
// 8; b = nil gives a zero imaginary part.
TEXT ·fillAVX512(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), R8
	MOVQ n+24(FP), CX
	VMOVUPD idxLo<>(SB), Z14
	VMOVUPD idxHi<>(SB), Z15
	VPXORQ  Z1, Z1, Z1
	XORQ AX, AX

fillLoop:
	VCVTPS2PD (SI)(AX*4), Z0
	TESTQ     R8, R8
	JEQ       fillStore
	VCVTPS2PD (R8)(AX*4), Z1

fillStore:
	VMOVAPD   Z14, Z2
	VPERMI2PD Z1, Z0, Z2
	VMOVAPD   Z15, Z3
	VPERMI2PD Z1, Z0, Z3
	VMOVUPD   Z2, (DI)
	VMOVUPD   Z3, 64(DI)
	ADDQ      $128, DI
	ADDQ      $8, AX
	CMPQ      AX, CX
	JLT       fillLoop
	VZEROUPPER
	RET

// func mulSpan4InvAVX512(p, z, s *complex128, n int)
//
// p = z·s (cmulAVX512) followed by the span-4 stage of the inverse
// (fftSpan4AVX512 with inv), in one pass; n a multiple of 16.
TEXT ·mulSpan4InvAVX512(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ s+16(FP), R8
	MOVQ n+24(FP), CX
	SHLQ $4, CX
	VMOVUPD negRe<>(SB), Z15
	XORQ AX, AX

mulSpan4Loop:
	VMOVUPD (SI)(AX*1), Z0
	CMUL((R8)(AX*1), Z0, Z0, Z15)
	VMOVUPD 64(SI)(AX*1), Z1
	CMUL(64(R8)(AX*1), Z1, Z1, Z15)
	VMOVUPD 128(SI)(AX*1), Z2
	CMUL(128(R8)(AX*1), Z2, Z2, Z15)
	VMOVUPD 192(SI)(AX*1), Z3
	CMUL(192(R8)(AX*1), Z3, Z3, Z15)
	TRANSPOSE4(Z0, Z1, Z2, Z3)
	VADDPD  Z2, Z0, Z4           // t0
	VSUBPD  Z2, Z0, Z5           // t1
	VADDPD  Z3, Z1, Z6           // t2
	VSUBPD  Z3, Z1, Z7           // d
	VPERMILPD $0x55, Z7, Z7
	VPXORQ  Z15, Z7, Z7          // t3 = +i·d
	VADDPD  Z6, Z4, Z0
	VADDPD  Z7, Z5, Z1
	VSUBPD  Z6, Z4, Z2
	VSUBPD  Z7, Z5, Z3
	TRANSPOSE4(Z0, Z1, Z2, Z3)
	VMOVUPD Z0, (DI)(AX*1)
	VMOVUPD Z1, 64(DI)(AX*1)
	VMOVUPD Z2, 128(DI)(AX*1)
	VMOVUPD Z3, 192(DI)(AX*1)
	ADDQ    $256, AX
	CMPQ    AX, CX
	JLT     mulSpan4Loop
	VZEROUPPER
	RET

// Split layout: eight complex numbers x[8m … 8m+7] as their eight real
// parts (bytes 128m …) and then their eight imaginary parts (128m+64 …),
// so that a complex product or ±i·d needs no shuffles. A stage with
// quarter span q ≥ 8 finds its quarters at the same byte offsets as in
// the interleaved layout.

// SBFLY is the split radix-4 butterfly of fft4.inverse on the eight
// columns whose a0 … a3 (already multiplied by the conjugate twiddles)
// are in Z0/Z1, Z2/Z3, Z4/Z5, Z6/Z7 (real/imaginary); it stores y0 … y3
// at (DI), (R13), (R14), (BX) + AX. t0 = a0+a2, t1 = a0−a2, t2 = a1+a3,
// d = a1−a3; y0 = t0+t2, y2 = t0−t2, y1 = t1 + i·d = (t1r − di, t1i +
// dr), y3 = t1 − i·d = (t1r + di, t1i − dr): Go's t1r + (−di) and t1r −
// (−di) are these exactly. Z8–Z11 are scratch.
#define SBFLY \
	VADDPD  Z4, Z0, Z8; \
	VSUBPD  Z4, Z0, Z4; \
	VADDPD  Z5, Z1, Z9; \
	VSUBPD  Z5, Z1, Z5; \
	VADDPD  Z6, Z2, Z10; \
	VSUBPD  Z6, Z2, Z6; \
	VADDPD  Z7, Z3, Z11; \
	VSUBPD  Z7, Z3, Z7; \
	VADDPD  Z10, Z8, Z0; \
	VADDPD  Z11, Z9, Z1; \
	VMOVUPD Z0, (DI)(AX*1); \
	VMOVUPD Z1, 64(DI)(AX*1); \
	VSUBPD  Z10, Z8, Z2; \
	VSUBPD  Z11, Z9, Z3; \
	VMOVUPD Z2, (R14)(AX*1); \
	VMOVUPD Z3, 64(R14)(AX*1); \
	VSUBPD  Z7, Z4, Z8; \
	VADDPD  Z6, Z5, Z9; \
	VMOVUPD Z8, (R13)(AX*1); \
	VMOVUPD Z9, 64(R13)(AX*1); \
	VADDPD  Z7, Z4, Z10; \
	VSUBPD  Z6, Z5, Z11; \
	VMOVUPD Z10, (BX)(AX*1); \
	VMOVUPD Z11, 64(BX)(AX*1)

// SCMULC sets (xr, xi) = x·conj(w) for the split twiddles at mc (eight
// c) and md (eight −d): xr·c − xi·(−d) and xr·(−d) + xi·c, Go's product
// by conj(w) = (c, −d) operation for operation; Z8, Z9 are scratch.
#define SCMULC(mc, md, xr, xi) \
	VMULPD mc, xr, Z8; \
	VMULPD md, xi, Z9; \
	VMULPD md, xr, xr; \
	VMULPD mc, xi, xi; \
	VADDPD xi, xr, xi; \
	VSUBPD Z9, Z8, xr

// SLOADI loads the eight interleaved complex numbers at m and 64+m as
// their real parts (re) and imaginary parts (im); Z14, Z15 hold idxRe,
// idxIm and Z8 is scratch.
#define SLOADI(m, m64, re, im) \
	VMOVUPD   m, im; \
	VMOVUPD   m64, Z8; \
	VMOVAPD   Z14, re; \
	VPERMI2PD Z8, im, re; \
	VPERMT2PD Z8, Z15, im

// func fftInvStageSplitAVX512(x *complex128, n, q int, ws *float64, in bool)
//
// One stage of fft4.inverse with quarter span q (a multiple of 8) over
// x[0:n] in the split layout; ws is the stage's split twiddles (xs). With
// in, the stage reads the interleaved layout (and writes the split one).
TEXT ·fftInvStageSplitAVX512(SB), NOSPLIT, $0-33
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ q+16(FP), DX
	MOVQ ws+24(FP), R8
	MOVBLZX in+32(FP), R11
	SHLQ $4, CX
	ADDQ DI, CX
	SHLQ $4, DX
	VMOVUPD idxRe<>(SB), Z14
	VMOVUPD idxIm<>(SB), Z15

sinvBlock:
	LEAQ (DI)(DX*1), R13
	LEAQ (R13)(DX*1), R14
	LEAQ (R14)(DX*1), BX
	MOVQ R8, R9                  // the twiddles of j
	XORQ AX, AX

sinvJ:
	TESTQ R11, R11
	JNE   sinvLoadI
	VMOVUPD (DI)(AX*1), Z0
	VMOVUPD 64(DI)(AX*1), Z1
	VMOVUPD (R13)(AX*1), Z2
	VMOVUPD 64(R13)(AX*1), Z3
	VMOVUPD (R14)(AX*1), Z4
	VMOVUPD 64(R14)(AX*1), Z5
	VMOVUPD (BX)(AX*1), Z6
	VMOVUPD 64(BX)(AX*1), Z7
	JMP     sinvMul

sinvLoadI:
	SLOADI((DI)(AX*1), 64(DI)(AX*1), Z0, Z1)
	SLOADI((R13)(AX*1), 64(R13)(AX*1), Z2, Z3)
	SLOADI((R14)(AX*1), 64(R14)(AX*1), Z4, Z5)
	SLOADI((BX)(AX*1), 64(BX)(AX*1), Z6, Z7)

sinvMul:
	SCMULC(0(R9), 64(R9), Z2, Z3)
	SCMULC(128(R9), 192(R9), Z4, Z5)
	SCMULC(256(R9), 320(R9), Z6, Z7)
	SBFLY
	ADDQ    $384, R9
	ADDQ    $128, AX
	CMPQ    AX, DX
	JLT     sinvJ

	LEAQ (BX)(DX*1), DI
	CMPQ DI, CX
	JLT  sinvBlock
	VZEROUPPER
	RET

// func cvtSplitAVX512(dA, dB *float32, p *complex128, n int)
//
// cvtGo for p in the split layout: dA[i] = float32(real(p[i])) and,
// unless dB is nil, dB[i] = float32(imag(p[i])) for i < n (n ≥ 1; the
// last eight masked).
TEXT ·cvtSplitAVX512(SB), NOSPLIT, $0-32
	MOVQ dA+0(FP), DI
	MOVQ dB+8(FP), R9
	MOVQ p+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ CX, DX
	ANDQ $-8, DX                 // whole groups of eight
	XORQ AX, AX                  // column
	TESTQ R9, R9
	JEQ   cvtSOne
	TESTQ DX, DX
	JEQ   cvtSTail

cvtSTwo:
	VCVTPD2PS (SI), Y0
	VCVTPD2PS 64(SI), Y1
	VMOVUPS   Y0, (DI)(AX*4)
	VMOVUPS   Y1, (R9)(AX*4)
	ADDQ      $128, SI
	ADDQ      $8, AX
	CMPQ      AX, DX
	JLT       cvtSTwo
	JMP       cvtSTail

cvtSOne:
	TESTQ DX, DX
	JEQ   cvtSTail

cvtSOneLoop:
	VCVTPD2PS (SI), Y0
	VMOVUPS   Y0, (DI)(AX*4)
	ADDQ      $128, SI
	ADDQ      $8, AX
	CMPQ      AX, DX
	JLT       cvtSOneLoop

cvtSTail:
	SUBQ AX, CX                  // the last n mod 8 columns, masked
	JEQ  cvtSDone
	MOVL $1, DX
	SHLXL CX, DX, DX
	DECL DX
	KMOVW DX, K1
	VCVTPD2PS (SI), Y0
	VMOVUPS   Y0, K1, (DI)(AX*4)
	TESTQ     R9, R9
	JEQ       cvtSDone
	VCVTPD2PS 64(SI), Y1
	VMOVUPS   Y1, K1, (R9)(AX*4)

cvtSDone:
	VZEROUPPER
	RET

// The forward transform's last stage can leave each group of 16 in the
// transposed order of its span-4 butterflies (position 4b+a holding
// element 4a+b: transpose16) and the product kernel take both factors in
// that order: the product is pointwise, and the inverse's span-4 stage
// works on the transposed groups, so the two transposes between them
// fall away.

// func fftSpan4FwdTAVX512(x *complex128, n int)
//
// fftSpan4AVX512 of the forward transform, the result left transposed
// in each group of 16 (n a multiple of 16).
TEXT ·fftSpan4FwdTAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	SHLQ $4, CX
	ADDQ DI, CX
	VMOVUPD negIm<>(SB), Z15     // forward: −i·d

span4TLoop:
	VMOVUPD (DI), Z0
	VMOVUPD 64(DI), Z1
	VMOVUPD 128(DI), Z2
	VMOVUPD 192(DI), Z3
	TRANSPOSE4(Z0, Z1, Z2, Z3)
	VADDPD  Z2, Z0, Z4           // t0
	VSUBPD  Z2, Z0, Z5           // t1
	VADDPD  Z3, Z1, Z6           // t2
	VSUBPD  Z3, Z1, Z7           // d
	VPERMILPD $0x55, Z7, Z7
	VPXORQ  Z15, Z7, Z7          // t3
	VADDPD  Z6, Z4, Z0
	VADDPD  Z7, Z5, Z1
	VSUBPD  Z6, Z4, Z2
	VSUBPD  Z7, Z5, Z3
	VMOVUPD Z0, (DI)
	VMOVUPD Z1, 64(DI)
	VMOVUPD Z2, 128(DI)
	VMOVUPD Z3, 192(DI)
	ADDQ    $256, DI
	CMPQ    DI, CX
	JLT     span4TLoop
	VZEROUPPER
	RET

// func mulSpan4InvTAVX512(p, z, s *complex128, n int, w4 *complex128)
//
// mulSpan4InvAVX512 for z as fftSpan4FwdTAVX512 leaves it and s in the
// same order (transpose16): the products are already in the transposed
// order of the span-4 stage. The spectrum is read as complex numbers
// (CMUL): in the split form of splitTwiddles it would be twice the bytes,
// and the six spectra of a block come from L2. The inverse's next stage
// (quarter span 4, twiddles w4 = its xi) follows in registers: after the
// transpose back each register holds one quarter of a group of 16.
TEXT ·mulSpan4InvTAVX512(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ s+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ w4+32(FP), R9
	SHLQ $4, CX
	VMOVUPD negRe<>(SB), Z15
	XORQ AX, AX

mulSpan4TLoop:
	VMOVUPD (SI)(AX*1), Z0
	CMUL((R8)(AX*1), Z0, Z0, Z15)
	VMOVUPD 64(SI)(AX*1), Z1
	CMUL(64(R8)(AX*1), Z1, Z1, Z15)
	VMOVUPD 128(SI)(AX*1), Z2
	CMUL(128(R8)(AX*1), Z2, Z2, Z15)
	VMOVUPD 192(SI)(AX*1), Z3
	CMUL(192(R8)(AX*1), Z3, Z3, Z15)
	VADDPD  Z2, Z0, Z4           // t0
	VSUBPD  Z2, Z0, Z5           // t1
	VADDPD  Z3, Z1, Z6           // t2
	VSUBPD  Z3, Z1, Z7           // d
	VPERMILPD $0x55, Z7, Z7
	VPXORQ  Z15, Z7, Z7          // t3 = +i·d
	VADDPD  Z6, Z4, Z0
	VADDPD  Z7, Z5, Z1
	VSUBPD  Z6, Z4, Z2
	VSUBPD  Z7, Z5, Z3
	TRANSPOSE4(Z0, Z1, Z2, Z3)
	// The stage of quarter span 4 (fftInvStageAVX512 with q = 4).
	CMULX(0(R9), 64(R9), Z1, Z1)
	CMULX(128(R9), 192(R9), Z2, Z2)
	CMULX(256(R9), 320(R9), Z3, Z3)
	VADDPD  Z2, Z0, Z4           // t0
	VSUBPD  Z2, Z0, Z5           // t1
	VADDPD  Z3, Z1, Z6           // t2
	VSUBPD  Z3, Z1, Z7           // d
	VPERMILPD $0x55, Z7, Z7
	VPXORQ  Z15, Z7, Z7          // t3 = +i·d
	VADDPD  Z6, Z4, Z8
	VMOVUPD Z8, (DI)(AX*1)
	VADDPD  Z7, Z5, Z9
	VMOVUPD Z9, 64(DI)(AX*1)
	VSUBPD  Z6, Z4, Z10
	VMOVUPD Z10, 128(DI)(AX*1)
	VSUBPD  Z7, Z5, Z11
	VMOVUPD Z11, 192(DI)(AX*1)
	ADDQ    $256, AX
	CMPQ    AX, CX
	JLT     mulSpan4TLoop
	VZEROUPPER
	RET
