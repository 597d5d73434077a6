//go:build amd64 && !noasm

#include "textflag.h"

// AVX-512 kernels of the causal trailing mean for float32 and bfloat16: trailing_kernels.go's
// operations, a block of eight float64 lanes per iteration. Registers:
//	Z0	carried window sum c, broadcast
//	Z1	steady: 1/cf broadcast; warm: window counts of the eight positions
//	Z2	the block (differences, sums, means)
//	Z4…Z9	scratch
//	Z10	permutation [·, ·, 1, 1, ·, ·, 5, 5] with K1 = 0xcc (zeroing)
//	Z11	permutation [3, …, 3]; with K2 = 0xf0 (zeroing): [0, 0, 0, 0, p3, …]
//	Z12	permutation [7, …, 7]
//	Z13	warm: 8.0 broadcast
//	Z15	zero
//	Z16, Z17	bfloat16 store: exponent clamps −126 and 200

DATA permP<>+0(SB)/8, $0
DATA permP<>+8(SB)/8, $0
DATA permP<>+16(SB)/8, $1
DATA permP<>+24(SB)/8, $1
DATA permP<>+32(SB)/8, $0
DATA permP<>+40(SB)/8, $0
DATA permP<>+48(SB)/8, $5
DATA permP<>+56(SB)/8, $5
GLOBL permP<>(SB), RODATA|NOPTR, $64
DATA three64<>+0(SB)/8, $3
GLOBL three64<>(SB), RODATA|NOPTR, $8
DATA seven64<>+0(SB)/8, $7
GLOBL seven64<>(SB), RODATA|NOPTR, $8
DATA expLo<>+0(SB)/8, $-126.0
GLOBL expLo<>(SB), RODATA|NOPTR, $8
DATA expHi<>+0(SB)/8, $200.0
GLOBL expHi<>(SB), RODATA|NOPTR, $8
DATA iota8<>+0(SB)/8, $0.0
DATA iota8<>+8(SB)/8, $1.0
DATA iota8<>+16(SB)/8, $2.0
DATA iota8<>+24(SB)/8, $3.0
DATA iota8<>+32(SB)/8, $4.0
DATA iota8<>+40(SB)/8, $5.0
DATA iota8<>+48(SB)/8, $6.0
DATA iota8<>+56(SB)/8, $7.0
GLOBL iota8<>(SB), RODATA|NOPTR, $64
DATA eight8<>+0(SB)/8, $8.0
GLOBL eight8<>(SB), RODATA|NOPTR, $8

// SETUP loads the permutations, masks and small constants.
#define SETUP \
	VXORPD Z15, Z15, Z15 \
	; VMOVDQU64 permP<>(SB), Z10 \
	; VPBROADCASTQ three64<>(SB), Z11 \
	; VPBROADCASTQ seven64<>(SB), Z12 \
	; MOVL $0xcc, AX \
	; KMOVW AX, K1 \
	; MOVL $0xf0, AX \
	; KMOVW AX, K2 \
	; VBROADCASTSD expLo<>(SB), Z16 \
	; VBROADCASTSD expHi<>(SB), Z17

// SCAN8Z: Z2 = running sums from the carry Z0 in scan8's order; Z0 moves on.
#define SCAN8Z \
	VUNPCKLPD Z2, Z15, Z4 \
	; VADDPD Z4, Z2, Z2 \
	; VPERMPD.Z Z2, Z10, K1, Z4 \
	; VADDPD Z4, Z2, Z2 \
	; VPERMPD.Z Z2, Z11, K2, Z5 \
	; VPERMPD Z2, Z11, Z6 \
	; VPERMPD Z2, Z12, Z7 \
	; VADDPD Z0, Z5, Z5 \
	; VADDPD Z7, Z6, Z6 \
	; VADDPD Z5, Z2, Z2 \
	; VADDPD Z6, Z0, Z0

// LOADZ_* read eight samples at P as float64 into Z (Y: scratch).
#define LOADZ_F32(P, Z, Y) \
	VCVTPS2PD (P), Z
#define LOADZ_BF16(P, Z, Y) \
	VPMOVZXWD (P), Y \
	; VPSLLD $16, Y, Y \
	; VCVTPS2PD Y, Z

#define STOREZ_F32(P) \
	VCVTPD2PS Z2, Y2 \
	; VMOVUPS Y2, (P)

// STOREZ_BF16 rounds Z2 to bfloat16 at P: with e' = min(max(exponent, −126), 200), scale by
// 2^−e', round to 7 fraction bits, scale back (exact in float32: the top 16 bits). Inf, NaN kept.
#define STOREZ_BF16(P) \
	VGETEXPPD Z2, Z4 \
	; VMAXPD Z16, Z4, Z4 \
	; VMINPD Z17, Z4, Z4 \
	; VSUBPD Z4, Z15, Z5 \
	; VSCALEFPD Z5, Z2, Z6 \
	; VRNDSCALEPD $0x78, Z6, Z6 \
	; VSCALEFPD Z4, Z6, Z6 \
	; VCVTPD2PS Z6, Y6 \
	; VPSRLD $16, Y6, Y6 \
	; VPMOVDW Y6, X6 \
	; VMOVDQU X6, (P)

#define STEADYZ_PROLOGUE \
	MOVQ y+0(FP), DI \
	; MOVQ x+8(FP), SI \
	; MOVQ lag+16(FP), DX \
	; MOVQ n+24(FP), CX \
	; VBROADCASTSD s+32(FP), Z0 \
	; VBROADCASTSD inv+40(FP), Z1 \
	; SETUP
#define WARMZ_PROLOGUE \
	MOVQ y+0(FP), DI \
	; MOVQ x+8(FP), SI \
	; MOVQ n+16(FP), CX \
	; VBROADCASTSD s+24(FP), Z0 \
	; VBROADCASTSD c0+32(FP), Z1 \
	; VADDPD iota8<>(SB), Z1, Z1 \
	; VBROADCASTSD eight8<>(SB), Z13 \
	; SETUP

// STEADYZ: running sums of x (SI) − lag (DX) times 1/cf, stored at DI.
#define STEADYZ(LOAD, STORE, STEP) \
	STEADYZ_PROLOGUE \
	; loop: \
	LOAD(SI, Z2, Y2) \
	; LOAD(DX, Z3, Y3) \
	; VSUBPD Z3, Z2, Z2 \
	; SCAN8Z \
	; VMULPD Z1, Z2, Z2 \
	; STORE(DI) \
	; ADDQ STEP, SI \
	; ADDQ STEP, DX \
	; ADDQ STEP, DI \
	; SUBQ $8, CX \
	; JNZ loop \
	; VMOVSD X0, ret+48(FP) \
	; VZEROUPPER \
	; RET

// WARMZ: running sums of x (SI) over their window counts, stored at DI.
#define WARMZ(LOAD, STORE, STEP) \
	WARMZ_PROLOGUE \
	; loop: \
	LOAD(SI, Z2, Y2) \
	; SCAN8Z \
	; VDIVPD Z1, Z2, Z2 \
	; VADDPD Z13, Z1, Z1 \
	; STORE(DI) \
	; ADDQ STEP, SI \
	; ADDQ STEP, DI \
	; SUBQ $8, CX \
	; JNZ loop \
	; VMOVSD X0, ret+40(FP) \
	; VZEROUPPER \
	; RET

// func steadyF32AVX512(y, x, lag *float32, n int, s, inv float64) float64
TEXT ·steadyF32AVX512(SB), NOSPLIT, $0-56
	STEADYZ(LOADZ_F32, STOREZ_F32, $32)

// func warmF32AVX512(y, x *float32, n int, s, c0 float64) float64
TEXT ·warmF32AVX512(SB), NOSPLIT, $0-48
	WARMZ(LOADZ_F32, STOREZ_F32, $32)

// func steadyBF16AVX512(y, x, lag *BFloat16, n int, s, inv float64) float64
TEXT ·steadyBF16AVX512(SB), NOSPLIT, $0-56
	STEADYZ(LOADZ_BF16, STOREZ_BF16, $16)

// func warmBF16AVX512(y, x *BFloat16, n int, s, c0 float64) float64
TEXT ·warmBF16AVX512(SB), NOSPLIT, $0-48
	WARMZ(LOADZ_BF16, STOREZ_BF16, $16)
