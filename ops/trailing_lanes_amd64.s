//go:build amd64 && !noasm

#include "textflag.h"

// AVX-512 float32-lane kernels of the 16-bit steady state (trailing_lanes.go). Registers:
//	X0	carried window sum s (float64, low lane)
//	Z1	float32(1/cf) broadcast
//	Z2, Z7	binary16: two blocks (differences, prefix sums, means)
//	Z12	bfloat16: the VPERMW index bf16Interleave
//	Z14	bfloat16: 0xffff0000 in every lane (odd elements)
//	others	scratch
//	Z15	zero
//	K2	bfloat16: accumulated "mean not normal or zero" lanes
//	BX	byte offset into the rows, CX their byte length

// SCAN16: V = inclusive prefix sums of V (VALIGND $(16−k) shifts up k lanes).
#define SCAN16(V, T) \
	VALIGND $15, Z15, V, T \
	; VADDPS T, V, V \
	; VALIGND $14, Z15, V, T \
	; VADDPS T, V, V \
	; VALIGND $12, Z15, V, T \
	; VADDPS T, V, V \
	; VALIGND $8, Z15, V, T \
	; VADDPS T, V, V

// MEANS16: V = (float32(s) + V)·inv; X0 += float64(V[15]). T/XT, U/XU scratch.
#define MEANS16(V, T, XT, U, XU) \
	VCVTSD2SS X0, X0, XU \
	; VBROADCASTSS XU, U \
	; VALIGND $15, V, V, T \
	; VCVTSS2SD XT, XT, XT \
	; VADDSD XT, X0, X0 \
	; VADDPS U, V, V \
	; VMULPS Z1, V, V

// BLOCK_F16 computes sixteen binary16 means at BX+OFF; no flags needed.
#define BLOCK_F16(OFF, V, W, T, XT, U, XU) \
	VCVTPH2PS OFF(SI)(BX*1), V \
	; VCVTPH2PS OFF(DX)(BX*1), W \
	; VSUBPS W, V, V \
	; SCAN16(V, T) \
	; MEANS16(V, T, XT, U, XU)

// VCVTNE2PS2BF16 Z4, Z6, Z4 (not in the Go assembler): bfloat16, nearest even, of Z4 (low) and Z6.
#define CVT2BF16_Z6_Z4 \
	BYTE $0x62; BYTE $0xF2; BYTE $0x4F; BYTE $0x48; BYTE $0x72; BYTE $0xE4

// bf16Interleave: VPERMW index, word 2i from word i, 2i+1 from 16+i.
DATA bf16Interleave<>+0(SB)/8, $0x0011000100100000
DATA bf16Interleave<>+8(SB)/8, $0x0013000300120002
DATA bf16Interleave<>+16(SB)/8, $0x0015000500140004
DATA bf16Interleave<>+24(SB)/8, $0x0017000700160006
DATA bf16Interleave<>+32(SB)/8, $0x0019000900180008
DATA bf16Interleave<>+40(SB)/8, $0x001b000b001a000a
DATA bf16Interleave<>+48(SB)/8, $0x001d000d001c000c
DATA bf16Interleave<>+56(SB)/8, $0x001f000f001e000e
GLOBL bf16Interleave<>(SB), RODATA|NOPTR, $64

// LANES_PROLOGUE loads the arguments; CX = 2n bytes, R8 = CX rounded down to 64.
#define LANES_PROLOGUE \
	MOVQ y+0(FP), DI \
	; MOVQ x+8(FP), SI \
	; MOVQ lag+16(FP), DX \
	; MOVQ n+24(FP), CX \
	; SHLQ $1, CX \
	; MOVQ CX, R8 \
	; ANDQ $-64, R8 \
	; VMOVSD s+32(FP), X0 \
	; VBROADCASTSS inv+40(FP), Z1 \
	; VXORPS Z15, Z15, Z15 \
	; KXORW K2, K2, K2 \
	; XORQ BX, BX

// LANES_EPILOGUE stores the carry and whether no lane was flagged.
#define LANES_EPILOGUE \
	VMOVSD X0, ret+48(FP) \
	; KORTESTW K2, K2 \
	; SETEQ ret1+56(FP) \
	; VZEROUPPER \
	; RET

// func steadyBF16Lanes512(y, x, lag *BFloat16, n int, s float64, inv float32) (float64, bool)
// Per 64 bytes: even (VPSLLD $16) and odd (VPANDD) elements as float32.
TEXT ·steadyBF16Lanes512(SB), NOSPLIT, $0-57
	LANES_PROLOGUE
	MOVL         $0xffff0000, AX
	VPBROADCASTD AX, Z14
	VMOVDQU64    bf16Interleave<>(SB), Z12
	CMPQ         CX, $0
	JEQ          done

pair:
	VMOVDQU32 (SI)(BX*1), Z2
	VMOVDQU32 (DX)(BX*1), Z3
	VPSLLD    $16, Z2, Z4
	VPANDD    Z14, Z2, Z2
	VPSLLD    $16, Z3, Z5
	VPANDD    Z14, Z3, Z3
	VSUBPS    Z5, Z4, Z4         // e: even differences
	VSUBPS    Z3, Z2, Z2         // o: odd differences
	VADDPS    Z2, Z4, Z6         // q = e + o
	SCAN16(Z6, Z7)               // p: sums through each odd position
	VSUBPS    Z2, Z6, Z4         // p − o: sums through each even position
	VCVTSD2SS X0, X0, X8
	VBROADCASTSS X8, Z8          // float32(s)
	VALIGND   $15, Z6, Z6, Z7
	VCVTSS2SD X7, X7, X7
	VADDSD    X7, X0, X0         // s += float64(p[15])
	VADDPS    Z8, Z4, Z4
	VMULPS    Z1, Z4, Z4         // even means
	VADDPS    Z8, Z6, Z6
	VMULPS    Z1, Z6, Z6         // odd means
	VFPCLASSPSZ $0xb9, Z4, K1
	KORW      K1, K2, K2
	VFPCLASSPSZ $0xb9, Z6, K1
	KORW      K1, K2, K2
	CVT2BF16_Z6_Z4               // Z4 = even means, then odd means, as bfloat16
	VPERMW    Z4, Z12, Z4        // interleaved: memory order
	VMOVDQU32 Z4, (DI)(BX*1)
	ADDQ      $64, BX
	CMPQ      BX, CX
	JNE       pair

done:
	LANES_EPILOGUE

// func steadyF16Lanes512(y, x, lag *Float16, n int, s float64, inv float32) (float64, bool)
TEXT ·steadyF16Lanes512(SB), NOSPLIT, $0-57
	LANES_PROLOGUE
	CMPQ R8, $0
	JEQ  one

pair:
	BLOCK_F16(0, Z2, Z3, Z4, X4, Z5, X5)
	BLOCK_F16(32, Z7, Z8, Z9, X9, Z10, X10)
	VCVTPS2PH $0, Z2, Y2
	VCVTPS2PH $0, Z7, Y7
	VMOVDQU   Y2, (DI)(BX*1)
	VMOVDQU   Y7, 32(DI)(BX*1)
	ADDQ      $64, BX
	CMPQ      BX, R8
	JNE       pair

one:
	CMPQ BX, CX
	JEQ  done
	BLOCK_F16(0, Z2, Z3, Z4, X4, Z5, X5)
	VCVTPS2PH $0, Z2, Y2
	VMOVDQU   Y2, (DI)(BX*1)

done:
	LANES_EPILOGUE
