//go:build amd64 && !noasm

#include "textflag.h"

// AVX-512 float32-lane kernels of the 16-bit steady state: sixteen
// positions per iteration, the operations of the Go model (steadyBF16Lanes,
// steadyF16Lanes in trailing_lanes.go) in the same order.
//
// Register use:
//	X0	carried window sum s (float64, low lane)
//	Z1	float32(1/cf) broadcast
//	Z2, Z7	two blocks: differences, prefix sums, means
//	others	scratch
//	Z15	zero
//	K2	accumulated "mean not normal or zero" lanes
//	BX	byte offset into the rows, CX their byte length

// SCAN16(V, T) replaces V by its inclusive prefix sums: for k = 1, 2, 4,
// 8, V[j] += V[j−k] (+ 0 for j < k). VALIGND $(16−k), Z15, V shifts V up
// by k lanes, shifting in zeros.
#define SCAN16(V, T) \
	VALIGND $15, Z15, V, T \
	; VADDPS T, V, V \
	; VALIGND $14, Z15, V, T \
	; VADDPS T, V, V \
	; VALIGND $12, Z15, V, T \
	; VADDPS T, V, V \
	; VALIGND $8, Z15, V, T \
	; VADDPS T, V, V

// MEANS16(V, T, XT, U, XU) turns the prefix sums V into the means
// (float32(s) + p)·inv, moves the carry X0 on by float64(p[15]) and flags
// lanes whose mean is NaN, ±Inf or subnormal (VFPCLASSPS classes 0, 3, 4,
// 5, 7) in K2. T/XT and U/XU are scratch (the same register as Z and X).
#define MEANS16(V, T, XT, U, XU) \
	VCVTSD2SS X0, X0, XU \
	; VBROADCASTSS XU, U \
	; VALIGND $15, V, V, T \
	; VCVTSS2SD XT, XT, XT \
	; VADDSD XT, X0, X0 \
	; VADDPS U, V, V \
	; VMULPS Z1, V, V \
	; VFPCLASSPSZ $0xb9, V, K1 \
	; KORW K1, K2, K2

// MEANS16NF is MEANS16 without the flags.
#define MEANS16NF(V, T, XT, U, XU) \
	VCVTSD2SS X0, X0, XU \
	; VBROADCASTSS XU, U \
	; VALIGND $15, V, V, T \
	; VCVTSS2SD XT, XT, XT \
	; VADDSD XT, X0, X0 \
	; VADDPS U, V, V \
	; VMULPS Z1, V, V

// LOAD_BF16(P, V) loads sixteen bfloat16 at P as float32 into V.
#define LOAD_BF16(P, V) \
	VPMOVZXWD P, V \
	; VPSLLD $16, V, V

// BLOCK_BF16(OFF, …) computes and stores the sixteen positions at byte
// offset BX+OFF.
#define BLOCK_BF16(OFF, V, W, T, XT, U, XU) \
	LOAD_BF16(OFF(SI)(BX*1), V) \
	; LOAD_BF16(OFF(DX)(BX*1), W) \
	; VSUBPS W, V, V \
	; SCAN16(V, T) \
	; MEANS16(V, T, XT, U, XU)

// BLOCK_F16 is BLOCK_BF16 for binary16, without the flags: binary16
// samples cannot make a float32 sum overflow or a mean subnormal, and
// VCVTPS2PH rounds subnormal float32 values correctly.
#define BLOCK_F16(OFF, V, W, T, XT, U, XU) \
	VCVTPH2PS OFF(SI)(BX*1), V \
	; VCVTPH2PS OFF(DX)(BX*1), W \
	; VSUBPS W, V, V \
	; SCAN16(V, T) \
	; MEANS16NF(V, T, XT, U, XU)

// VCVTNEPS2BF16 Z2, Y2 and Z7, Y7 (AVX512_BF16, not known to the Go
// assembler): nearest even; its flushing of subnormals never applies, as
// such means are flagged.
#define CVTBF16_Z2 \
	BYTE $0x62; BYTE $0xF2; BYTE $0x7E; BYTE $0x48; BYTE $0x72; BYTE $0xD2

#define CVTBF16_Z7 \
	BYTE $0x62; BYTE $0xF2; BYTE $0x7E; BYTE $0x48; BYTE $0x72; BYTE $0xFF

// LANES_PROLOGUE loads the arguments; CX = 2n bytes, R8 = the bytes in
// whole pairs of blocks (multiples of 64).
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
TEXT ·steadyBF16Lanes512(SB), NOSPLIT, $0-57
	LANES_PROLOGUE
	CMPQ R8, $0
	JEQ  one

pair:
	BLOCK_BF16(0, Z2, Z3, Z4, X4, Z5, X5)
	BLOCK_BF16(32, Z7, Z8, Z9, X9, Z10, X10)
	CVTBF16_Z2
	CVTBF16_Z7
	VMOVDQU Y2, (DI)(BX*1)
	VMOVDQU Y7, 32(DI)(BX*1)
	ADDQ    $64, BX
	CMPQ    BX, R8
	JNE     pair

one:
	CMPQ BX, CX
	JEQ  done
	BLOCK_BF16(0, Z2, Z3, Z4, X4, Z5, X5)
	CVTBF16_Z2
	VMOVDQU Y2, (DI)(BX*1)

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

// func hasAVX512BF16() bool: CPUID leaf 7 subleaf 1, EAX bit 5.
TEXT ·hasAVX512BF16(SB), NOSPLIT, $0-1
	XORL AX, AX
	XORL CX, CX
	CPUID
	CMPL AX, $7
	JB   no
	MOVL $7, AX
	MOVL $1, CX
	CPUID
	ANDL $0x20, AX
	JZ   no
	MOVB $1, ret+0(FP)
	RET

no:
	MOVB $0, ret+0(FP)
	RET

// func hasAVX512DQ() bool: CPUID leaf 7 subleaf 0, EBX bit 17.
TEXT ·hasAVX512DQ(SB), NOSPLIT, $0-1
	XORL AX, AX
	XORL CX, CX
	CPUID
	CMPL AX, $7
	JB   no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	ANDL $0x20000, BX
	JZ   no
	MOVB $1, ret+0(FP)
	RET

no:
	MOVB $0, ret+0(FP)
	RET
