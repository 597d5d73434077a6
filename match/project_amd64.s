//go:build amd64 && !noasm

#include "textflag.h"

// func projAVX2(out, bc *float32, rows *int32, cfs *float64, k, w, n int)
//
// out[t] = float32(Σ_{j<k} cfs[j]·float64(bc[rows[j]·w + t])) for t < n (n a
// multiple of 16, k ≥ 1): each sum from +0 in the order j = 0 … k−1, each
// product rounded and then added (VMULPD, VADDPD; no fused multiply-add),
// the double rounded to float32 to nearest even (VCVTPD2PS): the IEEE
// operations of projectGo. Sixteen columns at a time in four independent
// addition chains.
TEXT ·projAVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ bc+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ cfs+24(FP), R9
	MOVQ k+32(FP), R10
	MOVQ w+40(FP), R11
	MOVQ n+48(FP), CX
	SHLQ $2, R11                 // w in bytes
	XORQ AX, AX                  // t

cols:
	CMPQ AX, CX
	JGE  done
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	LEAQ   (SI)(AX*4), R12       // &bc[t]
	XORQ   BX, BX                // j

terms:
	MOVLQSX      (R8)(BX*4), DX   // rows[j]
	IMULQ        R11, DX          // its offset in bytes
	VBROADCASTSD (R9)(BX*8), Y0   // cfs[j]
	VCVTPS2PD    (R12)(DX*1), Y5
	VCVTPS2PD    16(R12)(DX*1), Y6
	VCVTPS2PD    32(R12)(DX*1), Y7
	VCVTPS2PD    48(R12)(DX*1), Y8
	VMULPD       Y0, Y5, Y5
	VMULPD       Y0, Y6, Y6
	VMULPD       Y0, Y7, Y7
	VMULPD       Y0, Y8, Y8
	VADDPD       Y5, Y1, Y1
	VADDPD       Y6, Y2, Y2
	VADDPD       Y7, Y3, Y3
	VADDPD       Y8, Y4, Y4
	INCQ         BX
	CMPQ         BX, R10
	JLT          terms

	VCVTPD2PSY Y1, X1
	VCVTPD2PSY Y2, X2
	VCVTPD2PSY Y3, X3
	VCVTPD2PSY Y4, X4
	VMOVUPS    X1, (DI)(AX*4)
	VMOVUPS    X2, 16(DI)(AX*4)
	VMOVUPS    X3, 32(DI)(AX*4)
	VMOVUPS    X4, 48(DI)(AX*4)
	ADDQ       $16, AX
	JMP        cols

done:
	VZEROUPPER
	RET

// func projAVX512(out, bc *float32, rows *int32, cfs *float64, k, w, n int)
//
// projAVX2 thirty-two columns at a time (n a multiple of 32) in four
// independent addition chains of eight: the same IEEE operations in the
// same order.
TEXT ·projAVX512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ bc+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ cfs+24(FP), R9
	MOVQ k+32(FP), R10
	MOVQ w+40(FP), R11
	MOVQ n+48(FP), CX
	SHLQ $2, R11                 // w in bytes
	XORQ AX, AX                  // t

cols512:
	CMPQ   AX, CX
	JGE    done512
	VXORPD Z1, Z1, Z1
	VXORPD Z2, Z2, Z2
	VXORPD Z3, Z3, Z3
	VXORPD Z4, Z4, Z4
	LEAQ   (SI)(AX*4), R12       // &bc[t]
	XORQ   BX, BX                // j

terms512:
	MOVLQSX      (R8)(BX*4), DX   // rows[j]
	IMULQ        R11, DX          // its offset in bytes
	VBROADCASTSD (R9)(BX*8), Z0   // cfs[j]
	VCVTPS2PD    (R12)(DX*1), Z5
	VCVTPS2PD    32(R12)(DX*1), Z6
	VCVTPS2PD    64(R12)(DX*1), Z7
	VCVTPS2PD    96(R12)(DX*1), Z8
	VMULPD       Z0, Z5, Z5
	VMULPD       Z0, Z6, Z6
	VMULPD       Z0, Z7, Z7
	VMULPD       Z0, Z8, Z8
	VADDPD       Z5, Z1, Z1
	VADDPD       Z6, Z2, Z2
	VADDPD       Z7, Z3, Z3
	VADDPD       Z8, Z4, Z4
	INCQ         BX
	CMPQ         BX, R10
	JLT          terms512

	VCVTPD2PS Z1, Y1
	VCVTPD2PS Z2, Y2
	VCVTPD2PS Z3, Y3
	VCVTPD2PS Z4, Y4
	VMOVUPS   Y1, (DI)(AX*4)
	VMOVUPS   Y2, 32(DI)(AX*4)
	VMOVUPS   Y3, 64(DI)(AX*4)
	VMOVUPS   Y4, 96(DI)(AX*4)
	ADDQ      $32, AX
	JMP       cols512

done512:
	VZEROUPPER
	RET
