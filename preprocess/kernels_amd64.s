//go:build amd64 && !noasm

#include "textflag.h"

// AVX-512 kernels of the preprocessor; see kernels_amd64.go and, for the
// operations they share with the Go code, preprocess.go and median.go.

// func convertAVX512(dst *float32, src *int16, mean *float32, sign float32, n int)
//
// dst[i] = sign·float32(src[i]) − mean[i] for i < n: the int16 is
// converted exactly, multiplied by ±1 exactly and the mean subtracted with
// one rounding, as in referenceRange. Masked tail.
TEXT ·convertAVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ mean+16(FP), R8
	VBROADCASTSS sign+24(FP), Z3
	MOVQ n+32(FP), CX
	XORQ AX, AX

convChunk:
	MOVQ CX, BX
	SUBQ AX, BX
	CMPQ BX, $16
	JGE  convFull
	MOVL $1, DX
	SHLXL BX, DX, DX
	DECL DX
	KMOVW DX, K1
	JMP  convGo

convFull:
	KXNORW K1, K1, K1

convGo:
	VMOVDQU16.Z (SI)(AX*2), K1, Y0
	VPMOVSXWD   Y0, Z0
	VCVTDQ2PS   Z0, Z0
	VMULPS      Z0, Z3, Z0
	VMOVUPS.Z   (R8)(AX*4), K1, Z1
	VSUBPS      Z1, Z0, Z0
	VMOVUPS     Z0, K1, (DI)(AX*4)
	ADDQ        $16, AX
	CMPQ        AX, CX
	JLT         convChunk
	VZEROUPPER
	RET

// func partitionAVX512(lo, hi, src *float32, n int, p float32) (nl, ng int)
//
// Writes the values of src[:n] below p to lo and those above p to hi, in
// order, and returns their counts. Each group of sixteen is compressed in
// a register and stored whole, so lo and hi need 16 values of slack; lo
// (hi) may be src itself, as the write position never passes the read
// position.
TEXT ·partitionAVX512(SB), NOSPLIT, $0-56
	MOVQ lo+0(FP), DI
	MOVQ hi+8(FP), R9
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSS p+32(FP), Z3
	XORQ AX, AX                  // read position
	XORQ R10, R10                // nl
	XORQ R11, R11                // ng

partChunk:
	MOVQ CX, BX
	SUBQ AX, BX
	CMPQ BX, $16
	JGE  partFull
	MOVL $1, DX
	SHLXL BX, DX, DX
	DECL DX
	KMOVW DX, K1
	JMP  partGo

partFull:
	KXNORW K1, K1, K1

partGo:
	VMOVUPS.Z     (SI)(AX*4), K1, Z0
	VCMPPS        $0x11, Z3, Z0, K1, K2   // v < p
	VCMPPS        $0x1e, Z3, Z0, K1, K3   // v > p
	VCOMPRESSPS.Z Z0, K2, Z1
	VCOMPRESSPS.Z Z0, K3, Z2
	VMOVUPS       Z1, (DI)(R10*4)
	VMOVUPS       Z2, (R9)(R11*4)
	KMOVW         K2, DX
	POPCNTL       DX, DX
	ADDQ          DX, R10
	KMOVW         K3, DX
	POPCNTL       DX, DX
	ADDQ          DX, R11
	ADDQ          $16, AX
	CMPQ          AX, CX
	JLT           partChunk
	MOVQ          R10, nl+40(FP)
	MOVQ          R11, ng+48(FP)
	VZEROUPPER
	RET
