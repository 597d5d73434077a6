//go:build amd64 && !noasm

#include "textflag.h"

// AVX2 kernels of the causal trailing mean, in trailing_kernels.go's operations. Registers:
//	Y0	carried window sum c, broadcast to all four lanes
//	Y1	steady: 1/cf broadcast; warm: window counts of positions 0…3
//	Y2, Y3	positions 0…3 and 4…7 of the block (differences, sums, means)
//	Y4…Y10	scratch
//	Y13	warm: 4.0 broadcast; Y14 warm: 8.0 broadcast
//	Y15	zero

// bfloat16 and binary16 store constants (eight int32 lanes each).
DATA absMask<>+0(SB)/8, $0x7fffffff7fffffff
DATA absMask<>+8(SB)/8, $0x7fffffff7fffffff
DATA absMask<>+16(SB)/8, $0x7fffffff7fffffff
DATA absMask<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL absMask<>(SB), RODATA|NOPTR, $32
DATA one32<>+0(SB)/8, $0x0000000100000001
DATA one32<>+8(SB)/8, $0x0000000100000001
DATA one32<>+16(SB)/8, $0x0000000100000001
DATA one32<>+24(SB)/8, $0x0000000100000001
GLOBL one32<>(SB), RODATA|NOPTR, $32
DATA inf32<>+0(SB)/8, $0x7f8000007f800000
DATA inf32<>+8(SB)/8, $0x7f8000007f800000
DATA inf32<>+16(SB)/8, $0x7f8000007f800000
DATA inf32<>+24(SB)/8, $0x7f8000007f800000
GLOBL inf32<>(SB), RODATA|NOPTR, $32
DATA round7fff<>+0(SB)/8, $0x00007fff00007fff
DATA round7fff<>+8(SB)/8, $0x00007fff00007fff
DATA round7fff<>+16(SB)/8, $0x00007fff00007fff
DATA round7fff<>+24(SB)/8, $0x00007fff00007fff
GLOBL round7fff<>(SB), RODATA|NOPTR, $32
DATA quiet40<>+0(SB)/8, $0x0000004000000040
DATA quiet40<>+8(SB)/8, $0x0000004000000040
DATA quiet40<>+16(SB)/8, $0x0000004000000040
DATA quiet40<>+24(SB)/8, $0x0000004000000040
GLOBL quiet40<>(SB), RODATA|NOPTR, $32

// Truncation of a float64 to float32 precision and its sticky bit.
DATA trunc29<>+0(SB)/8, $0xffffffffe0000000
DATA trunc29<>+8(SB)/8, $0xffffffffe0000000
DATA trunc29<>+16(SB)/8, $0xffffffffe0000000
DATA trunc29<>+24(SB)/8, $0xffffffffe0000000
GLOBL trunc29<>(SB), RODATA|NOPTR, $32
DATA sticky29<>+0(SB)/8, $0x0000000020000000
DATA sticky29<>+8(SB)/8, $0x0000000020000000
DATA sticky29<>+16(SB)/8, $0x0000000020000000
DATA sticky29<>+24(SB)/8, $0x0000000020000000
GLOBL sticky29<>(SB), RODATA|NOPTR, $32

// Window-count offsets 0, 1, 2, 3 and the steps 4 and 8 (float64).
DATA iota4<>+0(SB)/8, $0.0
DATA iota4<>+8(SB)/8, $1.0
DATA iota4<>+16(SB)/8, $2.0
DATA iota4<>+24(SB)/8, $3.0
GLOBL iota4<>(SB), RODATA|NOPTR, $32
DATA four<>+0(SB)/8, $4.0
GLOBL four<>(SB), RODATA|NOPTR, $8
DATA eight<>+0(SB)/8, $8.0
GLOBL eight<>(SB), RODATA|NOPTR, $8

// SCAN4: V = [d0, d0+d1, d2+(d0+d1), (d2+d3)+(d0+d1)], T scratch.
#define SCAN4(V, T) \
	VUNPCKLPD V, Y15, T \
	; VADDPD T, V, V \
	; VPERMPD $0x55, V, T \
	; VBLENDPD $3, Y15, T, T \
	; VADDPD T, V, V

// SCAN8: running sums from the carry c: Y2 = c + p, Y3 = (c + p3) + q, Y0 = c + (p3 + q3).
#define SCAN8 \
	SCAN4(Y2, Y4) \
	; SCAN4(Y3, Y5) \
	; VPERMPD $0xff, Y2, Y6 \
	; VPERMPD $0xff, Y3, Y7 \
	; VADDPD Y0, Y6, Y8 \
	; VADDPD Y7, Y6, Y6 \
	; VADDPD Y0, Y2, Y2 \
	; VADDPD Y8, Y3, Y3 \
	; VADDPD Y6, Y0, Y0

// LOAD_* read eight samples at P as float64 into A (0…3) and B (4…7).
#define LOAD_F32(P, A, B) \
	VCVTPS2PD (P), A \
	; VCVTPS2PD 16(P), B
#define LOAD_BF16(P, A, B) \
	VPMOVZXWD (P), X9 \
	; VPMOVZXWD 8(P), X10 \
	; VPSLLD $16, X9, X9 \
	; VPSLLD $16, X10, X10 \
	; VCVTPS2PD X9, A \
	; VCVTPS2PD X10, B
#define LOAD_F16(P, A, B) \
	VCVTPH2PS (P), X9 \
	; VCVTPH2PS 8(P), X10 \
	; VCVTPS2PD X9, A \
	; VCVTPS2PD X10, B

// STORE_F32 rounds the means Y2, Y3 to float32 (nearest even) at P.
#define STORE_F32(P) \
	VCVTPD2PSY Y2, X2 \
	; VCVTPD2PSY Y3, X3 \
	; VMOVUPS X2, (P) \
	; VMOVUPS X3, 16(P)

// ODD8: Y4 = Y2, Y3 rounded to odd float32: truncate the 29 bits float32 lacks,
// set the sticky bit if inexact, convert (exact unless |v| < 2⁻¹²⁶; NaN kept).
#define ODD8 \
	VANDPD trunc29<>(SB), Y2, Y6 \
	; VCMPPD $12, Y6, Y2, Y8 \
	; VANDPD sticky29<>(SB), Y8, Y8 \
	; VORPD Y8, Y6, Y6 \
	; VCVTPD2PSY Y6, X4 \
	; VANDPD trunc29<>(SB), Y3, Y7 \
	; VCMPPD $12, Y7, Y3, Y9 \
	; VANDPD sticky29<>(SB), Y9, Y9 \
	; VORPD Y9, Y7, Y7 \
	; VCVTPD2PSY Y7, X5 \
	; VINSERTF128 $1, X5, Y4, Y4

// STORE_BF16: round to odd, then to nearest even bfloat16 (NaN made quiet).
#define STORE_BF16(P) \
	ODD8 \
	; VPAND absMask<>(SB), Y4, Y9 \
	; VPCMPGTD inf32<>(SB), Y9, Y9 \
	; VPSRLD $16, Y4, Y8 \
	; VPAND one32<>(SB), Y8, Y10 \
	; VPADDD Y10, Y4, Y10 \
	; VPADDD round7fff<>(SB), Y10, Y10 \
	; VPSRLD $16, Y10, Y10 \
	; VPOR quiet40<>(SB), Y8, Y8 \
	; VPBLENDVB Y9, Y8, Y10, Y10 \
	; VEXTRACTI128 $1, Y10, X8 \
	; VPACKUSDW X8, X10, X10 \
	; VMOVDQU X10, (P)

// STORE_F16: round to odd, then VCVTPS2PH to nearest even.
#define STORE_F16(P) \
	ODD8 \
	; VCVTPS2PH $0, Y4, X4 \
	; VMOVDQU X4, (P)

// STEADY_PROLOGUE and WARM_PROLOGUE load the arguments.
#define STEADY_PROLOGUE \
	MOVQ y+0(FP), DI \
	; MOVQ x+8(FP), SI \
	; MOVQ lag+16(FP), DX \
	; MOVQ n+24(FP), CX \
	; VBROADCASTSD s+32(FP), Y0 \
	; VBROADCASTSD inv+40(FP), Y1 \
	; VXORPD Y15, Y15, Y15
#define WARM_PROLOGUE \
	MOVQ y+0(FP), DI \
	; MOVQ x+8(FP), SI \
	; MOVQ n+16(FP), CX \
	; VBROADCASTSD s+24(FP), Y0 \
	; VBROADCASTSD c0+32(FP), Y1 \
	; VADDPD iota4<>(SB), Y1, Y1 \
	; VBROADCASTSD four<>(SB), Y13 \
	; VBROADCASTSD eight<>(SB), Y14 \
	; VXORPD Y15, Y15, Y15

// WARM_DIVIDE divides Y2, Y3 by their window counts and moves them on by eight.
#define WARM_DIVIDE \
	VADDPD Y13, Y1, Y9 \
	; VDIVPD Y1, Y2, Y2 \
	; VDIVPD Y9, Y3, Y3 \
	; VADDPD Y14, Y1, Y1

// STEADY: running sums of x (SI) − lag (DX) times 1/cf, stored at DI; STEP bytes per block.
#define STEADY(LOAD, STORE, STEP) \
	STEADY_PROLOGUE \
	; loop: \
	LOAD(SI, Y2, Y3) \
	; LOAD(DX, Y4, Y5) \
	; VSUBPD Y4, Y2, Y2 \
	; VSUBPD Y5, Y3, Y3 \
	; SCAN8 \
	; VMULPD Y1, Y2, Y2 \
	; VMULPD Y1, Y3, Y3 \
	; STORE(DI) \
	; ADDQ STEP, SI \
	; ADDQ STEP, DX \
	; ADDQ STEP, DI \
	; SUBQ $8, CX \
	; JNZ loop \
	; VMOVSD X0, ret+48(FP) \
	; VZEROUPPER \
	; RET

// WARM: running sums of x (SI) over their window counts, stored at DI.
#define WARM(LOAD, STORE, STEP) \
	WARM_PROLOGUE \
	; loop: \
	LOAD(SI, Y2, Y3) \
	; SCAN8 \
	; WARM_DIVIDE \
	; STORE(DI) \
	; ADDQ STEP, SI \
	; ADDQ STEP, DI \
	; SUBQ $8, CX \
	; JNZ loop \
	; VMOVSD X0, ret+40(FP) \
	; VZEROUPPER \
	; RET

// func steadyF32AVX2(y, x, lag *float32, n int, s, inv float64) float64
TEXT ·steadyF32AVX2(SB), NOSPLIT, $0-56
	STEADY(LOAD_F32, STORE_F32, $32)

// func warmF32AVX2(y, x *float32, n int, s, c0 float64) float64
TEXT ·warmF32AVX2(SB), NOSPLIT, $0-48
	WARM(LOAD_F32, STORE_F32, $32)

// func steadyBF16AVX2(y, x, lag *BFloat16, n int, s, inv float64) float64
TEXT ·steadyBF16AVX2(SB), NOSPLIT, $0-56
	STEADY(LOAD_BF16, STORE_BF16, $16)

// func warmBF16AVX2(y, x *BFloat16, n int, s, c0 float64) float64
TEXT ·warmBF16AVX2(SB), NOSPLIT, $0-48
	WARM(LOAD_BF16, STORE_BF16, $16)

// func steadyF16AVX2(y, x, lag *Float16, n int, s, inv float64) float64
TEXT ·steadyF16AVX2(SB), NOSPLIT, $0-56
	STEADY(LOAD_F16, STORE_F16, $16)

// func warmF16AVX2(y, x *Float16, n int, s, c0 float64) float64
TEXT ·warmF16AVX2(SB), NOSPLIT, $0-48
	WARM(LOAD_F16, STORE_F16, $16)
