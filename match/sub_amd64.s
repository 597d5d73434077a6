//go:build amd64 && !noasm

#include "textflag.h"

// func subScaledAVX2(row, k *float32, n int, a float32)
//
// For d < n (a multiple of 8): row[d] = row[d] − a·k[d], the product
// rounded to float32 and then subtracted (no fused multiply-add), eight
// at a time.
TEXT ·subScaledAVX2(SB), NOSPLIT, $0-28
	MOVQ         row+0(FP), DI
	MOVQ         k+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS a+24(FP), Y0
	XORQ         AX, AX

loop:
	CMPQ    AX, CX
	JGE     done
	VMULPS  (SI)(AX*4), Y0, Y1
	VMOVUPS (DI)(AX*4), Y2
	VSUBPS  Y1, Y2, Y2
	VMOVUPS Y2, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     loop

done:
	VZEROUPPER
	RET
