//go:build amd64 && !noasm

#include "textflag.h"

// func dotsTAVX512(acc, x, tr *float64, d, ld, m int)
//
// acc[b] = Σ_{t<d} x[t]·tr[t·ld+b] for b < m (m a multiple of 8, d ≥ 1),
// each sum from 0 in the order t = 0 … d−1, each product rounded and then
// added (VMULPD, VADDPD; no fused multiply-add): the sequence of IEEE
// operations of dotsTGo. Eight vectors of eight sums at once (eight
// independent addition chains hide the adder's latency), then four, then
// single vectors.
TEXT ·dotsTAVX512(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ tr+16(FP), R8
	MOVQ d+24(FP), R10
	MOVQ ld+32(FP), R11
	MOVQ m+40(FP), CX
	SHLQ $3, R11                 // ld in bytes
	XORQ AX, AX                  // b

dots64:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $64
	JLT  dots32
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z16, Z16, Z16
	VPXORQ Z17, Z17, Z17
	VPXORQ Z18, Z18, Z18
	VPXORQ Z19, Z19, Z19
	LEAQ   (R8)(AX*8), R13       // &tr[b]
	XORQ   BX, BX                // t

dots64T:
	VBROADCASTSD (SI)(BX*8), Z4
	VMULPD       (R13), Z4, Z5
	VMULPD       64(R13), Z4, Z6
	VMULPD       128(R13), Z4, Z7
	VMULPD       192(R13), Z4, Z8
	VMULPD       256(R13), Z4, Z20
	VMULPD       320(R13), Z4, Z21
	VMULPD       384(R13), Z4, Z22
	VMULPD       448(R13), Z4, Z23
	VADDPD       Z5, Z0, Z0
	VADDPD       Z6, Z1, Z1
	VADDPD       Z7, Z2, Z2
	VADDPD       Z8, Z3, Z3
	VADDPD       Z20, Z16, Z16
	VADDPD       Z21, Z17, Z17
	VADDPD       Z22, Z18, Z18
	VADDPD       Z23, Z19, Z19
	ADDQ         R11, R13
	INCQ         BX
	CMPQ         BX, R10
	JLT          dots64T
	VMOVUPD      Z0, (DI)(AX*8)
	VMOVUPD      Z1, 64(DI)(AX*8)
	VMOVUPD      Z2, 128(DI)(AX*8)
	VMOVUPD      Z3, 192(DI)(AX*8)
	VMOVUPD      Z16, 256(DI)(AX*8)
	VMOVUPD      Z17, 320(DI)(AX*8)
	VMOVUPD      Z18, 384(DI)(AX*8)
	VMOVUPD      Z19, 448(DI)(AX*8)
	ADDQ         $64, AX
	JMP          dots64

dots32:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $32
	JLT  dots8
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	LEAQ   (R8)(AX*8), R13       // &tr[b]
	XORQ   BX, BX                // t

dots32T:
	VBROADCASTSD (SI)(BX*8), Z4
	VMULPD       (R13), Z4, Z5
	VADDPD       Z5, Z0, Z0
	VMULPD       64(R13), Z4, Z6
	VADDPD       Z6, Z1, Z1
	VMULPD       128(R13), Z4, Z7
	VADDPD       Z7, Z2, Z2
	VMULPD       192(R13), Z4, Z8
	VADDPD       Z8, Z3, Z3
	ADDQ         R11, R13
	INCQ         BX
	CMPQ         BX, R10
	JLT          dots32T
	VMOVUPD      Z0, (DI)(AX*8)
	VMOVUPD      Z1, 64(DI)(AX*8)
	VMOVUPD      Z2, 128(DI)(AX*8)
	VMOVUPD      Z3, 192(DI)(AX*8)
	ADDQ         $32, AX
	JMP          dots32

dots8:
	CMPQ AX, CX
	JGE  done
	VPXORQ Z0, Z0, Z0
	LEAQ   (R8)(AX*8), R13
	XORQ   BX, BX

dots8T:
	VBROADCASTSD (SI)(BX*8), Z4
	VMULPD       (R13), Z4, Z5
	VADDPD       Z5, Z0, Z0
	ADDQ         R11, R13
	INCQ         BX
	CMPQ         BX, R10
	JLT          dots8T
	VMOVUPD      Z0, (DI)(AX*8)
	ADDQ         $8, AX
	JMP          dots8

done:
	VZEROUPPER
	RET

// func dots2TAVX512(acc0, acc1, x0, x1, tr *float64, d, ld, m int)
//
// dotsTAVX512 for two rows x0 and x1 against the same tr at once, each tr
// vector loaded once for both: acc0[b] = Σ_t x0[t]·tr[t·ld+b] and acc1[b]
// = Σ_t x1[t]·tr[t·ld+b] for b < m, each sum in order as in dotsTGo. Four
// vectors of eight sums per row at once, then single vectors.
TEXT ·dots2TAVX512(SB), NOSPLIT, $0-64
	MOVQ acc0+0(FP), DI
	MOVQ acc1+8(FP), R9
	MOVQ x0+16(FP), SI
	MOVQ x1+24(FP), R12
	MOVQ tr+32(FP), R8
	MOVQ d+40(FP), R10
	MOVQ ld+48(FP), R11
	MOVQ m+56(FP), CX
	SHLQ $3, R11
	XORQ AX, AX

pair32:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $32
	JLT  pair8
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z16, Z16, Z16
	VPXORQ Z17, Z17, Z17
	VPXORQ Z18, Z18, Z18
	VPXORQ Z19, Z19, Z19
	LEAQ   (R8)(AX*8), R13
	XORQ   BX, BX

pair32T:
	VBROADCASTSD (SI)(BX*8), Z4
	VBROADCASTSD (R12)(BX*8), Z9
	VMOVUPD      (R13), Z10
	VMOVUPD      64(R13), Z11
	VMOVUPD      128(R13), Z12
	VMOVUPD      192(R13), Z13
	VMULPD       Z10, Z4, Z5
	VMULPD       Z11, Z4, Z6
	VMULPD       Z12, Z4, Z7
	VMULPD       Z13, Z4, Z8
	VMULPD       Z10, Z9, Z20
	VMULPD       Z11, Z9, Z21
	VMULPD       Z12, Z9, Z22
	VMULPD       Z13, Z9, Z23
	VADDPD       Z5, Z0, Z0
	VADDPD       Z6, Z1, Z1
	VADDPD       Z7, Z2, Z2
	VADDPD       Z8, Z3, Z3
	VADDPD       Z20, Z16, Z16
	VADDPD       Z21, Z17, Z17
	VADDPD       Z22, Z18, Z18
	VADDPD       Z23, Z19, Z19
	ADDQ         R11, R13
	INCQ         BX
	CMPQ         BX, R10
	JLT          pair32T
	VMOVUPD      Z0, (DI)(AX*8)
	VMOVUPD      Z1, 64(DI)(AX*8)
	VMOVUPD      Z2, 128(DI)(AX*8)
	VMOVUPD      Z3, 192(DI)(AX*8)
	VMOVUPD      Z16, (R9)(AX*8)
	VMOVUPD      Z17, 64(R9)(AX*8)
	VMOVUPD      Z18, 128(R9)(AX*8)
	VMOVUPD      Z19, 192(R9)(AX*8)
	ADDQ         $32, AX
	JMP          pair32

pair8:
	CMPQ AX, CX
	JGE  pairDone
	VPXORQ Z0, Z0, Z0
	VPXORQ Z16, Z16, Z16
	LEAQ   (R8)(AX*8), R13
	XORQ   BX, BX

pair8T:
	VBROADCASTSD (SI)(BX*8), Z4
	VBROADCASTSD (R12)(BX*8), Z9
	VMOVUPD      (R13), Z10
	VMULPD       Z10, Z4, Z5
	VMULPD       Z10, Z9, Z20
	VADDPD       Z5, Z0, Z0
	VADDPD       Z20, Z16, Z16
	ADDQ         R11, R13
	INCQ         BX
	CMPQ         BX, R10
	JLT          pair8T
	VMOVUPD      Z0, (DI)(AX*8)
	VMOVUPD      Z16, (R9)(AX*8)
	ADDQ         $8, AX
	JMP          pair8

pairDone:
	VZEROUPPER
	RET

// func termsAccAVX512(blk, acc, vq *float64, e float64, n int)
//
// blk[q] += max((2·acc[q] − vq[q]) − e, 0) for q < n (a multiple of 8):
// the term as termsAccGo computes it (2·acc exact, then the two
// subtractions in order), VMAXPD with the zero as its second source so
// that a NaN term gives 0, and blk + 0 = blk since blk is never −0.
TEXT ·termsAccAVX512(SB), NOSPLIT, $0-40
	MOVQ         blk+0(FP), DI
	MOVQ         acc+8(FP), SI
	MOVQ         vq+16(FP), DX
	VBROADCASTSD e+24(FP), Z0
	MOVQ         n+32(FP), CX
	VPXORQ       Z1, Z1, Z1
	XORQ         AX, AX

terms8:
	CMPQ    AX, CX
	JGE     termsDone
	VMOVUPD (SI)(AX*8), Z2
	VADDPD  Z2, Z2, Z2           // 2·acc
	VSUBPD  (DX)(AX*8), Z2, Z2   // − vq
	VSUBPD  Z0, Z2, Z2           // − e
	VMAXPD  Z1, Z2, Z2           // Z2 > 0 ? Z2 : 0 (NaN: 0)
	VADDPD  (DI)(AX*8), Z2, Z2   // + blk
	VMOVUPD Z2, (DI)(AX*8)
	ADDQ    $8, AX
	JMP     terms8

termsDone:
	VZEROUPPER
	RET

// func dots4TAVX512(acc *[4]*float64, x *[4]*float64, tr *float64, d, ld, m int)
//
// dotsTAVX512 for four rows x[0…3] against the same tr at once, each tr
// vector loaded once for all four (half the loads of the two-row kernel
// per product, so that a tr larger than L1 streams from L2 within its
// bandwidth): acc[k][b] = Σ_t x[k][t]·tr[t·ld+b] for b < m, each sum from 0
// in the order t = 0 … d−1, each product rounded and then added. Four
// vectors of eight sums per row at once, then single vectors.
TEXT ·dots4TAVX512(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), AX
	MOVQ 0(AX), DI               // acc[0]
	MOVQ 8(AX), R9               // acc[1]
	MOVQ 16(AX), R14             // acc[2]
	MOVQ 24(AX), R15             // acc[3]
	MOVQ x+8(FP), AX
	MOVQ 0(AX), SI               // x[0]
	MOVQ 8(AX), R12              // x[1]
	MOVQ 16(AX), R10             // x[2]
	MOVQ 24(AX), DX              // x[3]
	MOVQ tr+16(FP), R8
	MOVQ ld+32(FP), R11
	MOVQ m+40(FP), CX
	SHLQ $3, R11                 // ld in bytes
	XORQ AX, AX                  // b

quad32:
	MOVQ   CX, BX
	SUBQ   AX, BX
	CMPQ   BX, $32
	JLT    quad8
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z16, Z16, Z16
	VPXORQ Z17, Z17, Z17
	VPXORQ Z18, Z18, Z18
	VPXORQ Z19, Z19, Z19
	VPXORQ Z20, Z20, Z20
	VPXORQ Z21, Z21, Z21
	VPXORQ Z22, Z22, Z22
	VPXORQ Z23, Z23, Z23
	VPXORQ Z24, Z24, Z24
	VPXORQ Z25, Z25, Z25
	VPXORQ Z26, Z26, Z26
	VPXORQ Z27, Z27, Z27
	LEAQ   (R8)(AX*8), R13       // &tr[b]
	XORQ   BX, BX                // t

quad32T:
	VMOVUPD      (R13), Z10
	VMOVUPD      64(R13), Z11
	VMOVUPD      128(R13), Z12
	VMOVUPD      192(R13), Z13
	VBROADCASTSD (SI)(BX*8), Z4
	VBROADCASTSD (R12)(BX*8), Z5
	VMULPD       Z10, Z4, Z8
	VMULPD       Z11, Z4, Z9
	VMULPD       Z12, Z4, Z14
	VMULPD       Z13, Z4, Z15
	VMULPD       Z10, Z5, Z28
	VMULPD       Z11, Z5, Z29
	VMULPD       Z12, Z5, Z30
	VMULPD       Z13, Z5, Z31
	VADDPD       Z8, Z0, Z0
	VADDPD       Z9, Z1, Z1
	VADDPD       Z14, Z2, Z2
	VADDPD       Z15, Z3, Z3
	VADDPD       Z28, Z16, Z16
	VADDPD       Z29, Z17, Z17
	VADDPD       Z30, Z18, Z18
	VADDPD       Z31, Z19, Z19
	VBROADCASTSD (R10)(BX*8), Z6
	VBROADCASTSD (DX)(BX*8), Z7
	VMULPD       Z10, Z6, Z8
	VMULPD       Z11, Z6, Z9
	VMULPD       Z12, Z6, Z14
	VMULPD       Z13, Z6, Z15
	VMULPD       Z10, Z7, Z28
	VMULPD       Z11, Z7, Z29
	VMULPD       Z12, Z7, Z30
	VMULPD       Z13, Z7, Z31
	VADDPD       Z8, Z20, Z20
	VADDPD       Z9, Z21, Z21
	VADDPD       Z14, Z22, Z22
	VADDPD       Z15, Z23, Z23
	VADDPD       Z28, Z24, Z24
	VADDPD       Z29, Z25, Z25
	VADDPD       Z30, Z26, Z26
	VADDPD       Z31, Z27, Z27
	ADDQ         R11, R13
	INCQ         BX
	CMPQ         BX, d+24(FP)
	JLT          quad32T
	VMOVUPD      Z0, (DI)(AX*8)
	VMOVUPD      Z1, 64(DI)(AX*8)
	VMOVUPD      Z2, 128(DI)(AX*8)
	VMOVUPD      Z3, 192(DI)(AX*8)
	VMOVUPD      Z16, (R9)(AX*8)
	VMOVUPD      Z17, 64(R9)(AX*8)
	VMOVUPD      Z18, 128(R9)(AX*8)
	VMOVUPD      Z19, 192(R9)(AX*8)
	VMOVUPD      Z20, (R14)(AX*8)
	VMOVUPD      Z21, 64(R14)(AX*8)
	VMOVUPD      Z22, 128(R14)(AX*8)
	VMOVUPD      Z23, 192(R14)(AX*8)
	VMOVUPD      Z24, (R15)(AX*8)
	VMOVUPD      Z25, 64(R15)(AX*8)
	VMOVUPD      Z26, 128(R15)(AX*8)
	VMOVUPD      Z27, 192(R15)(AX*8)
	ADDQ         $32, AX
	JMP          quad32

quad8:
	CMPQ   AX, CX
	JGE    quadDone
	VPXORQ Z0, Z0, Z0
	VPXORQ Z16, Z16, Z16
	VPXORQ Z20, Z20, Z20
	VPXORQ Z24, Z24, Z24
	LEAQ   (R8)(AX*8), R13
	XORQ   BX, BX

quad8T:
	VMOVUPD      (R13), Z10
	VBROADCASTSD (SI)(BX*8), Z4
	VBROADCASTSD (R12)(BX*8), Z5
	VBROADCASTSD (R10)(BX*8), Z6
	VBROADCASTSD (DX)(BX*8), Z7
	VMULPD       Z10, Z4, Z8
	VMULPD       Z10, Z5, Z9
	VMULPD       Z10, Z6, Z14
	VMULPD       Z10, Z7, Z15
	VADDPD       Z8, Z0, Z0
	VADDPD       Z9, Z16, Z16
	VADDPD       Z14, Z20, Z20
	VADDPD       Z15, Z24, Z24
	ADDQ         R11, R13
	INCQ         BX
	CMPQ         BX, d+24(FP)
	JLT          quad8T
	VMOVUPD      Z0, (DI)(AX*8)
	VMOVUPD      Z16, (R9)(AX*8)
	VMOVUPD      Z20, (R14)(AX*8)
	VMOVUPD      Z24, (R15)(AX*8)
	ADDQ         $8, AX
	JMP          quad8

quadDone:
	VZEROUPPER
	RET

// func blockTermsAVX512(row, e *float64, vq float64, n int) float64
//
// Σ_i max((2·row[i] − vq) − e[i], 0) for i < n (a multiple of 8), summed in
// order from 0: the terms eight at a time (2·row exact, then the two
// subtractions in order, as blockTermsGo), and where any of the eight is
// > 0 (ordered: a NaN term is not) those lanes are added one by one in
// lane order, so the sum is blockTermsGo's bit for bit. Most terms of a
// k-means++ round are ≤ 0, so most vectors add nothing.
TEXT ·blockTermsAVX512(SB), NOSPLIT, $64-40
	MOVQ         row+0(FP), SI
	MOVQ         e+8(FP), DX
	VBROADCASTSD vq+16(FP), Z0
	MOVQ         n+24(FP), CX
	VPXORQ       Z1, Z1, Z1
	VXORPD       X3, X3, X3      // the sum
	XORQ         AX, AX

bt8:
	CMPQ    AX, CX
	JGE     btDone
	VMOVUPD (SI)(AX*8), Z2
	VADDPD  Z2, Z2, Z2           // 2·row
	VSUBPD  Z0, Z2, Z2           // − vq
	VSUBPD  (DX)(AX*8), Z2, Z2   // − e
	VCMPPD  $0x1e, Z1, Z2, K1    // term > 0 (GT_OQ)
	KMOVW   K1, BX
	ADDQ    $8, AX
	TESTQ   BX, BX
	JZ      bt8
	VMOVUPD Z2, (SP)

btLanes:
	BSFQ    BX, R8
	VADDSD  (SP)(R8*8), X3, X3
	LEAQ    -1(BX), R9
	ANDQ    R9, BX
	JNZ     btLanes
	JMP     bt8

btDone:
	VMOVSD  X3, ret+32(FP)
	VZEROUPPER
	RET
