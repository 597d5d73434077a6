//go:build amd64 && !noasm

#include "textflag.h"

// func sqDist32AVX2(x *float32, c *float64, n int) float64
//
// Σ (float64(x[j]) − c[j])² as sqDist32Go forms it: Y0 holds the partial
// sums s0…s3, lane l adding the values j ≡ l (mod 4) of the groups of
// four, each difference and square rounded (VSUBPD, VMULPD: no fused
// multiply-add); the n mod 4 values left go to s0 in order; the result
// is (s0 + s1) + (s2 + s3). n ≥ 1.
TEXT ·sqDist32AVX2(SB), NOSPLIT, $0-32
	MOVQ   x+0(FP), SI
	MOVQ   c+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPD Y0, Y0, Y0
	XORQ   AX, AX
	MOVQ   CX, DX
	SUBQ   $3, DX // groups while j < n − 3

groups:
	CMPQ      AX, DX
	JGE       tail
	VCVTPS2PD (SI)(AX*4), Y1
	VSUBPD    (DI)(AX*8), Y1, Y1
	VMULPD    Y1, Y1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      $4, AX
	JMP       groups

tail:
	VEXTRACTF128 $1, Y0, X2 // X2 = (s2, s3); X0 = (s0, s1)

single:
	CMPQ      AX, CX
	JGE       done
	VCVTSS2SD (SI)(AX*4), X3, X3
	VSUBSD    (DI)(AX*8), X3, X3
	VMULSD    X3, X3, X3
	VADDSD    X3, X0, X0 // s0 += e², s1 kept
	INCQ      AX
	JMP       single

done:
	VUNPCKHPD X0, X0, X4 // X4[0] = s1
	VADDSD    X4, X0, X4 // s0 + s1
	VUNPCKHPD X2, X2, X5 // X5[0] = s3
	VADDSD    X5, X2, X5 // s2 + s3
	VADDSD    X5, X4, X4
	VZEROUPPER
	MOVSD     X4, ret+24(FP)
	RET
