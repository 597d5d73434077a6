//go:build amd64 && !noasm

#include "textflag.h"

// AVX2 kernels of the preprocessor, for CPUs without AVX-512: the kernels
// of kernels_avx512_amd64.s at half width; see kernels_amd64.go and, for
// the operations they share with the Go code, cpu.go, filter.go and
// median.go.

// func hpPassAVX2(e *float64, n, stride int, st *float64, c *[16]float64)
//
// hpPassAVX512 for 8 of the 16 lanes (two YMM registers): e and st point
// at the first of the 8 lanes of a step and of the state's row x1 (rows
// 128 bytes apart); c points at the constants 3, p1, p2, q1, each
// repeated four times.
TEXT ·hpPassAVX2(SB), NOSPLIT, $0-40
	MOVQ e+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ stride+16(FP), DX
	MOVQ st+24(FP), DI
	MOVQ c+32(FP), R8
	VMOVUPD 0(DI), Y0
	VMOVUPD 128(DI), Y1
	VMOVUPD 256(DI), Y2
	VMOVUPD 384(DI), Y3
	VMOVUPD 512(DI), Y4
	VMOVUPD 640(DI), Y5
	VMOVUPD 32(DI), Y6
	VMOVUPD 160(DI), Y7
	VMOVUPD 288(DI), Y8
	VMOVUPD 416(DI), Y9
	VMOVUPD 544(DI), Y10
	VMOVUPD 672(DI), Y11
	TESTQ CX, CX
	JLE hpPassAVX2Done
hpPassAVX2Loop:
	// lanes 0…3: d = ((v − 3·x1) + 3·x2) − x3
	VMOVUPD 0(SI), Y12
	VMULPD 0(R8), Y0, Y14
	VSUBPD Y14, Y12, Y14
	VMULPD 0(R8), Y1, Y15
	VADDPD Y15, Y14, Y14
	VSUBPD Y2, Y14, Y14
	// y = (d − p2·y2) − p1·y1; z = y − q1·z1
	VMULPD 64(R8), Y4, Y15
	VSUBPD Y15, Y14, Y14
	VMULPD 32(R8), Y3, Y15
	VSUBPD Y15, Y14, Y14
	VMULPD 96(R8), Y5, Y15
	VSUBPD Y15, Y14, Y5
	VMOVUPD Y5, 0(SI)
	VMOVAPD Y1, Y2
	VMOVAPD Y0, Y1
	VMOVAPD Y12, Y0
	VMOVAPD Y3, Y4
	VMOVAPD Y14, Y3
	// lanes 4…7: d = ((v − 3·x1) + 3·x2) − x3
	VMOVUPD 32(SI), Y12
	VMULPD 0(R8), Y6, Y14
	VSUBPD Y14, Y12, Y14
	VMULPD 0(R8), Y7, Y15
	VADDPD Y15, Y14, Y14
	VSUBPD Y8, Y14, Y14
	// y = (d − p2·y2) − p1·y1; z = y − q1·z1
	VMULPD 64(R8), Y10, Y15
	VSUBPD Y15, Y14, Y14
	VMULPD 32(R8), Y9, Y15
	VSUBPD Y15, Y14, Y14
	VMULPD 96(R8), Y11, Y15
	VSUBPD Y15, Y14, Y11
	VMOVUPD Y11, 32(SI)
	VMOVAPD Y7, Y8
	VMOVAPD Y6, Y7
	VMOVAPD Y12, Y6
	VMOVAPD Y9, Y10
	VMOVAPD Y14, Y9
	ADDQ DX, SI
	DECQ CX
	JNZ  hpPassAVX2Loop
hpPassAVX2Done:
	VZEROUPPER
	RET

// func convertAVX2(dst *float32, src *int16, mean *float32, sign float32, n int)
//
// convertAVX512 at half width for n a multiple of 8 (no tail).
TEXT ·convertAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ mean+16(FP), R8
	VBROADCASTSS sign+24(FP), Y3
	MOVQ n+32(FP), CX
	XORQ AX, AX
	TESTQ CX, CX
	JLE  conv2Done

conv2Loop:
	VPMOVSXWD (SI)(AX*2), Y0
	VCVTDQ2PS Y0, Y0
	VMULPS    Y0, Y3, Y0
	VSUBPS    (R8)(AX*4), Y0, Y0
	VMOVUPS   Y0, (DI)(AX*4)
	ADDQ      $8, AX
	CMPQ      AX, CX
	JLT       conv2Loop

conv2Done:
	VZEROUPPER
	RET

// func sumRowsAVX2(acc *int32, src *int16, stride, rows, n int)
//
// sumRowsAVX512 at half width; n a multiple of 8.
TEXT ·sumRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ n+32(FP), R8
	SHLQ $1, R8
	TESTQ CX, CX
	JLE  sum2Done
	TESTQ R8, R8
	JZ   sum2Done

sum2Row:
	XORQ AX, AX
	MOVQ DI, BX

sum2Col:
	VPMOVSXWD (SI)(AX*1), Y0
	VPADDD    (BX), Y0, Y0
	VMOVDQU   Y0, (BX)
	ADDQ      $32, BX
	ADDQ      $16, AX
	CMPQ      AX, R8
	JLT       sum2Col
	ADDQ      DX, SI
	DECQ      CX
	JNZ       sum2Row

sum2Done:
	VZEROUPPER
	RET

// func centreAVX2(out *float32, stride int, cols *float32, C, n int, med *[16]float32)
//
// centreAVX512 at half width: for channels i < n (a multiple of 8), the
// 16 columns in two halves of eight, each 8×8 block centred and
// transposed in registers.
TEXT ·centreAVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ stride+8(FP), DX
	MOVQ cols+16(FP), SI
	MOVQ C+24(FP), R11
	SHLQ $2, R11
	MOVQ n+32(FP), CX
	MOVQ med+40(FP), R12
	SHRQ $3, CX
	JZ   centre2Done
	LEAQ (DX)(DX*2), R9
	LEAQ (R11)(R11*2), R13

centre2Loop:
	// columns 0…7
	MOVQ SI, R8
	VBROADCASTSS 0(R12), Y8
	VMOVUPS (R8), Y0
	VSUBPS Y8, Y0, Y0
	VBROADCASTSS 4(R12), Y8
	VMOVUPS (R8)(R11*1), Y1
	VSUBPS Y8, Y1, Y1
	VBROADCASTSS 8(R12), Y8
	VMOVUPS (R8)(R11*2), Y2
	VSUBPS Y8, Y2, Y2
	VBROADCASTSS 12(R12), Y8
	VMOVUPS (R8)(R13*1), Y3
	VSUBPS Y8, Y3, Y3
	LEAQ (R8)(R11*4), R8
	VBROADCASTSS 16(R12), Y8
	VMOVUPS (R8), Y4
	VSUBPS Y8, Y4, Y4
	VBROADCASTSS 20(R12), Y8
	VMOVUPS (R8)(R11*1), Y5
	VSUBPS Y8, Y5, Y5
	VBROADCASTSS 24(R12), Y8
	VMOVUPS (R8)(R11*2), Y6
	VSUBPS Y8, Y6, Y6
	VBROADCASTSS 28(R12), Y8
	VMOVUPS (R8)(R13*1), Y7
	VSUBPS Y8, Y7, Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xee, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xee, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xee, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xee, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y7, Y3, Y15
	MOVQ DI, R8
	VMOVUPS Y8, (R8)
	VMOVUPS Y9, (R8)(DX*1)
	VMOVUPS Y10, (R8)(DX*2)
	VMOVUPS Y11, (R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Y12, (R8)
	VMOVUPS Y13, (R8)(DX*1)
	VMOVUPS Y14, (R8)(DX*2)
	VMOVUPS Y15, (R8)(R9*1)
	// columns 8…15
	MOVQ SI, R8
	LEAQ (SI)(R11*8), R8
	VBROADCASTSS 32(R12), Y8
	VMOVUPS (R8), Y0
	VSUBPS Y8, Y0, Y0
	VBROADCASTSS 36(R12), Y8
	VMOVUPS (R8)(R11*1), Y1
	VSUBPS Y8, Y1, Y1
	VBROADCASTSS 40(R12), Y8
	VMOVUPS (R8)(R11*2), Y2
	VSUBPS Y8, Y2, Y2
	VBROADCASTSS 44(R12), Y8
	VMOVUPS (R8)(R13*1), Y3
	VSUBPS Y8, Y3, Y3
	LEAQ (R8)(R11*4), R8
	VBROADCASTSS 48(R12), Y8
	VMOVUPS (R8), Y4
	VSUBPS Y8, Y4, Y4
	VBROADCASTSS 52(R12), Y8
	VMOVUPS (R8)(R11*1), Y5
	VSUBPS Y8, Y5, Y5
	VBROADCASTSS 56(R12), Y8
	VMOVUPS (R8)(R11*2), Y6
	VSUBPS Y8, Y6, Y6
	VBROADCASTSS 60(R12), Y8
	VMOVUPS (R8)(R13*1), Y7
	VSUBPS Y8, Y7, Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xee, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xee, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xee, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xee, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y7, Y3, Y15
	MOVQ DI, R8
	VMOVUPS Y8, 32(R8)
	VMOVUPS Y9, 32(R8)(DX*1)
	VMOVUPS Y10, 32(R8)(DX*2)
	VMOVUPS Y11, 32(R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Y12, 32(R8)
	VMOVUPS Y13, 32(R8)(DX*1)
	VMOVUPS Y14, 32(R8)(DX*2)
	VMOVUPS Y15, 32(R8)(R9*1)
	ADDQ $32, SI
	LEAQ (DI)(DX*8), DI
	DECQ CX
	JNZ  centre2Loop
centre2Done:
	VZEROUPPER
	RET

// func hpInterleaveAVX2(e *float64, src *float32, stride, n int)
//
// hpInterleaveAVX512 at half width: four samples of four rows at a time,
// widened and transposed; n a multiple of 4.
TEXT ·hpInterleaveAVX2(SB), NOSPLIT, $0-32
	MOVQ e+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $2, CX
	JZ   hpIlv2Done
	LEAQ (DX)(DX*2), R9

hpIlv2Loop:
	MOVQ SI, R8
	VCVTPS2PD (R8), Y0
	VCVTPS2PD (R8)(DX*1), Y1
	VCVTPS2PD (R8)(DX*2), Y2
	VCVTPS2PD (R8)(R9*1), Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 128(DI)
	VMOVUPD Y2, 256(DI)
	VMOVUPD Y3, 384(DI)
	LEAQ (R8)(DX*4), R8
	VCVTPS2PD (R8), Y0
	VCVTPS2PD (R8)(DX*1), Y1
	VCVTPS2PD (R8)(DX*2), Y2
	VCVTPS2PD (R8)(R9*1), Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD Y0, 32(DI)
	VMOVUPD Y1, 160(DI)
	VMOVUPD Y2, 288(DI)
	VMOVUPD Y3, 416(DI)
	LEAQ (R8)(DX*4), R8
	VCVTPS2PD (R8), Y0
	VCVTPS2PD (R8)(DX*1), Y1
	VCVTPS2PD (R8)(DX*2), Y2
	VCVTPS2PD (R8)(R9*1), Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD Y0, 64(DI)
	VMOVUPD Y1, 192(DI)
	VMOVUPD Y2, 320(DI)
	VMOVUPD Y3, 448(DI)
	LEAQ (R8)(DX*4), R8
	VCVTPS2PD (R8), Y0
	VCVTPS2PD (R8)(DX*1), Y1
	VCVTPS2PD (R8)(DX*2), Y2
	VCVTPS2PD (R8)(R9*1), Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD Y0, 96(DI)
	VMOVUPD Y1, 224(DI)
	VMOVUPD Y2, 352(DI)
	VMOVUPD Y3, 480(DI)
	ADDQ $16, SI
	ADDQ $512, DI
	DECQ CX
	JNZ  hpIlv2Loop

hpIlv2Done:
	VZEROUPPER
	RET

// func hpDeinterleaveAVX2(dst *float32, stride int, e *float64, n int, gain float64)
//
// hpDeinterleaveAVX512 at half width; n a multiple of 4.
TEXT ·hpDeinterleaveAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), DX
	MOVQ e+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSD gain+32(FP), Y15
	SHRQ $2, CX
	JZ   hpDil2Done
	LEAQ (DX)(DX*2), R9

hpDil2Loop:
	MOVQ DI, R8
	VMULPD 0(SI), Y15, Y0
	VMULPD 128(SI), Y15, Y1
	VMULPD 256(SI), Y15, Y2
	VMULPD 384(SI), Y15, Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VCVTPD2PSY Y0, X8
	VCVTPD2PSY Y1, X9
	VCVTPD2PSY Y2, X10
	VCVTPD2PSY Y3, X11
	VMOVUPS X8, (R8)
	VMOVUPS X9, (R8)(DX*1)
	VMOVUPS X10, (R8)(DX*2)
	VMOVUPS X11, (R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMULPD 32(SI), Y15, Y0
	VMULPD 160(SI), Y15, Y1
	VMULPD 288(SI), Y15, Y2
	VMULPD 416(SI), Y15, Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VCVTPD2PSY Y0, X8
	VCVTPD2PSY Y1, X9
	VCVTPD2PSY Y2, X10
	VCVTPD2PSY Y3, X11
	VMOVUPS X8, (R8)
	VMOVUPS X9, (R8)(DX*1)
	VMOVUPS X10, (R8)(DX*2)
	VMOVUPS X11, (R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMULPD 64(SI), Y15, Y0
	VMULPD 192(SI), Y15, Y1
	VMULPD 320(SI), Y15, Y2
	VMULPD 448(SI), Y15, Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VCVTPD2PSY Y0, X8
	VCVTPD2PSY Y1, X9
	VCVTPD2PSY Y2, X10
	VCVTPD2PSY Y3, X11
	VMOVUPS X8, (R8)
	VMOVUPS X9, (R8)(DX*1)
	VMOVUPS X10, (R8)(DX*2)
	VMOVUPS X11, (R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMULPD 96(SI), Y15, Y0
	VMULPD 224(SI), Y15, Y1
	VMULPD 352(SI), Y15, Y2
	VMULPD 480(SI), Y15, Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VCVTPD2PSY Y0, X8
	VCVTPD2PSY Y1, X9
	VCVTPD2PSY Y2, X10
	VCVTPD2PSY Y3, X11
	VMOVUPS X8, (R8)
	VMOVUPS X9, (R8)(DX*1)
	VMOVUPS X10, (R8)(DX*2)
	VMOVUPS X11, (R8)(R9*1)
	ADDQ $16, DI
	ADDQ $512, SI
	DECQ CX
	JNZ  hpDil2Loop

hpDil2Done:
	VZEROUPPER
	RET

// compressLUT<>[m] packs, four bits each from the low end, the indices of
// the set bits of the 8-bit mask m in increasing order: the VPERMPS
// indices that move the selected lanes of a YMM register to its front.
DATA compressLUT<>+0(SB)/4, $0x0
DATA compressLUT<>+4(SB)/4, $0x0
DATA compressLUT<>+8(SB)/4, $0x1
DATA compressLUT<>+12(SB)/4, $0x10
DATA compressLUT<>+16(SB)/4, $0x2
DATA compressLUT<>+20(SB)/4, $0x20
DATA compressLUT<>+24(SB)/4, $0x21
DATA compressLUT<>+28(SB)/4, $0x210
DATA compressLUT<>+32(SB)/4, $0x3
DATA compressLUT<>+36(SB)/4, $0x30
DATA compressLUT<>+40(SB)/4, $0x31
DATA compressLUT<>+44(SB)/4, $0x310
DATA compressLUT<>+48(SB)/4, $0x32
DATA compressLUT<>+52(SB)/4, $0x320
DATA compressLUT<>+56(SB)/4, $0x321
DATA compressLUT<>+60(SB)/4, $0x3210
DATA compressLUT<>+64(SB)/4, $0x4
DATA compressLUT<>+68(SB)/4, $0x40
DATA compressLUT<>+72(SB)/4, $0x41
DATA compressLUT<>+76(SB)/4, $0x410
DATA compressLUT<>+80(SB)/4, $0x42
DATA compressLUT<>+84(SB)/4, $0x420
DATA compressLUT<>+88(SB)/4, $0x421
DATA compressLUT<>+92(SB)/4, $0x4210
DATA compressLUT<>+96(SB)/4, $0x43
DATA compressLUT<>+100(SB)/4, $0x430
DATA compressLUT<>+104(SB)/4, $0x431
DATA compressLUT<>+108(SB)/4, $0x4310
DATA compressLUT<>+112(SB)/4, $0x432
DATA compressLUT<>+116(SB)/4, $0x4320
DATA compressLUT<>+120(SB)/4, $0x4321
DATA compressLUT<>+124(SB)/4, $0x43210
DATA compressLUT<>+128(SB)/4, $0x5
DATA compressLUT<>+132(SB)/4, $0x50
DATA compressLUT<>+136(SB)/4, $0x51
DATA compressLUT<>+140(SB)/4, $0x510
DATA compressLUT<>+144(SB)/4, $0x52
DATA compressLUT<>+148(SB)/4, $0x520
DATA compressLUT<>+152(SB)/4, $0x521
DATA compressLUT<>+156(SB)/4, $0x5210
DATA compressLUT<>+160(SB)/4, $0x53
DATA compressLUT<>+164(SB)/4, $0x530
DATA compressLUT<>+168(SB)/4, $0x531
DATA compressLUT<>+172(SB)/4, $0x5310
DATA compressLUT<>+176(SB)/4, $0x532
DATA compressLUT<>+180(SB)/4, $0x5320
DATA compressLUT<>+184(SB)/4, $0x5321
DATA compressLUT<>+188(SB)/4, $0x53210
DATA compressLUT<>+192(SB)/4, $0x54
DATA compressLUT<>+196(SB)/4, $0x540
DATA compressLUT<>+200(SB)/4, $0x541
DATA compressLUT<>+204(SB)/4, $0x5410
DATA compressLUT<>+208(SB)/4, $0x542
DATA compressLUT<>+212(SB)/4, $0x5420
DATA compressLUT<>+216(SB)/4, $0x5421
DATA compressLUT<>+220(SB)/4, $0x54210
DATA compressLUT<>+224(SB)/4, $0x543
DATA compressLUT<>+228(SB)/4, $0x5430
DATA compressLUT<>+232(SB)/4, $0x5431
DATA compressLUT<>+236(SB)/4, $0x54310
DATA compressLUT<>+240(SB)/4, $0x5432
DATA compressLUT<>+244(SB)/4, $0x54320
DATA compressLUT<>+248(SB)/4, $0x54321
DATA compressLUT<>+252(SB)/4, $0x543210
DATA compressLUT<>+256(SB)/4, $0x6
DATA compressLUT<>+260(SB)/4, $0x60
DATA compressLUT<>+264(SB)/4, $0x61
DATA compressLUT<>+268(SB)/4, $0x610
DATA compressLUT<>+272(SB)/4, $0x62
DATA compressLUT<>+276(SB)/4, $0x620
DATA compressLUT<>+280(SB)/4, $0x621
DATA compressLUT<>+284(SB)/4, $0x6210
DATA compressLUT<>+288(SB)/4, $0x63
DATA compressLUT<>+292(SB)/4, $0x630
DATA compressLUT<>+296(SB)/4, $0x631
DATA compressLUT<>+300(SB)/4, $0x6310
DATA compressLUT<>+304(SB)/4, $0x632
DATA compressLUT<>+308(SB)/4, $0x6320
DATA compressLUT<>+312(SB)/4, $0x6321
DATA compressLUT<>+316(SB)/4, $0x63210
DATA compressLUT<>+320(SB)/4, $0x64
DATA compressLUT<>+324(SB)/4, $0x640
DATA compressLUT<>+328(SB)/4, $0x641
DATA compressLUT<>+332(SB)/4, $0x6410
DATA compressLUT<>+336(SB)/4, $0x642
DATA compressLUT<>+340(SB)/4, $0x6420
DATA compressLUT<>+344(SB)/4, $0x6421
DATA compressLUT<>+348(SB)/4, $0x64210
DATA compressLUT<>+352(SB)/4, $0x643
DATA compressLUT<>+356(SB)/4, $0x6430
DATA compressLUT<>+360(SB)/4, $0x6431
DATA compressLUT<>+364(SB)/4, $0x64310
DATA compressLUT<>+368(SB)/4, $0x6432
DATA compressLUT<>+372(SB)/4, $0x64320
DATA compressLUT<>+376(SB)/4, $0x64321
DATA compressLUT<>+380(SB)/4, $0x643210
DATA compressLUT<>+384(SB)/4, $0x65
DATA compressLUT<>+388(SB)/4, $0x650
DATA compressLUT<>+392(SB)/4, $0x651
DATA compressLUT<>+396(SB)/4, $0x6510
DATA compressLUT<>+400(SB)/4, $0x652
DATA compressLUT<>+404(SB)/4, $0x6520
DATA compressLUT<>+408(SB)/4, $0x6521
DATA compressLUT<>+412(SB)/4, $0x65210
DATA compressLUT<>+416(SB)/4, $0x653
DATA compressLUT<>+420(SB)/4, $0x6530
DATA compressLUT<>+424(SB)/4, $0x6531
DATA compressLUT<>+428(SB)/4, $0x65310
DATA compressLUT<>+432(SB)/4, $0x6532
DATA compressLUT<>+436(SB)/4, $0x65320
DATA compressLUT<>+440(SB)/4, $0x65321
DATA compressLUT<>+444(SB)/4, $0x653210
DATA compressLUT<>+448(SB)/4, $0x654
DATA compressLUT<>+452(SB)/4, $0x6540
DATA compressLUT<>+456(SB)/4, $0x6541
DATA compressLUT<>+460(SB)/4, $0x65410
DATA compressLUT<>+464(SB)/4, $0x6542
DATA compressLUT<>+468(SB)/4, $0x65420
DATA compressLUT<>+472(SB)/4, $0x65421
DATA compressLUT<>+476(SB)/4, $0x654210
DATA compressLUT<>+480(SB)/4, $0x6543
DATA compressLUT<>+484(SB)/4, $0x65430
DATA compressLUT<>+488(SB)/4, $0x65431
DATA compressLUT<>+492(SB)/4, $0x654310
DATA compressLUT<>+496(SB)/4, $0x65432
DATA compressLUT<>+500(SB)/4, $0x654320
DATA compressLUT<>+504(SB)/4, $0x654321
DATA compressLUT<>+508(SB)/4, $0x6543210
DATA compressLUT<>+512(SB)/4, $0x7
DATA compressLUT<>+516(SB)/4, $0x70
DATA compressLUT<>+520(SB)/4, $0x71
DATA compressLUT<>+524(SB)/4, $0x710
DATA compressLUT<>+528(SB)/4, $0x72
DATA compressLUT<>+532(SB)/4, $0x720
DATA compressLUT<>+536(SB)/4, $0x721
DATA compressLUT<>+540(SB)/4, $0x7210
DATA compressLUT<>+544(SB)/4, $0x73
DATA compressLUT<>+548(SB)/4, $0x730
DATA compressLUT<>+552(SB)/4, $0x731
DATA compressLUT<>+556(SB)/4, $0x7310
DATA compressLUT<>+560(SB)/4, $0x732
DATA compressLUT<>+564(SB)/4, $0x7320
DATA compressLUT<>+568(SB)/4, $0x7321
DATA compressLUT<>+572(SB)/4, $0x73210
DATA compressLUT<>+576(SB)/4, $0x74
DATA compressLUT<>+580(SB)/4, $0x740
DATA compressLUT<>+584(SB)/4, $0x741
DATA compressLUT<>+588(SB)/4, $0x7410
DATA compressLUT<>+592(SB)/4, $0x742
DATA compressLUT<>+596(SB)/4, $0x7420
DATA compressLUT<>+600(SB)/4, $0x7421
DATA compressLUT<>+604(SB)/4, $0x74210
DATA compressLUT<>+608(SB)/4, $0x743
DATA compressLUT<>+612(SB)/4, $0x7430
DATA compressLUT<>+616(SB)/4, $0x7431
DATA compressLUT<>+620(SB)/4, $0x74310
DATA compressLUT<>+624(SB)/4, $0x7432
DATA compressLUT<>+628(SB)/4, $0x74320
DATA compressLUT<>+632(SB)/4, $0x74321
DATA compressLUT<>+636(SB)/4, $0x743210
DATA compressLUT<>+640(SB)/4, $0x75
DATA compressLUT<>+644(SB)/4, $0x750
DATA compressLUT<>+648(SB)/4, $0x751
DATA compressLUT<>+652(SB)/4, $0x7510
DATA compressLUT<>+656(SB)/4, $0x752
DATA compressLUT<>+660(SB)/4, $0x7520
DATA compressLUT<>+664(SB)/4, $0x7521
DATA compressLUT<>+668(SB)/4, $0x75210
DATA compressLUT<>+672(SB)/4, $0x753
DATA compressLUT<>+676(SB)/4, $0x7530
DATA compressLUT<>+680(SB)/4, $0x7531
DATA compressLUT<>+684(SB)/4, $0x75310
DATA compressLUT<>+688(SB)/4, $0x7532
DATA compressLUT<>+692(SB)/4, $0x75320
DATA compressLUT<>+696(SB)/4, $0x75321
DATA compressLUT<>+700(SB)/4, $0x753210
DATA compressLUT<>+704(SB)/4, $0x754
DATA compressLUT<>+708(SB)/4, $0x7540
DATA compressLUT<>+712(SB)/4, $0x7541
DATA compressLUT<>+716(SB)/4, $0x75410
DATA compressLUT<>+720(SB)/4, $0x7542
DATA compressLUT<>+724(SB)/4, $0x75420
DATA compressLUT<>+728(SB)/4, $0x75421
DATA compressLUT<>+732(SB)/4, $0x754210
DATA compressLUT<>+736(SB)/4, $0x7543
DATA compressLUT<>+740(SB)/4, $0x75430
DATA compressLUT<>+744(SB)/4, $0x75431
DATA compressLUT<>+748(SB)/4, $0x754310
DATA compressLUT<>+752(SB)/4, $0x75432
DATA compressLUT<>+756(SB)/4, $0x754320
DATA compressLUT<>+760(SB)/4, $0x754321
DATA compressLUT<>+764(SB)/4, $0x7543210
DATA compressLUT<>+768(SB)/4, $0x76
DATA compressLUT<>+772(SB)/4, $0x760
DATA compressLUT<>+776(SB)/4, $0x761
DATA compressLUT<>+780(SB)/4, $0x7610
DATA compressLUT<>+784(SB)/4, $0x762
DATA compressLUT<>+788(SB)/4, $0x7620
DATA compressLUT<>+792(SB)/4, $0x7621
DATA compressLUT<>+796(SB)/4, $0x76210
DATA compressLUT<>+800(SB)/4, $0x763
DATA compressLUT<>+804(SB)/4, $0x7630
DATA compressLUT<>+808(SB)/4, $0x7631
DATA compressLUT<>+812(SB)/4, $0x76310
DATA compressLUT<>+816(SB)/4, $0x7632
DATA compressLUT<>+820(SB)/4, $0x76320
DATA compressLUT<>+824(SB)/4, $0x76321
DATA compressLUT<>+828(SB)/4, $0x763210
DATA compressLUT<>+832(SB)/4, $0x764
DATA compressLUT<>+836(SB)/4, $0x7640
DATA compressLUT<>+840(SB)/4, $0x7641
DATA compressLUT<>+844(SB)/4, $0x76410
DATA compressLUT<>+848(SB)/4, $0x7642
DATA compressLUT<>+852(SB)/4, $0x76420
DATA compressLUT<>+856(SB)/4, $0x76421
DATA compressLUT<>+860(SB)/4, $0x764210
DATA compressLUT<>+864(SB)/4, $0x7643
DATA compressLUT<>+868(SB)/4, $0x76430
DATA compressLUT<>+872(SB)/4, $0x76431
DATA compressLUT<>+876(SB)/4, $0x764310
DATA compressLUT<>+880(SB)/4, $0x76432
DATA compressLUT<>+884(SB)/4, $0x764320
DATA compressLUT<>+888(SB)/4, $0x764321
DATA compressLUT<>+892(SB)/4, $0x7643210
DATA compressLUT<>+896(SB)/4, $0x765
DATA compressLUT<>+900(SB)/4, $0x7650
DATA compressLUT<>+904(SB)/4, $0x7651
DATA compressLUT<>+908(SB)/4, $0x76510
DATA compressLUT<>+912(SB)/4, $0x7652
DATA compressLUT<>+916(SB)/4, $0x76520
DATA compressLUT<>+920(SB)/4, $0x76521
DATA compressLUT<>+924(SB)/4, $0x765210
DATA compressLUT<>+928(SB)/4, $0x7653
DATA compressLUT<>+932(SB)/4, $0x76530
DATA compressLUT<>+936(SB)/4, $0x76531
DATA compressLUT<>+940(SB)/4, $0x765310
DATA compressLUT<>+944(SB)/4, $0x76532
DATA compressLUT<>+948(SB)/4, $0x765320
DATA compressLUT<>+952(SB)/4, $0x765321
DATA compressLUT<>+956(SB)/4, $0x7653210
DATA compressLUT<>+960(SB)/4, $0x7654
DATA compressLUT<>+964(SB)/4, $0x76540
DATA compressLUT<>+968(SB)/4, $0x76541
DATA compressLUT<>+972(SB)/4, $0x765410
DATA compressLUT<>+976(SB)/4, $0x76542
DATA compressLUT<>+980(SB)/4, $0x765420
DATA compressLUT<>+984(SB)/4, $0x765421
DATA compressLUT<>+988(SB)/4, $0x7654210
DATA compressLUT<>+992(SB)/4, $0x76543
DATA compressLUT<>+996(SB)/4, $0x765430
DATA compressLUT<>+1000(SB)/4, $0x765431
DATA compressLUT<>+1004(SB)/4, $0x7654310
DATA compressLUT<>+1008(SB)/4, $0x765432
DATA compressLUT<>+1012(SB)/4, $0x7654320
DATA compressLUT<>+1016(SB)/4, $0x7654321
DATA compressLUT<>+1020(SB)/4, $0x76543210
GLOBL compressLUT<>(SB), RODATA|NOPTR, $1024

// Shift counts 0, 4, …, 28 that unpack a compressLUT entry into eight
// lanes, the nibble mask, and load masks for n < 8 lanes (8 words of −1
// then 8 of 0; the first n lanes start at partMask<> + (8−n)·4).
DATA nibShift<>+0(SB)/4, $0
DATA nibShift<>+4(SB)/4, $4
DATA nibShift<>+8(SB)/4, $8
DATA nibShift<>+12(SB)/4, $12
DATA nibShift<>+16(SB)/4, $16
DATA nibShift<>+20(SB)/4, $20
DATA nibShift<>+24(SB)/4, $24
DATA nibShift<>+28(SB)/4, $28
GLOBL nibShift<>(SB), RODATA|NOPTR, $32

DATA nibMask<>+0(SB)/4, $0xf
GLOBL nibMask<>(SB), RODATA|NOPTR, $4

DATA partMask<>+0(SB)/8, $0xffffffffffffffff
DATA partMask<>+8(SB)/8, $0xffffffffffffffff
DATA partMask<>+16(SB)/8, $0xffffffffffffffff
DATA partMask<>+24(SB)/8, $0xffffffffffffffff
DATA partMask<>+32(SB)/8, $0
DATA partMask<>+40(SB)/8, $0
DATA partMask<>+48(SB)/8, $0
DATA partMask<>+56(SB)/8, $0
GLOBL partMask<>(SB), RODATA|NOPTR, $64

// func partitionAVX2(lo, hi, src *float32, n int, p float32) (nl, ng int)
//
// partitionAVX512 at half width: each group of eight is compressed by a
// VPERMPS whose indices come from compressLUT, and stored whole, so lo
// and hi need 8 values of slack; the tail is loaded masked and its empty
// lanes left out of both comparisons. Needs POPCNT.
TEXT ·partitionAVX2(SB), NOSPLIT, $0-56
	MOVQ lo+0(FP), DI
	MOVQ hi+8(FP), R9
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSS p+32(FP), Y3
	VMOVDQU nibShift<>(SB), Y4
	VPBROADCASTD nibMask<>(SB), Y5
	LEAQ partMask<>(SB), R12
	LEAQ compressLUT<>(SB), R13
	XORQ AX, AX                  // read position
	XORQ R10, R10                // nl
	XORQ R11, R11                // ng

part2Chunk:
	MOVQ CX, BX
	SUBQ AX, BX
	VMOVDQU (R12), Y6
	CMPQ BX, $8
	JGE  part2Go
	NEGQ BX
	VMOVDQU 32(R12)(BX*4), Y6    // the first n−AX lanes

part2Go:
	VMASKMOVPS (SI)(AX*4), Y6, Y0
	VCMPPS     $0x11, Y3, Y0, Y1 // v < p
	VANDPS     Y6, Y1, Y1
	VCMPPS     $0x1e, Y3, Y0, Y2 // v > p
	VANDPS     Y6, Y2, Y2
	VMOVMSKPS  Y1, DX
	VMOVMSKPS  Y2, R8
	VPBROADCASTD (R13)(DX*4), Y7
	VPSRLVD    Y4, Y7, Y7
	VPAND      Y5, Y7, Y7
	VPERMPS    Y0, Y7, Y8
	VMOVUPS    Y8, (DI)(R10*4)
	POPCNTL    DX, DX
	ADDQ       DX, R10
	VPBROADCASTD (R13)(R8*4), Y7
	VPSRLVD    Y4, Y7, Y7
	VPAND      Y5, Y7, Y7
	VPERMPS    Y0, Y7, Y8
	VMOVUPS    Y8, (R9)(R11*4)
	POPCNTL    R8, R8
	ADDQ       R8, R11
	ADDQ       $8, AX
	CMPQ       AX, CX
	JLT        part2Chunk
	MOVQ       R10, nl+40(FP)
	MOVQ       R11, ng+48(FP)
	VZEROUPPER
	RET
