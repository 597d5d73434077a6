//go:build amd64 && !noasm

#include "textflag.h"

// ENTRY(skip, bcast) starts term BX of a sum: past a ±0 weight it jumps to
// skip; otherwise R13 = &src[index[BX]·T + t0 + AX] and bcast holds the
// weight in every lane.
#define ENTRY(skip, bcast) \
	MOVL         (R9)(BX*4), R13 \
	TESTL        $0x7fffffff, R13 \
	JZ           skip \
	MOVLQSX      (R8)(BX*4), R13 \
	IMULQ        R11, R13 \
	ADDQ         SI, R13 \
	LEAQ         (R13)(AX*4), R13 \
	VBROADCASTSS (R9)(BX*4), bcast

// func combineAVX512(d, src *float32, index *int32, val *float32, K, T, t0, L int)
//
// d[t] = Σ_j val[j]·src[index[j]·T+t0+t] for t < L, each sum from 0 in the
// order j = 0 … K−1, each product rounded and then added, terms with
// val[j] = ±0 skipped (gonum's axpy returns at once for alpha = 0): exactly
// the sequence of gonum axpy calls of Whitening.applyRow. Eight vectors
// of sixteen samples are summed at once, then four, then single vectors,
// then a masked tail; K ≥ 1.
TEXT ·combineAVX512(SB), NOSPLIT, $0-64
	MOVQ d+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ index+16(FP), R8
	MOVQ val+24(FP), R9
	MOVQ K+32(FP), R10
	MOVQ T+40(FP), R11
	MOVQ t0+48(FP), R12
	MOVQ L+56(FP), CX
	LEAQ (SI)(R12*4), SI         // &src[t0]
	SHLQ $2, R11                 // T in bytes
	XORQ AX, AX                  // sample

	// 128 samples at a time in eight accumulators (Z16–Z23): eight
	// independent chains hide the adds' latency; each sample's sum runs
	// over the entries in the same order as below.
comb128:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $128
	JLT  comb64
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	XORQ   BX, BX

comb128J:
	ENTRY(comb128JNext, Z4)
	VMULPS       (R13), Z4, Z5
	VADDPS       Z5, Z16, Z16
	VMULPS       64(R13), Z4, Z6
	VADDPS       Z6, Z17, Z17
	VMULPS       128(R13), Z4, Z7
	VADDPS       Z7, Z18, Z18
	VMULPS       192(R13), Z4, Z8
	VADDPS       Z8, Z19, Z19
	VMULPS       256(R13), Z4, Z9
	VADDPS       Z9, Z20, Z20
	VMULPS       320(R13), Z4, Z10
	VADDPS       Z10, Z21, Z21
	VMULPS       384(R13), Z4, Z11
	VADDPS       Z11, Z22, Z22
	VMULPS       448(R13), Z4, Z12
	VADDPS       Z12, Z23, Z23

comb128JNext:
	INCQ         BX
	CMPQ         BX, R10
	JLT          comb128J
	VMOVUPS      Z16, (DI)(AX*4)
	VMOVUPS      Z17, 64(DI)(AX*4)
	VMOVUPS      Z18, 128(DI)(AX*4)
	VMOVUPS      Z19, 192(DI)(AX*4)
	VMOVUPS      Z20, 256(DI)(AX*4)
	VMOVUPS      Z21, 320(DI)(AX*4)
	VMOVUPS      Z22, 384(DI)(AX*4)
	VMOVUPS      Z23, 448(DI)(AX*4)
	ADDQ         $128, AX
	JMP          comb128

comb64:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $64
	JLT  comb16
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   BX, BX

comb64J:
	ENTRY(comb64JNext, Z4)
	VMULPS       (R13), Z4, Z5
	VADDPS       Z5, Z0, Z0
	VMULPS       64(R13), Z4, Z6
	VADDPS       Z6, Z1, Z1
	VMULPS       128(R13), Z4, Z7
	VADDPS       Z7, Z2, Z2
	VMULPS       192(R13), Z4, Z8
	VADDPS       Z8, Z3, Z3

comb64JNext:
	INCQ         BX
	CMPQ         BX, R10
	JLT          comb64J
	VMOVUPS      Z0, (DI)(AX*4)
	VMOVUPS      Z1, 64(DI)(AX*4)
	VMOVUPS      Z2, 128(DI)(AX*4)
	VMOVUPS      Z3, 192(DI)(AX*4)
	ADDQ         $64, AX
	JMP          comb64

comb16:
	CMPQ AX, CX
	JGE  combDone
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $16
	JGE  comb16Full
	MOVL $1, R14
	SHLXL DX, R14, R14
	DECL R14
	KMOVW R14, K1
	JMP  comb16Go

comb16Full:
	KXNORW K1, K1, K1

comb16Go:
	VPXORD Z0, Z0, Z0
	XORQ   BX, BX

comb16J:
	ENTRY(comb16JNext, Z4)
	VMOVUPS.Z    (R13), K1, Z5
	VMULPS       Z5, Z4, Z5
	VADDPS       Z5, Z0, Z0

comb16JNext:
	INCQ         BX
	CMPQ         BX, R10
	JLT          comb16J
	VMOVUPS      Z0, K1, (DI)(AX*4)
	ADDQ         $16, AX
	JMP          comb16

combDone:
	VZEROUPPER
	RET

// Load masks for n < 8 float32 lanes: 8 words of −1 then 8 of 0; the mask
// of the first n lanes starts at combMask<> + (8−n)·4.
DATA combMask<>+0(SB)/8, $0xffffffffffffffff
DATA combMask<>+8(SB)/8, $0xffffffffffffffff
DATA combMask<>+16(SB)/8, $0xffffffffffffffff
DATA combMask<>+24(SB)/8, $0xffffffffffffffff
DATA combMask<>+32(SB)/8, $0
DATA combMask<>+40(SB)/8, $0
DATA combMask<>+48(SB)/8, $0
DATA combMask<>+56(SB)/8, $0
GLOBL combMask<>(SB), RODATA|NOPTR, $64

// func combineAVX2(d, src *float32, index *int32, val *float32, K, T, t0, L int)
//
// combineAVX512 at half width: four vectors of eight samples at a time,
// then single vectors with a masked tail; the same sums in the same order.
TEXT ·combineAVX2(SB), NOSPLIT, $0-64
	MOVQ d+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ index+16(FP), R8
	MOVQ val+24(FP), R9
	MOVQ K+32(FP), R10
	MOVQ T+40(FP), R11
	MOVQ t0+48(FP), R12
	MOVQ L+56(FP), CX
	LEAQ (SI)(R12*4), SI         // &src[t0]
	SHLQ $2, R11                 // T in bytes
	LEAQ combMask<>(SB), R14
	XORQ AX, AX                  // sample

comb2x32:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $32
	JLT  comb2x8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   BX, BX

comb2x32J:
	ENTRY(comb2x32JNext, Y4)
	VMULPS       (R13), Y4, Y5
	VADDPS       Y5, Y0, Y0
	VMULPS       32(R13), Y4, Y6
	VADDPS       Y6, Y1, Y1
	VMULPS       64(R13), Y4, Y7
	VADDPS       Y7, Y2, Y2
	VMULPS       96(R13), Y4, Y8
	VADDPS       Y8, Y3, Y3

comb2x32JNext:
	INCQ         BX
	CMPQ         BX, R10
	JLT          comb2x32J
	VMOVUPS      Y0, (DI)(AX*4)
	VMOVUPS      Y1, 32(DI)(AX*4)
	VMOVUPS      Y2, 64(DI)(AX*4)
	VMOVUPS      Y3, 96(DI)(AX*4)
	ADDQ         $32, AX
	JMP          comb2x32

comb2x8:
	CMPQ AX, CX
	JGE  comb2Done
	MOVQ CX, DX
	SUBQ AX, DX
	VMOVDQU (R14), Y15
	CMPQ DX, $8
	JGE  comb2x8Go
	NEGQ DX
	VMOVDQU 32(R14)(DX*4), Y15   // the first L−AX lanes

comb2x8Go:
	VXORPS Y0, Y0, Y0
	XORQ   BX, BX

comb2x8J:
	ENTRY(comb2x8JNext, Y4)
	VMASKMOVPS   (R13), Y15, Y5
	VMULPS       Y5, Y4, Y5
	VADDPS       Y5, Y0, Y0

comb2x8JNext:
	INCQ         BX
	CMPQ         BX, R10
	JLT          comb2x8J
	VMASKMOVPS   Y0, Y15, (DI)(AX*4)
	ADDQ         $8, AX
	JMP          comb2x8

comb2Done:
	VZEROUPPER
	RET
