//go:build amd64 && !noasm

#include "textflag.h"

// func scoreAVX2(row *float32, s *float64, su *int32, n int, inv float64, u int32)
//
// For t < n (a multiple of 4): v = float64(row[t]); where v > 0 and
// sc = (v·v)·inv > s[t] (ordered comparisons: NaN never wins), s[t] = sc
// and su[t] = u. The IEEE operations of scoreRange's loop, four columns at a
// time.
TEXT ·scoreAVX2(SB), NOSPLIT, $0-44
	MOVQ         row+0(FP), SI
	MOVQ         s+8(FP), DI
	MOVQ         su+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSD inv+32(FP), Y0
	MOVL         u+40(FP), DX
	VMOVD        DX, X7
	VPBROADCASTD X7, X7
	VXORPD       Y6, Y6, Y6      // zero
	XORQ         AX, AX

loop:
	CMPQ       AX, CX
	JGE        done
	VCVTPS2PD  (SI)(AX*4), Y1     // v
	VCMPPD     $0x1e, Y6, Y1, Y4  // v > 0 (GT_OQ)
	VMULPD     Y1, Y1, Y2         // v·v
	VMULPD     Y0, Y2, Y2         // (v·v)·inv
	VMOVUPD    (DI)(AX*8), Y3     // s
	VCMPPD     $0x1e, Y3, Y2, Y5  // sc > s (GT_OQ)
	VANDPD     Y4, Y5, Y5         // both
	VBLENDVPD  Y5, Y2, Y3, Y3     // s = mask ? sc : s
	VMOVUPD    Y3, (DI)(AX*8)
	// The four 64-bit masks as 32-bit lanes: the low dwords of each.
	VEXTRACTF128 $1, Y5, X4
	VSHUFPS      $0x88, X4, X5, X5
	VMOVDQU      (R8)(AX*4), X3
	VBLENDVPS    X5, X7, X3, X3   // su = mask ? u : su
	VMOVDQU      X3, (R8)(AX*4)
	ADDQ         $4, AX
	JMP          loop

done:
	VZEROUPPER
	RET

// func scoreAVX512(row *float32, s *float64, su *int32, n int, inv float64, u int32)
//
// scoreAVX2 eight columns at a time (n a multiple of 8), the two
// comparisons as masks and s and su written through them.
TEXT ·scoreAVX512(SB), NOSPLIT, $0-44
	MOVQ         row+0(FP), SI
	MOVQ         s+8(FP), DI
	MOVQ         su+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSD inv+32(FP), Z0
	MOVL         u+40(FP), DX
	VPBROADCASTD DX, Y7
	VXORPD       Z6, Z6, Z6      // zero
	XORQ         AX, AX

loop512:
	CMPQ      AX, CX
	JGE       done512
	VCVTPS2PD (SI)(AX*4), Z1       // v
	VCMPPD    $0x1e, Z6, Z1, K1    // v > 0 (GT_OQ)
	VMULPD    Z1, Z1, Z2           // v·v
	VMULPD    Z0, Z2, Z2           // (v·v)·inv
	VCMPPD    $0x1e, (DI)(AX*8), Z2, K1, K2 // v > 0 and sc > s (GT_OQ)
	VMOVUPD   Z2, K2, (DI)(AX*8)   // s = sc where both
	VMOVDQU32 Y7, K2, (R8)(AX*4)   // su = u there
	ADDQ      $8, AX
	JMP       loop512

done512:
	VZEROUPPER
	RET
