//go:build amd64 && !noasm

#include "textflag.h"
#include "kernels_amd64.h"

// AVX2 kernels: the AVX-512 kernels of kernels_avx512_*_amd64.s at half width (two complex
// numbers or eight float32 per YMM register), for CPUs without AVX-512;
// every output is computed by the same operations in the same order.

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
