//go:build amd64 && !noasm

#include "textflag.h"

// func combineAVX512(d, src *float32, index *int32, val *float32, K, T, t0, L int)
//
// d[t] = Σ_j val[j]·src[index[j]·T+t0+t] for t < L, each sum from 0 in the
// order j = 0 … K−1, each product rounded and then added, terms with
// val[j] = ±0 skipped (gonum's axpy returns at once for alpha = 0): exactly
// the sequence of gonum axpy calls of Whitening.applyRow. Four vectors of
// sixteen samples are summed at once, then single vectors, then a masked
// tail; K ≥ 1.
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
	MOVL         (R9)(BX*4), R13
	TESTL        $0x7fffffff, R13
	JZ           comb64JNext
	MOVLQSX      (R8)(BX*4), R13
	IMULQ        R11, R13
	ADDQ         SI, R13
	LEAQ         (R13)(AX*4), R13
	VBROADCASTSS (R9)(BX*4), Z4
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
	MOVL         (R9)(BX*4), R13
	TESTL        $0x7fffffff, R13
	JZ           comb16JNext
	MOVLQSX      (R8)(BX*4), R13
	IMULQ        R11, R13
	ADDQ         SI, R13
	LEAQ         (R13)(AX*4), R13
	VBROADCASTSS (R9)(BX*4), Z4
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
