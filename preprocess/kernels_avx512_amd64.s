//go:build amd64 && !noasm

#include "textflag.h"

// AVX-512 kernels of the preprocessor (their AVX2 twins are in
// kernels_avx2_amd64.s); see kernels_amd64.go and,
// for the operations they share with the Go code, cpu.go, filter.go and
// median.go. The AVX-512 kernels that use Z16–Z31 zero them before
// returning, as VZEROUPPER does Z0–Z15, so that no dirty upper state is
// left for the Go compiler's SSE code.

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

// func hpPassAVX512(e *float64, n, stride int, st *hpState, c *[4]float64)
//
// n steps of the fused order-3 high-pass pass over 16 interleaved float64
// lanes (two registers), the step at e, the next stride bytes on (± 128);
// st holds the state rows x1, x2, x3, y1, y2, z1 of hpState and c the
// constants 3, p1, p2, q1. Per lane and step, as hpPass documents and
// diff3/allPole3 compute: multiply and subtract (add) rounded one by one,
// no fused multiply-add, in the Go code's order.
TEXT ·hpPassAVX512(SB), NOSPLIT, $0-40
	MOVQ e+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ stride+16(FP), DX
	MOVQ st+24(FP), DI
	MOVQ c+32(FP), R8
	VBROADCASTSD 0(R8), Z28
	VBROADCASTSD 8(R8), Z29
	VBROADCASTSD 16(R8), Z30
	VBROADCASTSD 24(R8), Z31
	VMOVUPD 0(DI), Z0
	VMOVUPD 128(DI), Z1
	VMOVUPD 256(DI), Z2
	VMOVUPD 384(DI), Z3
	VMOVUPD 512(DI), Z4
	VMOVUPD 640(DI), Z5
	VMOVUPD 64(DI), Z6
	VMOVUPD 192(DI), Z7
	VMOVUPD 320(DI), Z8
	VMOVUPD 448(DI), Z9
	VMOVUPD 576(DI), Z10
	VMOVUPD 704(DI), Z11
	TESTQ CX, CX
	JLE hpPassAVX512Done
hpPassAVX512Loop:
	// lanes 0…7: d = ((v − 3·x1) + 3·x2) − x3
	VMOVUPD 0(SI), Z12
	VMULPD Z28, Z0, Z14
	VSUBPD Z14, Z12, Z14
	VMULPD Z28, Z1, Z15
	VADDPD Z15, Z14, Z14
	VSUBPD Z2, Z14, Z14
	// y = (d − p2·y2) − p1·y1; z = y − q1·z1
	VMULPD Z30, Z4, Z15
	VSUBPD Z15, Z14, Z14
	VMULPD Z29, Z3, Z15
	VSUBPD Z15, Z14, Z14
	VMULPD Z31, Z5, Z15
	VSUBPD Z15, Z14, Z5
	VMOVUPD Z5, 0(SI)
	VMOVAPD Z1, Z2
	VMOVAPD Z0, Z1
	VMOVAPD Z12, Z0
	VMOVAPD Z3, Z4
	VMOVAPD Z14, Z3
	// lanes 8…15: d = ((v − 3·x1) + 3·x2) − x3
	VMOVUPD 64(SI), Z12
	VMULPD Z28, Z6, Z14
	VSUBPD Z14, Z12, Z14
	VMULPD Z28, Z7, Z15
	VADDPD Z15, Z14, Z14
	VSUBPD Z8, Z14, Z14
	// y = (d − p2·y2) − p1·y1; z = y − q1·z1
	VMULPD Z30, Z10, Z15
	VSUBPD Z15, Z14, Z14
	VMULPD Z29, Z9, Z15
	VSUBPD Z15, Z14, Z14
	VMULPD Z31, Z11, Z15
	VSUBPD Z15, Z14, Z11
	VMOVUPD Z11, 64(SI)
	VMOVAPD Z7, Z8
	VMOVAPD Z6, Z7
	VMOVAPD Z12, Z6
	VMOVAPD Z9, Z10
	VMOVAPD Z14, Z9
	ADDQ DX, SI
	DECQ CX
	JNZ  hpPassAVX512Loop
hpPassAVX512Done:
	VPXORD X28, X28, X28
	VPXORD X29, X29, X29
	VPXORD X30, X30, X30
	VPXORD X31, X31, X31
	VZEROUPPER
	RET

// func hpInterleaveAVX512(e *float64, src *float32, stride, n int)
//
// For t < n (a multiple of 8) and the 16 rows k of src, stride bytes
// apart: e[t·16+k] = float64(row k's sample t). Eight samples of eight
// rows at a time are widened and transposed in registers.
TEXT ·hpInterleaveAVX512(SB), NOSPLIT, $0-32
	MOVQ e+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   hpIlvDone
	LEAQ (DX)(DX*2), R9  // 3·stride
hpIlvLoop:
	// rows 0…7
	MOVQ SI, R8
	VCVTPS2PD (R8), Z0
	VCVTPS2PD (R8)(DX*1), Z1
	VCVTPS2PD (R8)(DX*2), Z2
	VCVTPS2PD (R8)(R9*1), Z3
	LEAQ (R8)(DX*4), R10
	VCVTPS2PD (R10), Z4
	VCVTPS2PD (R10)(DX*1), Z5
	VCVTPS2PD (R10)(DX*2), Z6
	VCVTPS2PD (R10)(R9*1), Z7
	VUNPCKLPD Z1, Z0, Z8
	VUNPCKHPD Z1, Z0, Z9
	VUNPCKLPD Z3, Z2, Z10
	VUNPCKHPD Z3, Z2, Z11
	VUNPCKLPD Z5, Z4, Z12
	VUNPCKHPD Z5, Z4, Z13
	VUNPCKLPD Z7, Z6, Z14
	VUNPCKHPD Z7, Z6, Z15
	VSHUFF64X2 $0x88, Z10, Z8, Z0
	VSHUFF64X2 $0xdd, Z10, Z8, Z1
	VSHUFF64X2 $0x88, Z11, Z9, Z2
	VSHUFF64X2 $0xdd, Z11, Z9, Z3
	VSHUFF64X2 $0x88, Z14, Z12, Z4
	VSHUFF64X2 $0xdd, Z14, Z12, Z5
	VSHUFF64X2 $0x88, Z15, Z13, Z6
	VSHUFF64X2 $0xdd, Z15, Z13, Z7
	VSHUFF64X2 $0x88, Z4, Z0, Z8
	VSHUFF64X2 $0xdd, Z4, Z0, Z12
	VSHUFF64X2 $0x88, Z5, Z1, Z10
	VSHUFF64X2 $0xdd, Z5, Z1, Z14
	VSHUFF64X2 $0x88, Z6, Z2, Z9
	VSHUFF64X2 $0xdd, Z6, Z2, Z13
	VSHUFF64X2 $0x88, Z7, Z3, Z11
	VSHUFF64X2 $0xdd, Z7, Z3, Z15
	VMOVUPD Z8, 0(DI)
	VMOVUPD Z9, 128(DI)
	VMOVUPD Z10, 256(DI)
	VMOVUPD Z11, 384(DI)
	VMOVUPD Z12, 512(DI)
	VMOVUPD Z13, 640(DI)
	VMOVUPD Z14, 768(DI)
	VMOVUPD Z15, 896(DI)
	// rows 8…15
	MOVQ SI, R8
	LEAQ (SI)(DX*8), R8
	VCVTPS2PD (R8), Z0
	VCVTPS2PD (R8)(DX*1), Z1
	VCVTPS2PD (R8)(DX*2), Z2
	VCVTPS2PD (R8)(R9*1), Z3
	LEAQ (R8)(DX*4), R10
	VCVTPS2PD (R10), Z4
	VCVTPS2PD (R10)(DX*1), Z5
	VCVTPS2PD (R10)(DX*2), Z6
	VCVTPS2PD (R10)(R9*1), Z7
	VUNPCKLPD Z1, Z0, Z8
	VUNPCKHPD Z1, Z0, Z9
	VUNPCKLPD Z3, Z2, Z10
	VUNPCKHPD Z3, Z2, Z11
	VUNPCKLPD Z5, Z4, Z12
	VUNPCKHPD Z5, Z4, Z13
	VUNPCKLPD Z7, Z6, Z14
	VUNPCKHPD Z7, Z6, Z15
	VSHUFF64X2 $0x88, Z10, Z8, Z0
	VSHUFF64X2 $0xdd, Z10, Z8, Z1
	VSHUFF64X2 $0x88, Z11, Z9, Z2
	VSHUFF64X2 $0xdd, Z11, Z9, Z3
	VSHUFF64X2 $0x88, Z14, Z12, Z4
	VSHUFF64X2 $0xdd, Z14, Z12, Z5
	VSHUFF64X2 $0x88, Z15, Z13, Z6
	VSHUFF64X2 $0xdd, Z15, Z13, Z7
	VSHUFF64X2 $0x88, Z4, Z0, Z8
	VSHUFF64X2 $0xdd, Z4, Z0, Z12
	VSHUFF64X2 $0x88, Z5, Z1, Z10
	VSHUFF64X2 $0xdd, Z5, Z1, Z14
	VSHUFF64X2 $0x88, Z6, Z2, Z9
	VSHUFF64X2 $0xdd, Z6, Z2, Z13
	VSHUFF64X2 $0x88, Z7, Z3, Z11
	VSHUFF64X2 $0xdd, Z7, Z3, Z15
	VMOVUPD Z8, 64(DI)
	VMOVUPD Z9, 192(DI)
	VMOVUPD Z10, 320(DI)
	VMOVUPD Z11, 448(DI)
	VMOVUPD Z12, 576(DI)
	VMOVUPD Z13, 704(DI)
	VMOVUPD Z14, 832(DI)
	VMOVUPD Z15, 960(DI)
	ADDQ $32, SI
	ADDQ $1024, DI
	DECQ CX
	JNZ  hpIlvLoop
hpIlvDone:
	VZEROUPPER
	RET

// func hpDeinterleaveAVX512(dst *float32, stride int, e *float64, n int, gain float64)
//
// The inverse of hpInterleaveAVX512 with the gain: row k's sample t, for
// t < n (a multiple of 8), is float32(gain·e[t·16+k]), rounded once as
// Filter.output does.
TEXT ·hpDeinterleaveAVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), DX
	MOVQ e+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ gain+32(FP), AX
	VPBROADCASTQ AX, Z31
	SHRQ $3, CX
	JZ   hpDilDone
	LEAQ (DX)(DX*2), R9
hpDilLoop:
	// rows 0…7
	VMULPD 0(SI), Z31, Z0
	VMULPD 128(SI), Z31, Z1
	VMULPD 256(SI), Z31, Z2
	VMULPD 384(SI), Z31, Z3
	VMULPD 512(SI), Z31, Z4
	VMULPD 640(SI), Z31, Z5
	VMULPD 768(SI), Z31, Z6
	VMULPD 896(SI), Z31, Z7
	VUNPCKLPD Z1, Z0, Z8
	VUNPCKHPD Z1, Z0, Z9
	VUNPCKLPD Z3, Z2, Z10
	VUNPCKHPD Z3, Z2, Z11
	VUNPCKLPD Z5, Z4, Z12
	VUNPCKHPD Z5, Z4, Z13
	VUNPCKLPD Z7, Z6, Z14
	VUNPCKHPD Z7, Z6, Z15
	VSHUFF64X2 $0x88, Z10, Z8, Z0
	VSHUFF64X2 $0xdd, Z10, Z8, Z1
	VSHUFF64X2 $0x88, Z11, Z9, Z2
	VSHUFF64X2 $0xdd, Z11, Z9, Z3
	VSHUFF64X2 $0x88, Z14, Z12, Z4
	VSHUFF64X2 $0xdd, Z14, Z12, Z5
	VSHUFF64X2 $0x88, Z15, Z13, Z6
	VSHUFF64X2 $0xdd, Z15, Z13, Z7
	VSHUFF64X2 $0x88, Z4, Z0, Z8
	VSHUFF64X2 $0xdd, Z4, Z0, Z12
	VSHUFF64X2 $0x88, Z5, Z1, Z10
	VSHUFF64X2 $0xdd, Z5, Z1, Z14
	VSHUFF64X2 $0x88, Z6, Z2, Z9
	VSHUFF64X2 $0xdd, Z6, Z2, Z13
	VSHUFF64X2 $0x88, Z7, Z3, Z11
	VSHUFF64X2 $0xdd, Z7, Z3, Z15
	MOVQ DI, R8
	VCVTPD2PS Z8, Y16
	VCVTPD2PS Z9, Y17
	VCVTPD2PS Z10, Y18
	VCVTPD2PS Z11, Y19
	VCVTPD2PS Z12, Y20
	VCVTPD2PS Z13, Y21
	VCVTPD2PS Z14, Y22
	VCVTPD2PS Z15, Y23
	VMOVUPS Y16, (R8)
	VMOVUPS Y17, (R8)(DX*1)
	VMOVUPS Y18, (R8)(DX*2)
	VMOVUPS Y19, (R8)(R9*1)
	LEAQ (R8)(DX*4), R10
	VMOVUPS Y20, (R10)
	VMOVUPS Y21, (R10)(DX*1)
	VMOVUPS Y22, (R10)(DX*2)
	VMOVUPS Y23, (R10)(R9*1)
	// rows 8…15
	VMULPD 64(SI), Z31, Z0
	VMULPD 192(SI), Z31, Z1
	VMULPD 320(SI), Z31, Z2
	VMULPD 448(SI), Z31, Z3
	VMULPD 576(SI), Z31, Z4
	VMULPD 704(SI), Z31, Z5
	VMULPD 832(SI), Z31, Z6
	VMULPD 960(SI), Z31, Z7
	VUNPCKLPD Z1, Z0, Z8
	VUNPCKHPD Z1, Z0, Z9
	VUNPCKLPD Z3, Z2, Z10
	VUNPCKHPD Z3, Z2, Z11
	VUNPCKLPD Z5, Z4, Z12
	VUNPCKHPD Z5, Z4, Z13
	VUNPCKLPD Z7, Z6, Z14
	VUNPCKHPD Z7, Z6, Z15
	VSHUFF64X2 $0x88, Z10, Z8, Z0
	VSHUFF64X2 $0xdd, Z10, Z8, Z1
	VSHUFF64X2 $0x88, Z11, Z9, Z2
	VSHUFF64X2 $0xdd, Z11, Z9, Z3
	VSHUFF64X2 $0x88, Z14, Z12, Z4
	VSHUFF64X2 $0xdd, Z14, Z12, Z5
	VSHUFF64X2 $0x88, Z15, Z13, Z6
	VSHUFF64X2 $0xdd, Z15, Z13, Z7
	VSHUFF64X2 $0x88, Z4, Z0, Z8
	VSHUFF64X2 $0xdd, Z4, Z0, Z12
	VSHUFF64X2 $0x88, Z5, Z1, Z10
	VSHUFF64X2 $0xdd, Z5, Z1, Z14
	VSHUFF64X2 $0x88, Z6, Z2, Z9
	VSHUFF64X2 $0xdd, Z6, Z2, Z13
	VSHUFF64X2 $0x88, Z7, Z3, Z11
	VSHUFF64X2 $0xdd, Z7, Z3, Z15
	MOVQ DI, R8
	LEAQ (DI)(DX*8), R8
	VCVTPD2PS Z8, Y16
	VCVTPD2PS Z9, Y17
	VCVTPD2PS Z10, Y18
	VCVTPD2PS Z11, Y19
	VCVTPD2PS Z12, Y20
	VCVTPD2PS Z13, Y21
	VCVTPD2PS Z14, Y22
	VCVTPD2PS Z15, Y23
	VMOVUPS Y16, (R8)
	VMOVUPS Y17, (R8)(DX*1)
	VMOVUPS Y18, (R8)(DX*2)
	VMOVUPS Y19, (R8)(R9*1)
	LEAQ (R8)(DX*4), R10
	VMOVUPS Y20, (R10)
	VMOVUPS Y21, (R10)(DX*1)
	VMOVUPS Y22, (R10)(DX*2)
	VMOVUPS Y23, (R10)(R9*1)
	ADDQ $32, DI
	ADDQ $1024, SI
	DECQ CX
	JNZ  hpDilLoop
hpDilDone:
	VPXORD X16, X16, X16
	VPXORD X17, X17, X17
	VPXORD X18, X18, X18
	VPXORD X19, X19, X19
	VPXORD X20, X20, X20
	VPXORD X21, X21, X21
	VPXORD X22, X22, X22
	VPXORD X23, X23, X23
	VZEROUPPER
	RET

// func centreAVX512(out *float32, stride int, cols *float32, C, n int, med *[16]float32)
//
// For channels i < n (a multiple of 16) and the 16 columns k of a block:
// out[i·stride/4 + k] = cols[k·C+i] − med[k], one rounding as in
// referenceRange. Sixteen columns of sixteen channels are loaded, centred
// and transposed in registers, then stored as 64 bytes per channel row.
TEXT ·centreAVX512(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ stride+8(FP), DX
	MOVQ cols+16(FP), SI
	MOVQ C+24(FP), R11
	SHLQ $2, R11              // column stride in bytes
	MOVQ n+32(FP), CX
	MOVQ med+40(FP), R12
	SHRQ $4, CX
	JZ   centreDone
	LEAQ (DX)(DX*2), R9        // 3·stride
	LEAQ (R11)(R11*2), R13     // 3·column stride
centreLoop:
	MOVQ SI, R8
	VMOVUPS (R8), Z0
	VSUBPS.BCST 0(R12), Z0, Z0
	VMOVUPS (R8)(R11*1), Z1
	VSUBPS.BCST 4(R12), Z1, Z1
	VMOVUPS (R8)(R11*2), Z2
	VSUBPS.BCST 8(R12), Z2, Z2
	VMOVUPS (R8)(R13*1), Z3
	VSUBPS.BCST 12(R12), Z3, Z3
	LEAQ (R8)(R11*4), R8
	VMOVUPS (R8), Z4
	VSUBPS.BCST 16(R12), Z4, Z4
	VMOVUPS (R8)(R11*1), Z5
	VSUBPS.BCST 20(R12), Z5, Z5
	VMOVUPS (R8)(R11*2), Z6
	VSUBPS.BCST 24(R12), Z6, Z6
	VMOVUPS (R8)(R13*1), Z7
	VSUBPS.BCST 28(R12), Z7, Z7
	LEAQ (R8)(R11*4), R8
	VMOVUPS (R8), Z8
	VSUBPS.BCST 32(R12), Z8, Z8
	VMOVUPS (R8)(R11*1), Z9
	VSUBPS.BCST 36(R12), Z9, Z9
	VMOVUPS (R8)(R11*2), Z10
	VSUBPS.BCST 40(R12), Z10, Z10
	VMOVUPS (R8)(R13*1), Z11
	VSUBPS.BCST 44(R12), Z11, Z11
	LEAQ (R8)(R11*4), R8
	VMOVUPS (R8), Z12
	VSUBPS.BCST 48(R12), Z12, Z12
	VMOVUPS (R8)(R11*1), Z13
	VSUBPS.BCST 52(R12), Z13, Z13
	VMOVUPS (R8)(R11*2), Z14
	VSUBPS.BCST 56(R12), Z14, Z14
	VMOVUPS (R8)(R13*1), Z15
	VSUBPS.BCST 60(R12), Z15, Z15
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15
	VSHUFF32X4 $0x88, Z4, Z0, Z16
	VSHUFF32X4 $0xdd, Z4, Z0, Z17
	VSHUFF32X4 $0x88, Z12, Z8, Z18
	VSHUFF32X4 $0xdd, Z12, Z8, Z19
	VSHUFF32X4 $0x88, Z5, Z1, Z20
	VSHUFF32X4 $0xdd, Z5, Z1, Z21
	VSHUFF32X4 $0x88, Z13, Z9, Z22
	VSHUFF32X4 $0xdd, Z13, Z9, Z23
	VSHUFF32X4 $0x88, Z6, Z2, Z24
	VSHUFF32X4 $0xdd, Z6, Z2, Z25
	VSHUFF32X4 $0x88, Z14, Z10, Z26
	VSHUFF32X4 $0xdd, Z14, Z10, Z27
	VSHUFF32X4 $0x88, Z7, Z3, Z28
	VSHUFF32X4 $0xdd, Z7, Z3, Z29
	VSHUFF32X4 $0x88, Z15, Z11, Z30
	VSHUFF32X4 $0xdd, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z18, Z16, Z0
	VSHUFF32X4 $0xdd, Z18, Z16, Z8
	VSHUFF32X4 $0x88, Z19, Z17, Z4
	VSHUFF32X4 $0xdd, Z19, Z17, Z12
	VSHUFF32X4 $0x88, Z22, Z20, Z1
	VSHUFF32X4 $0xdd, Z22, Z20, Z9
	VSHUFF32X4 $0x88, Z23, Z21, Z5
	VSHUFF32X4 $0xdd, Z23, Z21, Z13
	VSHUFF32X4 $0x88, Z26, Z24, Z2
	VSHUFF32X4 $0xdd, Z26, Z24, Z10
	VSHUFF32X4 $0x88, Z27, Z25, Z6
	VSHUFF32X4 $0xdd, Z27, Z25, Z14
	VSHUFF32X4 $0x88, Z30, Z28, Z3
	VSHUFF32X4 $0xdd, Z30, Z28, Z11
	VSHUFF32X4 $0x88, Z31, Z29, Z7
	VSHUFF32X4 $0xdd, Z31, Z29, Z15
	MOVQ DI, R8
	VMOVUPS Z0, (R8)
	VMOVUPS Z1, (R8)(DX*1)
	VMOVUPS Z2, (R8)(DX*2)
	VMOVUPS Z3, (R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Z4, (R8)
	VMOVUPS Z5, (R8)(DX*1)
	VMOVUPS Z6, (R8)(DX*2)
	VMOVUPS Z7, (R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Z8, (R8)
	VMOVUPS Z9, (R8)(DX*1)
	VMOVUPS Z10, (R8)(DX*2)
	VMOVUPS Z11, (R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Z12, (R8)
	VMOVUPS Z13, (R8)(DX*1)
	VMOVUPS Z14, (R8)(DX*2)
	VMOVUPS Z15, (R8)(R9*1)
	ADDQ $64, SI
	LEAQ (R8)(DX*4), DI
	DECQ CX
	JNZ  centreLoop
centreDone:
	VPXORD X16, X16, X16
	VPXORD X17, X17, X17
	VPXORD X18, X18, X18
	VPXORD X19, X19, X19
	VPXORD X20, X20, X20
	VPXORD X21, X21, X21
	VPXORD X22, X22, X22
	VPXORD X23, X23, X23
	VPXORD X24, X24, X24
	VPXORD X25, X25, X25
	VPXORD X26, X26, X26
	VPXORD X27, X27, X27
	VPXORD X28, X28, X28
	VPXORD X29, X29, X29
	VPXORD X30, X30, X30
	VPXORD X31, X31, X31
	VZEROUPPER
	RET

// func sumRowsAVX512(acc *int32, src *int16, stride, rows, n int)
//
// acc[c] += src[r·stride/2 + c] for the rows r < rows and channels c < n
// (a multiple of 16), sixteen channels per instruction, int16 widened
// exactly; the caller keeps rows small enough that int32 cannot overflow.
TEXT ·sumRowsAVX512(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ n+32(FP), R8
	SHLQ $1, R8                 // bytes of int16 per row used
	TESTQ CX, CX
	JLE  sumDone
	TESTQ R8, R8
	JZ   sumDone

sumRow:
	XORQ AX, AX                 // int16 byte offset
	MOVQ DI, BX

sumCol:
	VPMOVSXWD (SI)(AX*1), Z0
	VPADDD    (BX), Z0, Z0
	VMOVDQU32 Z0, (BX)
	ADDQ      $64, BX
	ADDQ      $32, AX
	CMPQ      AX, R8
	JLT       sumCol
	ADDQ      DX, SI
	DECQ      CX
	JNZ       sumRow

sumDone:
	VZEROUPPER
	RET
