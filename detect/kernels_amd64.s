//go:build amd64 && !noasm

#include "textflag.h"

// AVX-512 kernels of the detector; see kernels_amd64.go, and for the exact
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

// Sign masks: negate the real (even) or the imaginary (odd) float64 lanes.
DATA negRe<>+0(SB)/8, $0x8000000000000000
DATA negRe<>+8(SB)/8, $0
DATA negRe<>+16(SB)/8, $0x8000000000000000
DATA negRe<>+24(SB)/8, $0
DATA negRe<>+32(SB)/8, $0x8000000000000000
DATA negRe<>+40(SB)/8, $0
DATA negRe<>+48(SB)/8, $0x8000000000000000
DATA negRe<>+56(SB)/8, $0
GLOBL negRe<>(SB), RODATA|NOPTR, $64

DATA negIm<>+0(SB)/8, $0
DATA negIm<>+8(SB)/8, $0x8000000000000000
DATA negIm<>+16(SB)/8, $0
DATA negIm<>+24(SB)/8, $0x8000000000000000
DATA negIm<>+32(SB)/8, $0
DATA negIm<>+40(SB)/8, $0x8000000000000000
DATA negIm<>+48(SB)/8, $0
DATA negIm<>+56(SB)/8, $0x8000000000000000
GLOBL negIm<>(SB), RODATA|NOPTR, $64

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

DATA nan32<>+0(SB)/4, $0x7fc00000
GLOBL nan32<>(SB), RODATA|NOPTR, $4

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

// func maxSqAVX512(m, b *float32, K, W, n int)
//
// m[i] = max(0, b[i]², b[W+i]², …, b[(K−1)·W+i]²) for i < n, n a multiple
// of 16, NaN wherever one of the squares is NaN (as Go's max).
TEXT ·maxSqAVX512(SB), NOSPLIT, $0-40
	MOVQ m+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ K+16(FP), R8
	MOVQ W+24(FP), R9
	MOVQ n+32(FP), CX
	SHLQ $2, R9                  // row stride in bytes
	VBROADCASTSS nan32<>(SB), Z15
	XORQ AX, AX

maxSqCol:
	VPXORD   Z0, Z0, Z0
	KXORW    K1, K1, K1
	MOVQ     SI, R10
	MOVQ     R8, R11

maxSqRow:
	VMOVUPS  (R10)(AX*4), Z1
	VMULPS   Z1, Z1, Z1
	VCMPPS   $3, Z1, Z1, K2      // unordered: the square is NaN
	KORW     K2, K1, K1
	VMAXPS   Z1, Z0, Z0
	ADDQ     R9, R10
	DECQ     R11
	JNZ      maxSqRow

	VMOVAPS  Z15, K1, Z0
	VMOVUPS  Z0, (DI)(AX*4)
	ADDQ     $16, AX
	CMPQ     AX, CX
	JLT      maxSqCol
	VZEROUPPER
	RET

// func blockMaxAVX2(mb, m *float32, nb int)
//
// mb[j] = max(0, m[8j], …, m[8j+7]) for j < nb, NaN if one is NaN.
TEXT ·blockMaxAVX2(SB), NOSPLIT, $0-24
	MOVQ mb+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ nb+16(FP), CX
	VXORPS X7, X7, X7
	VMOVSS nan32<>(SB), X6
	XORQ AX, AX

blockMaxLoop:
	VMOVUPS      (SI), Y0
	VCMPPS       $3, Y0, Y0, Y5
	VMOVMSKPS    Y5, BX
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VMAXSS       X7, X0, X0      // +0 is returned for ±0 and negatives
	TESTL        BX, BX
	JEQ          blockMaxStore
	VMOVAPS      X6, X0

blockMaxStore:
	VMOVSS X0, (DI)(AX*4)
	ADDQ   $32, SI
	INCQ   AX
	CMPQ   AX, CX
	JLT    blockMaxLoop
	VZEROUPPER
	RET

// func rowSumAVX512(dst, src *float32, offs *int, nrows, n int)
//
// dst[i] = src[offs[0]+i] + src[offs[1]+i] + … + src[offs[nrows−1]+i],
// added left to right, for i < n; nrows ≥ 1.
TEXT ·rowSumAVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ offs+16(FP), R8
	MOVQ nrows+24(FP), R9
	MOVQ n+32(FP), CX
	XORQ AX, AX

rowSumChunk:
	MOVQ CX, BX
	SUBQ AX, BX
	CMPQ BX, $16
	JGE  rowSumFull
	MOVL $1, DX
	SHLXL BX, DX, DX
	DECL DX
	KMOVW DX, K1
	JMP  rowSumGo

rowSumFull:
	KXNORW K1, K1, K1

rowSumGo:
	MOVQ    (R8), R10
	ADDQ    AX, R10
	VMOVUPS.Z (SI)(R10*4), K1, Z0
	MOVQ    $1, R11

rowSumRow:
	CMPQ    R11, R9
	JGE     rowSumStore
	MOVQ    (R8)(R11*8), R10
	ADDQ    AX, R10
	VMOVUPS.Z (SI)(R10*4), K1, Z1
	VADDPS  Z1, Z0, Z0
	INCQ    R11
	JMP     rowSumRow

rowSumStore:
	VMOVUPS Z0, K1, (DI)(AX*4)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JLT     rowSumChunk
	VZEROUPPER
	RET

// Constants of resp5AVX512 (float32, broadcast).
DATA absMask32<>+0(SB)/4, $0x7fffffff
GLOBL absMask32<>(SB), RODATA|NOPTR, $4
DATA minusOne32<>+0(SB)/4, $0xbf800000
GLOBL minusOne32<>(SB), RODATA|NOPTR, $4
DATA sizeIdx32<>+0(SB)/4, $0x00000000
DATA sizeIdx32<>+4(SB)/4, $0x3f800000
DATA sizeIdx32<>+8(SB)/4, $0x40000000
DATA sizeIdx32<>+12(SB)/4, $0x40400000
DATA sizeIdx32<>+16(SB)/4, $0x40800000
GLOBL sizeIdx32<>(SB), RODATA|NOPTR, $20

// PICK folds size s (response in a, its index at memory operand idx) into
// the running choice: Z10 best |A| (−1: none), Z12 its A, Z11 its size;
// Z14 holds absMask32.
#define PICK(a, idx) \
	VPANDD Z14, a, Z13; \
	VCMPPS $0x1e, Z10, Z13, K2; \
	VMOVAPS Z13, K2, Z10; \
	VMOVAPS a, K2, Z12; \
	VBROADCASTSS idx, K2, Z11

// func resp5AVX512(dst, b *float32, offs *int, nc, K, W, n int, wt *float32, thr2 float32, noPrune bool)
//
// respGo for S = 5 (K ≤ 64). First the bounds u of all shapes, two at a
// time (shape k in the low and k+1 in the high eight lanes), each from 0
// in channel order, noting the shapes with u > thr2 in a column < n (all
// with noPrune); then the five responses of those shapes, two at a time
// (the next two noted, or the last one twice), each from 0 in channel
// order, and the choice of the best size by strict |A| > best.
TEXT ·resp5AVX512(SB), NOSPLIT, $16-69
	MOVQ dst+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ offs+16(FP), R8
	MOVQ nc+24(FP), R9
	MOVQ K+32(FP), R10
	MOVQ W+40(FP), R12
	MOVQ n+48(FP), CX
	MOVQ wt+56(FP), R13
	MOVL $1, DX
	SHLXL CX, DX, DX
	DECL DX
	KMOVW DX, K1                 // columns < n
	KSHIFTLW $8, K1, K3
	KORW K1, K3, K3              // columns < n of both shapes
	SHLQ $2, R12                 // W in bytes
	VBROADCASTSS thr2+64(FP), Z13
	XORQ CX, CX                  // shape k
	XORQ R11, R11                // the shapes noted

respUPair:
	MOVQ CX, R14
	IMULQ R12, R14               // byte offset of row k
	LEAQ (R14)(R12*1), DX        // row k+1, or k again for the last of odd K
	LEAQ 1(CX), AX
	CMPQ AX, R10
	JLT  respUTwo
	MOVQ R14, DX

respUTwo:
	VPXORD Z0, Z0, Z0
	XORQ   BX, BX

respUJ:
	MOVQ         (R8)(BX*8), AX
	LEAQ         (SI)(AX*4), AX
	VMOVUPS.Z    (AX)(R14*1), K1, Y6
	VMOVUPS.Z    (AX)(DX*1), K1, Y7
	VINSERTF64X4 $1, Y7, Z6, Z6
	VMULPS       Z6, Z6, Z7
	VADDPS       Z7, Z0, Z0
	INCQ         BX
	CMPQ         BX, R9
	JLT          respUJ

	IMUL3Q  $96, CX, AX          // byte offset of shape k's rows in dst
	VMOVUPS Y0, (DI)(AX*1)
	VCMPPS  $0x1e, Z13, Z0, K3, K2
	KMOVW   K2, BX
	CMPB    noPrune+68(FP), $0
	JEQ     respUNote
	MOVL    $0xffff, BX

respUNote:
	TESTL $0xff, BX
	JEQ   respUHi
	BTSQ  CX, R11

respUHi:
	LEAQ 1(CX), DX
	CMPQ DX, R10
	JGE  respA
	VEXTRACTF64X4 $1, Z0, Y7
	VMOVUPS Y7, 96(DI)(AX*1)
	TESTL $0xff00, BX
	JEQ   respUNext
	BTSQ  DX, R11

respUNext:
	ADDQ $2, CX
	CMPQ CX, R10
	JLT  respUPair

respA:
	VBROADCASTSS absMask32<>(SB), Z14
	VBROADCASTSS minusOne32<>(SB), Z15

respAPair:
	TESTQ R11, R11
	JEQ   respDone
	BSFQ  R11, AX                // shape a
	BTRQ  AX, R11
	MOVQ  AX, BX                 // shape b: the next noted, or a again
	TESTQ R11, R11
	JEQ   respAHave
	BSFQ  R11, BX
	BTRQ  BX, R11

respAHave:
	MOVQ  AX, R14
	IMULQ R12, R14               // row a
	MOVQ  BX, DX
	IMULQ R12, DX                // row b
	IMULQ $96, AX
	MOVQ  AX, 0(SP)              // a's rows in dst
	IMULQ $96, BX
	MOVQ  BX, 8(SP)              // b's rows in dst
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	XORQ   BX, BX

respAJ:
	MOVQ         (R8)(BX*8), AX
	LEAQ         (SI)(AX*4), AX
	VMOVUPS.Z    (AX)(R14*1), K1, Y6
	VMOVUPS.Z    (AX)(DX*1), K1, Y7
	VINSERTF64X4 $1, Y7, Z6, Z6
	LEAQ         (BX)(BX*4), CX  // j·S
	VBROADCASTSS (R13)(CX*4), Z8
	VMULPS       Z6, Z8, Z8
	VADDPS       Z8, Z1, Z1
	VBROADCASTSS 4(R13)(CX*4), Z9
	VMULPS       Z6, Z9, Z9
	VADDPS       Z9, Z2, Z2
	VBROADCASTSS 8(R13)(CX*4), Z8
	VMULPS       Z6, Z8, Z8
	VADDPS       Z8, Z3, Z3
	VBROADCASTSS 12(R13)(CX*4), Z9
	VMULPS       Z6, Z9, Z9
	VADDPS       Z9, Z4, Z4
	VBROADCASTSS 16(R13)(CX*4), Z8
	VMULPS       Z6, Z8, Z8
	VADDPS       Z8, Z5, Z5
	INCQ         BX
	CMPQ         BX, R9
	JLT          respAJ

	VMOVAPS Z15, Z10
	VMOVAPS Z15, Z11
	VPXORD  Z12, Z12, Z12
	PICK(Z1, sizeIdx32<>+0(SB))
	PICK(Z2, sizeIdx32<>+4(SB))
	PICK(Z3, sizeIdx32<>+8(SB))
	PICK(Z4, sizeIdx32<>+12(SB))
	PICK(Z5, sizeIdx32<>+16(SB))
	MOVQ    0(SP), AX
	VMOVUPS Y12, 32(DI)(AX*1)
	VMOVUPS Y11, 64(DI)(AX*1)
	MOVQ    8(SP), BX
	CMPQ    AX, BX
	JEQ     respAPair
	VEXTRACTF64X4 $1, Z12, Y13
	VMOVUPS Y13, 32(DI)(BX*1)
	VEXTRACTF64X4 $1, Z11, Y13
	VMOVUPS Y13, 64(DI)(BX*1)
	JMP     respAPair

respDone:
	VZEROUPPER
	RET

// Eight-lane constants of chooseAVX2 (memory operands): |x| mask, 1, −1,
// −Inf.
DATA abs8<>+0(SB)/8, $0x7fffffff7fffffff
DATA abs8<>+8(SB)/8, $0x7fffffff7fffffff
DATA abs8<>+16(SB)/8, $0x7fffffff7fffffff
DATA abs8<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL abs8<>(SB), RODATA|NOPTR, $32
DATA one8<>+0(SB)/8, $0x3f8000003f800000
DATA one8<>+8(SB)/8, $0x3f8000003f800000
DATA one8<>+16(SB)/8, $0x3f8000003f800000
DATA one8<>+24(SB)/8, $0x3f8000003f800000
GLOBL one8<>(SB), RODATA|NOPTR, $32
DATA minusOne8<>+0(SB)/8, $0xbf800000bf800000
DATA minusOne8<>+8(SB)/8, $0xbf800000bf800000
DATA minusOne8<>+16(SB)/8, $0xbf800000bf800000
DATA minusOne8<>+24(SB)/8, $0xbf800000bf800000
GLOBL minusOne8<>(SB), RODATA|NOPTR, $32
DATA negInf8<>+0(SB)/8, $0xff800000ff800000
DATA negInf8<>+8(SB)/8, $0xff800000ff800000
DATA negInf8<>+16(SB)/8, $0xff800000ff800000
DATA negInf8<>+24(SB)/8, $0xff800000ff800000
GLOBL negInf8<>(SB), RODATA|NOPTR, $32

// func chooseAVX2(out, resp *float32, K int, thr2, c float32, noPrune bool)
//
// chooseGo for the eight columns of a response block: the shapes in order
// k = 0 … K−1 with, per column (one lane each), the running best |A|
// (Y0, from −1), its q = s·K+k (Y1), its sign (Y2), the count of shapes
// not skipped (Y3) and h = (best·best)·c if best > 0, else −Inf (Y15).
// evaluate's skip test best > 0 ∧ u < best·best·c is then u < h (no u
// is below −Inf), and h is formed from each candidate |A| off the chain
// of dependent operations that runs from one shape to the next. q is
// formed in float32, exact for q < 2²⁴.
TEXT ·chooseAVX2(SB), NOSPLIT, $0-33
	MOVQ         out+0(FP), DI
	MOVQ         resp+8(FP), SI
	MOVQ         K+16(FP), CX
	MOVBLZX      noPrune+32(FP), DX
	VBROADCASTSS thr2+24(FP), Y4
	VBROADCASTSS c+28(FP), Y5
	VXORPS       Y6, Y6, Y6          // 0
	VCVTSI2SSQ   CX, X10, X10
	VBROADCASTSS X10, Y10            // K
	VMOVUPS      minusOne8<>(SB), Y0
	VMOVUPS      negInf8<>(SB), Y15
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3
	VXORPS       Y11, Y11, Y11       // k

chooseShape:
	VCMPPS  $0, Y6, Y6, Y13          // all ones
	TESTQ   DX, DX
	JNE     chooseKept
	VMOVUPS (SI), Y12                // u_k
	VCMPPS  $0x1e, Y4, Y12, Y13      // u > thr2
	VCMPPS  $0x11, Y15, Y12, Y14     // u < h
	VANDNPS Y13, Y14, Y13            // kept = (u > thr2) ∧ ¬(u < h)

chooseKept:
	VANDPS  one8<>(SB), Y13, Y7
	VADDPS  Y7, Y3, Y3               // count the kept shapes
	VMOVUPS 64(SI), Y12              // chosen s (−1: none)
	VCMPPS  $0x1d, Y6, Y12, Y14      // valid: s ≥ 0
	VMULPS  Y10, Y12, Y12
	VADDPS  Y11, Y12, Y12            // q = s·K + k
	VMOVUPS 32(SI), Y8
	VANDPS  abs8<>(SB), Y8, Y8       // |A|
	VCMPPS  $0x11, Y1, Y12, Y7       // q < bq
	VCMPPS  $0, Y0, Y8, Y9           // |A| == best
	VANDPS  Y7, Y9, Y9
	VCMPPS  $0x1e, Y0, Y8, Y7        // |A| > best
	VORPS   Y7, Y9, Y9
	VANDPS  Y14, Y9, Y9
	VANDPS  Y9, Y13, Y13             // update = kept ∧ valid ∧ better
	VBLENDVPS Y13, Y8, Y0, Y0
	VBLENDVPS Y13, Y12, Y1, Y1
	VMULPS  Y8, Y8, Y9
	VMULPS  Y5, Y9, Y9               // |A|·|A|·c
	VCMPPS  $0x1e, Y6, Y8, Y7        // |A| > 0
	VANDPS  Y7, Y9, Y9
	VANDNPS negInf8<>(SB), Y7, Y7
	VORPS   Y7, Y9, Y9               // h of |A|
	VBLENDVPS Y13, Y9, Y15, Y15
	VMOVUPS 32(SI), Y14
	VCMPPS  $0x11, Y6, Y14, Y14      // A < 0
	VMOVUPS one8<>(SB), Y12
	VBLENDVPS Y14, minusOne8<>(SB), Y12, Y12 // its sign: A < 0 ? −1 : 1
	VBLENDVPS Y13, Y12, Y2, Y2
	VADDPS  one8<>(SB), Y11, Y11     // k + 1
	ADDQ    $96, SI
	DECQ    CX
	JNZ     chooseShape

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func chooseAVX512(out, resp *float32, K int, thr2, c float32, noPrune bool)
//
// chooseAVX2 with opmasks (AVX-512 VL on YMM registers): the tests give
// masks, combined by mask operations, and the updates are masked moves.
// Y0 best |A| (from −1), Y1 its q, Y2 its sign, Y3 the count of shapes
// not skipped, Y15 h = (best·best)·c if best > 0, else −Inf.
TEXT ·chooseAVX512(SB), NOSPLIT, $0-33
	MOVQ         out+0(FP), DI
	MOVQ         resp+8(FP), SI
	MOVQ         K+16(FP), CX
	MOVBLZX      noPrune+32(FP), DX
	VBROADCASTSS thr2+24(FP), Y4
	VBROADCASTSS c+28(FP), Y5
	VXORPS       Y6, Y6, Y6          // 0
	VCVTSI2SSQ   CX, X10, X10
	VBROADCASTSS X10, Y10            // K
	VMOVUPS      one8<>(SB), Y7
	VMOVUPS      minusOne8<>(SB), Y13
	VMOVUPS      Y13, Y0
	VMOVUPS      negInf8<>(SB), Y15
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3
	VXORPS       Y11, Y11, Y11       // k

choose5Shape:
	KXNORW  K1, K1, K1               // kept: all
	TESTQ   DX, DX
	JNE     choose5Kept
	VMOVUPS (SI), Y12                // u_k
	VCMPPS  $0x1e, Y4, Y12, K1       // u > thr2
	VCMPPS  $0x11, Y15, Y12, K2      // u < h
	KANDNW  K1, K2, K1               // kept = (u > thr2) ∧ ¬(u < h)

choose5Kept:
	VADDPS  Y7, Y3, K1, Y3           // count the kept shapes
	VMOVUPS 64(SI), Y12              // chosen s (−1: none)
	VCMPPS  $0x1d, Y6, Y12, K3       // valid: s ≥ 0
	KANDW   K3, K1, K1
	VMULPS  Y10, Y12, Y12
	VADDPS  Y11, Y12, Y12            // q = s·K + k
	VMOVUPS 32(SI), Y8               // A
	VANDPS  abs8<>(SB), Y8, Y9       // |A|
	VCMPPS  $0x11, Y1, Y12, K4       // q < bq
	VCMPPS  $0, Y0, Y9, K5           // |A| == best
	KANDW   K4, K5, K5
	VCMPPS  $0x1e, Y0, Y9, K4        // |A| > best
	KORW    K4, K5, K5
	KANDW   K5, K1, K1               // update = kept ∧ valid ∧ better
	VMOVAPS Y9, K1, Y0
	VMOVAPS Y12, K1, Y1
	VMULPS  Y9, Y9, Y14
	VMULPS  Y5, Y14, Y14             // |A|·|A|·c
	VCMPPS  $0x1e, Y6, Y9, K1, K6    // updated and |A| > 0
	VMOVUPS negInf8<>(SB), K1, Y15
	VMOVAPS Y14, K6, Y15             // h of the new best
	VCMPPS  $0x11, Y6, Y8, K1, K2    // updated and A < 0
	VMOVAPS Y7, K1, Y2
	VMOVAPS Y13, K2, Y2              // its sign: A < 0 ? −1 : 1
	VADDPS  Y7, Y11, Y11             // k + 1
	ADDQ    $96, SI
	DECQ    CX
	JNZ     choose5Shape

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
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

// func passBitsAVX512(bits *uint16, v *float32, n int, thr2 float32)
//
// Bit j%16 of bits[j/16] is set iff v[j] > thr2 (ordered: not for NaN),
// for j < n; the bits past n in the last word are 0.
TEXT ·passBitsAVX512(SB), NOSPLIT, $0-28
	MOVQ bits+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS thr2+24(FP), Z1
	XORQ AX, AX

passLoop:
	MOVQ CX, BX
	SUBQ AX, BX
	CMPQ BX, $16
	JGE  passFull
	MOVL $1, DX
	SHLXL BX, DX, DX
	DECL DX
	KMOVW DX, K1
	JMP  passGo

passFull:
	KXNORW K1, K1, K1

passGo:
	VMOVUPS.Z (SI)(AX*4), K1, Z0
	VCMPPS    $0x1e, Z1, Z0, K1, K2  // v > thr2
	KMOVW     K2, DX
	MOVW      DX, (DI)
	ADDQ      $2, DI
	ADDQ      $16, AX
	CMPQ      AX, CX
	JLT       passLoop
	VZEROUPPER
	RET

// AVX2 kernels: the AVX-512 kernels above at half width (two complex
// numbers or eight float32 per YMM register), for CPUs without AVX-512;
// every output is computed by the same operations in the same order.

// Load masks for n < 8 float32 lanes: 8 words of −1 then 8 of 0; the mask
// of the first n lanes starts at maskTab32 + (8−n)·4.
DATA maskTab32<>+0(SB)/8, $0xffffffffffffffff
DATA maskTab32<>+8(SB)/8, $0xffffffffffffffff
DATA maskTab32<>+16(SB)/8, $0xffffffffffffffff
DATA maskTab32<>+24(SB)/8, $0xffffffffffffffff
DATA maskTab32<>+32(SB)/8, $0
DATA maskTab32<>+40(SB)/8, $0
DATA maskTab32<>+48(SB)/8, $0
DATA maskTab32<>+56(SB)/8, $0
GLOBL maskTab32<>(SB), RODATA|NOPTR, $64

// CMUL2 is CMUL on YMM registers (with neg = negIm: x·conj(w), real
// xr·c + xi·d, imaginary xi·c + (−(xr·d))): r = x·w for w at memory
// operand m (two complex); Y9, Y12, Y13 are scratch.
#define CMUL2(m, x, r, neg) \
	VMOVDDUP m, Y12; \
	VPERMILPD $0xf, m, Y13; \
	VPERMILPD $0x5, x, Y9; \
	VMULPD Y12, x, Y12; \
	VMULPD Y13, Y9, Y9; \
	VXORPD neg, Y9, Y9; \
	VADDPD Y9, Y12, r

// func fftFwdStageAVX2(x *complex128, n, q int, w1, w2, w3 *complex128)
//
// fftFwdStageAVX512 at half width (q a multiple of 2).
TEXT ·fftFwdStageAVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ q+16(FP), DX
	MOVQ w1+24(FP), R8
	MOVQ w2+32(FP), R9
	MOVQ w3+40(FP), R10
	SHLQ $4, CX
	ADDQ DI, CX
	SHLQ $4, DX
	VMOVUPD negRe<>(SB), Y15
	VMOVUPD negIm<>(SB), Y14

fwd2Block:
	LEAQ (DI)(DX*1), R13
	LEAQ (R13)(DX*1), R14
	LEAQ (R14)(DX*1), BX
	XORQ AX, AX

fwd2J:
	VMOVUPD (DI)(AX*1), Y0
	VMOVUPD (R13)(AX*1), Y1
	VMOVUPD (R14)(AX*1), Y2
	VMOVUPD (BX)(AX*1), Y3
	VADDPD  Y2, Y0, Y4           // t0
	VSUBPD  Y2, Y0, Y5           // t1
	VADDPD  Y3, Y1, Y6           // t2
	VSUBPD  Y3, Y1, Y7           // d
	VPERMILPD $0x5, Y7, Y7
	VXORPD  Y14, Y7, Y7          // t3 = −i·d
	VADDPD  Y6, Y4, Y8
	VMOVUPD Y8, (DI)(AX*1)
	VADDPD  Y7, Y5, Y8
	CMUL2((R8)(AX*1), Y8, Y8, Y15)
	VMOVUPD Y8, (R13)(AX*1)
	VSUBPD  Y6, Y4, Y10
	CMUL2((R9)(AX*1), Y10, Y10, Y15)
	VMOVUPD Y10, (R14)(AX*1)
	VSUBPD  Y7, Y5, Y11
	CMUL2((R10)(AX*1), Y11, Y11, Y15)
	VMOVUPD Y11, (BX)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, DX
	JLT     fwd2J

	LEAQ (BX)(DX*1), DI
	CMPQ DI, CX
	JLT  fwd2Block
	VZEROUPPER
	RET

// func fftInvStageAVX2(x *complex128, n, q int, w1, w2, w3 *complex128)
//
// fftInvStageAVX512 at half width (q a multiple of 2).
TEXT ·fftInvStageAVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ q+16(FP), DX
	MOVQ w1+24(FP), R8
	MOVQ w2+32(FP), R9
	MOVQ w3+40(FP), R10
	SHLQ $4, CX
	ADDQ DI, CX
	SHLQ $4, DX
	VMOVUPD negRe<>(SB), Y15
	VMOVUPD negIm<>(SB), Y14

inv2Block:
	LEAQ (DI)(DX*1), R13
	LEAQ (R13)(DX*1), R14
	LEAQ (R14)(DX*1), BX
	XORQ AX, AX

inv2J:
	VMOVUPD (DI)(AX*1), Y0
	VMOVUPD (R13)(AX*1), Y1
	VMOVUPD (R14)(AX*1), Y2
	VMOVUPD (BX)(AX*1), Y3
	CMUL2((R8)(AX*1), Y1, Y1, Y14)
	CMUL2((R9)(AX*1), Y2, Y2, Y14)
	CMUL2((R10)(AX*1), Y3, Y3, Y14)
	VADDPD  Y2, Y0, Y4           // t0
	VSUBPD  Y2, Y0, Y5           // t1
	VADDPD  Y3, Y1, Y6           // t2
	VSUBPD  Y3, Y1, Y7           // d
	VPERMILPD $0x5, Y7, Y7
	VXORPD  Y15, Y7, Y7          // t3 = +i·d
	VADDPD  Y6, Y4, Y8
	VMOVUPD Y8, (DI)(AX*1)
	VADDPD  Y7, Y5, Y9
	VMOVUPD Y9, (R13)(AX*1)
	VSUBPD  Y6, Y4, Y10
	VMOVUPD Y10, (R14)(AX*1)
	VSUBPD  Y7, Y5, Y11
	VMOVUPD Y11, (BX)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, DX
	JLT     inv2J

	LEAQ (BX)(DX*1), DI
	CMPQ DI, CX
	JLT  inv2Block
	VZEROUPPER
	RET

// SPAN4Y runs the twiddle-free span-4 butterfly on one group of four
// complex numbers, a0 a1 in Y0 and a2 a3 in Y1, with Y15 the sign mask of
// t3 (negIm forward, negRe inverse); the outputs y0 y1 go to Y0 and y2 y3
// to Y1. Y4–Y11 are scratch; the lanes not kept compute the same sums in
// the other order and are dropped.
#define SPAN4Y \
	VADDPD  Y1, Y0, Y4; \
	VSUBPD  Y1, Y0, Y5; \
	VPERM2F128 $0x01, Y4, Y4, Y6; \
	VADDPD  Y6, Y4, Y7; \
	VSUBPD  Y6, Y4, Y8; \
	VPERM2F128 $0x01, Y5, Y5, Y9; \
	VPERMILPD $0x5, Y9, Y9; \
	VXORPD  Y15, Y9, Y9; \
	VADDPD  Y9, Y5, Y10; \
	VSUBPD  Y9, Y5, Y11; \
	VPERM2F128 $0x20, Y10, Y7, Y0; \
	VPERM2F128 $0x20, Y11, Y8, Y1

// func fftSpan4AVX2(x *complex128, n int, inv bool)
//
// fftSpan4AVX512 at half width: one group of four at a time, held as
// (t0, t2) and (t1, d) after the first sums.
TEXT ·fftSpan4AVX2(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	SHLQ $4, CX
	ADDQ DI, CX
	VMOVUPD negIm<>(SB), Y15
	CMPB inv+16(FP), $0
	JEQ  span42Loop
	VMOVUPD negRe<>(SB), Y15

span42Loop:
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	SPAN4Y
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	ADDQ    $64, DI
	CMPQ    DI, CX
	JLT     span42Loop
	VZEROUPPER
	RET

// func mulSpan4InvAVX2(p, z, s *complex128, n int)
//
// mulSpan4InvAVX512 at half width; n a multiple of 4.
TEXT ·mulSpan4InvAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ s+16(FP), R8
	MOVQ n+24(FP), CX
	SHLQ $4, CX
	VMOVUPD negRe<>(SB), Y15
	XORQ AX, AX

mulSpan42Loop:
	VMOVUPD (SI)(AX*1), Y0
	CMUL2((R8)(AX*1), Y0, Y0, Y15)
	VMOVUPD 32(SI)(AX*1), Y1
	CMUL2(32(R8)(AX*1), Y1, Y1, Y15)
	SPAN4Y
	VMOVUPD Y0, (DI)(AX*1)
	VMOVUPD Y1, 32(DI)(AX*1)
	ADDQ    $64, AX
	CMPQ    AX, CX
	JLT     mulSpan42Loop
	VZEROUPPER
	RET

// func cmulAVX2(p, z, s *complex128, n int)
//
// cmulAVX512 at half width; n a multiple of 2.
TEXT ·cmulAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ s+16(FP), R8
	MOVQ n+24(FP), CX
	SHLQ $4, CX
	VMOVUPD negRe<>(SB), Y15
	XORQ AX, AX

cmul2Loop:
	VMOVUPD (SI)(AX*1), Y0
	CMUL2((R8)(AX*1), Y0, Y0, Y15)
	VMOVUPD Y0, (DI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     cmul2Loop
	VZEROUPPER
	RET

// func cvtAVX2(dA, dB *float32, p *complex128, n int)
//
// cvtAVX512 at half width: four complex numbers at a time, converted and
// then split into real and imaginary parts; n a multiple of 4.
TEXT ·cvtAVX2(SB), NOSPLIT, $0-32
	MOVQ dA+0(FP), DI
	MOVQ dB+8(FP), R9
	MOVQ p+16(FP), SI
	MOVQ n+24(FP), CX
	XORQ AX, AX

cvt2Loop:
	VMOVUPD    (SI), Y0
	VMOVUPD    32(SI), Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VSHUFPS    $0x88, X1, X0, X2   // real parts
	VMOVUPS    X2, (DI)(AX*4)
	TESTQ      R9, R9
	JEQ        cvt2Next
	VSHUFPS    $0xdd, X1, X0, X3   // imaginary parts
	VMOVUPS    X3, (R9)(AX*4)

cvt2Next:
	ADDQ $64, SI
	ADDQ $4, AX
	CMPQ AX, CX
	JLT  cvt2Loop
	VZEROUPPER
	RET

// func fillAVX2(z *complex128, a, b *float32, n int)
//
// fillAVX512 at half width; n a multiple of 4.
TEXT ·fillAVX2(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), R8
	MOVQ n+24(FP), CX
	VXORPD Y1, Y1, Y1
	XORQ AX, AX

fill2Loop:
	VCVTPS2PD (SI)(AX*4), Y0
	TESTQ     R8, R8
	JEQ       fill2Store
	VCVTPS2PD (R8)(AX*4), Y1

fill2Store:
	VUNPCKLPD  Y1, Y0, Y2          // a0 b0 a2 b2
	VUNPCKHPD  Y1, Y0, Y3          // a1 b1 a3 b3
	VPERM2F128 $0x20, Y3, Y2, Y4
	VPERM2F128 $0x31, Y3, Y2, Y5
	VMOVUPD    Y4, (DI)
	VMOVUPD    Y5, 32(DI)
	ADDQ       $64, DI
	ADDQ       $4, AX
	CMPQ       AX, CX
	JLT        fill2Loop
	VZEROUPPER
	RET

// func maxSqAVX2(m, b *float32, K, W, n int)
//
// maxSqAVX512 at half width; n a multiple of 8.
TEXT ·maxSqAVX2(SB), NOSPLIT, $0-40
	MOVQ m+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ K+16(FP), R8
	MOVQ W+24(FP), R9
	MOVQ n+32(FP), CX
	SHLQ $2, R9
	VBROADCASTSS nan32<>(SB), Y15
	XORQ AX, AX

maxSq2Col:
	VXORPS   Y0, Y0, Y0
	VXORPS   Y2, Y2, Y2
	MOVQ     SI, R10
	MOVQ     R8, R11

maxSq2Row:
	VMOVUPS  (R10)(AX*4), Y1
	VMULPS   Y1, Y1, Y1
	VCMPPS   $3, Y1, Y1, Y3      // unordered: the square is NaN
	VORPS    Y3, Y2, Y2
	VMAXPS   Y1, Y0, Y0
	ADDQ     R9, R10
	DECQ     R11
	JNZ      maxSq2Row

	VBLENDVPS Y2, Y15, Y0, Y0
	VMOVUPS  Y0, (DI)(AX*4)
	ADDQ     $8, AX
	CMPQ     AX, CX
	JLT      maxSq2Col
	VZEROUPPER
	RET

// func rowSumAVX2(dst, src *float32, offs *int, nrows, n int)
//
// rowSumAVX512 at half width, the tail by masked loads and stores.
TEXT ·rowSumAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ offs+16(FP), R8
	MOVQ nrows+24(FP), R9
	MOVQ n+32(FP), CX
	LEAQ maskTab32<>(SB), DX
	XORQ AX, AX

rowSum2Chunk:
	MOVQ CX, BX
	SUBQ AX, BX
	CMPQ BX, $8
	JGE  rowSum2Full
	NEGQ BX
	VMOVDQU 32(DX)(BX*4), Y15    // the first n−AX lanes
	JMP  rowSum2Go

rowSum2Full:
	VMOVDQU (DX), Y15

rowSum2Go:
	MOVQ    (R8), R10
	ADDQ    AX, R10
	VMASKMOVPS (SI)(R10*4), Y15, Y0
	MOVQ    $1, R11

rowSum2Row:
	CMPQ    R11, R9
	JGE     rowSum2Store
	MOVQ    (R8)(R11*8), R10
	ADDQ    AX, R10
	VMASKMOVPS (SI)(R10*4), Y15, Y1
	VADDPS  Y1, Y0, Y0
	INCQ    R11
	JMP     rowSum2Row

rowSum2Store:
	VMASKMOVPS Y0, Y15, (DI)(AX*4)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JLT     rowSum2Chunk
	VZEROUPPER
	RET

// PICK2 is PICK on YMM registers: Y10 best |A|, Y12 its A, Y11 its size;
// Y14 holds absMask32; Y7, Y9 and Y13 are scratch.
#define PICK2(a, idx) \
	VANDPS Y14, a, Y13; \
	VCMPPS $0x1e, Y10, Y13, Y9; \
	VBLENDVPS Y9, Y13, Y10, Y10; \
	VBLENDVPS Y9, a, Y12, Y12; \
	VBROADCASTSS idx, Y7; \
	VBLENDVPS Y9, Y7, Y11, Y11

// func resp5AVX2(dst, b *float32, offs *int, nc, K, W, n int, wt *float32, thr2 float32, noPrune bool)
//
// resp5AVX512 at half width, one shape at a time: its bound u from 0 in
// channel order, and unless noPrune, if no column < n has u > thr2,
// nothing more; otherwise its five responses, each from 0 in channel
// order, and the choice of the best size; masked loads for n < 8.
TEXT ·resp5AVX2(SB), NOSPLIT, $0-69
	MOVQ dst+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ offs+16(FP), R8
	MOVQ nc+24(FP), R9
	MOVQ K+32(FP), R10
	MOVQ W+40(FP), R12
	MOVQ n+48(FP), CX
	MOVQ wt+56(FP), R13
	LEAQ maskTab32<>(SB), DX
	NEGQ CX
	VMOVDQU 32(DX)(CX*4), Y15    // the first n lanes
	SHLQ $2, R12                 // W in bytes
	VBROADCASTSS absMask32<>(SB), Y14
	XORQ R14, R14                // byte offset of row k

resp2K:
	VXORPS Y0, Y0, Y0
	XORQ   BX, BX

resp2U:
	MOVQ       (R8)(BX*8), AX
	LEAQ       (SI)(AX*4), AX
	VMASKMOVPS (AX)(R14*1), Y15, Y6
	VMULPS     Y6, Y6, Y7
	VADDPS     Y7, Y0, Y0
	INCQ       BX
	CMPQ       BX, R9
	JLT        resp2U
	VMOVUPS    Y0, (DI)
	CMPB       noPrune+68(FP), $0
	JNE        resp2A
	VBROADCASTSS thr2+64(FP), Y7
	VCMPPS     $0x1e, Y7, Y0, Y7 // u > thr2
	VANDPS     Y15, Y7, Y7       // in a column < n
	VMOVMSKPS  Y7, AX
	TESTL      AX, AX
	JEQ        resp2Next

resp2A:
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	XORQ   BX, BX
	MOVQ   R13, CX

resp2J:
	MOVQ         (R8)(BX*8), AX
	LEAQ         (SI)(AX*4), AX
	VMASKMOVPS   (AX)(R14*1), Y15, Y6
	VBROADCASTSS (CX), Y8
	VMULPS       Y6, Y8, Y8
	VADDPS       Y8, Y1, Y1
	VBROADCASTSS 4(CX), Y9
	VMULPS       Y6, Y9, Y9
	VADDPS       Y9, Y2, Y2
	VBROADCASTSS 8(CX), Y8
	VMULPS       Y6, Y8, Y8
	VADDPS       Y8, Y3, Y3
	VBROADCASTSS 12(CX), Y9
	VMULPS       Y6, Y9, Y9
	VADDPS       Y9, Y4, Y4
	VBROADCASTSS 16(CX), Y8
	VMULPS       Y6, Y8, Y8
	VADDPS       Y8, Y5, Y5
	ADDQ         $20, CX
	INCQ         BX
	CMPQ         BX, R9
	JLT          resp2J

	VBROADCASTSS minusOne32<>(SB), Y10
	VMOVAPS Y10, Y11
	VXORPS  Y12, Y12, Y12
	PICK2(Y1, sizeIdx32<>+0(SB))
	PICK2(Y2, sizeIdx32<>+4(SB))
	PICK2(Y3, sizeIdx32<>+8(SB))
	PICK2(Y4, sizeIdx32<>+12(SB))
	PICK2(Y5, sizeIdx32<>+16(SB))
	VMOVUPS Y12, 32(DI)
	VMOVUPS Y11, 64(DI)

resp2Next:
	ADDQ    $96, DI
	ADDQ    R12, R14
	DECQ    R10
	JNZ     resp2K
	VZEROUPPER
	RET

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

// func finePassAVX512(blks *int32, cols *uint32, pass *uint64, nw int, m *float32, offs *int, nrows, W int, thr2 float32, noPrune bool) int
//
// finePassGo for nrows ≥ 1: for each set bit of pass[0:nw] in increasing
// order (block blk; a block at or past W ends the scan), the sums of its
// columns < W, eight lanes, as rowSumAVX512 forms them (the first row,
// then the others added in order), and the bits of those > thr2 (of
// every column < W with noPrune). blks[n] and cols[n] are written for
// every block and n counts only those with a bit set, so no branch waits
// on the sums and the sums of consecutive blocks overlap.
TEXT ·finePassAVX512(SB), NOSPLIT, $0-80
	MOVQ blks+0(FP), DI
	MOVQ cols+8(FP), R11
	MOVQ pass+16(FP), SI
	MOVQ m+32(FP), R8
	MOVQ offs+40(FP), R10
	MOVQ nrows+48(FP), R9
	MOVQ W+56(FP), R12
	VBROADCASTSS thr2+64(FP), Y13
	MOVBLZX noPrune+68(FP), R13
	NEGL    R13
	KMOVW   R13, K5              // every lane with noPrune, none without
	XORQ AX, AX                  // blocks kept
	XORQ BX, BX                  // word of pass

fineWord:
	CMPQ BX, nw+24(FP)
	JGE  fineDone
	MOVQ (SI)(BX*8), DX

fineBit:
	TESTQ DX, DX
	JEQ   fineNextWord
	BSFQ  DX, R14
	LEAQ  -1(DX), R13
	ANDQ  R13, DX                // clear the lowest set bit
	MOVQ  BX, R13
	SHLQ  $6, R13
	ADDQ  R13, R14               // blk
	MOVQ  R14, CX
	SHLQ  $3, CX                 // its first column i0
	CMPQ  CX, R12
	JGE   fineDone
	MOVL  R14, (DI)(AX*4)
	MOVQ  R12, R13
	SUBQ  CX, R13                // W − i0 ≥ 1
	MOVL  $8, R14
	CMPQ  R13, R14
	CMOVQGT R14, R13             // columns in the block
	MOVL  $1, R14
	SHLXL R13, R14, R14
	DECL  R14
	KMOVW R14, K1                // columns < W
	MOVQ  (R10), R13
	ADDQ  CX, R13
	VMOVUPS.Z (R8)(R13*4), K1, Y0
	MOVQ  $1, R14
	CMPQ  R14, R9
	JGE   fineCmp

fineRow:
	MOVQ     (R10)(R14*8), R13
	ADDQ     CX, R13
	VADDPS.Z (R8)(R13*4), Y0, K1, Y0
	INCQ     R14
	CMPQ     R14, R9
	JLT      fineRow

fineCmp:
	VCMPPS $0x1e, Y13, Y0, K1, K2 // u > thr2, columns < W
	KORW   K5, K2, K2
	KANDW  K1, K2, K2
	KMOVW  K2, R13
	MOVL   R13, (R11)(AX*4)
	CMPL   R13, $1
	SBBQ   $-1, AX               // n += (bits ≠ 0)
	JMP    fineBit

fineNextWord:
	INCQ BX
	JMP  fineWord

fineDone:
	MOVQ AX, ret+72(FP)
	VZEROUPPER
	RET
