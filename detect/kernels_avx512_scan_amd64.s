//go:build amd64 && !noasm

#include "textflag.h"
#include "kernels_amd64.h"

// AVX-512 kernels of the detector's scans: squared maxima, row sums, the
// five template responses, the choice of the best and the threshold bits
// (see kernels_amd64.s for the rules every kernel keeps).

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
