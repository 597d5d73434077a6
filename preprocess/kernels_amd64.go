//go:build amd64 && !noasm

package preprocess

import (
	"fmt"

	"golang.org/x/sys/cpu"
)

// The AVX-512 kernels (kernels_avx512_amd64.s) need AVX-512 F, BW and VL, BMI2
// and POPCNT, the AVX2 ones AVX2 (the median's partition also POPCNT),
// and an OS that saves the vector state (x/sys/cpu checks). The AVX-512
// ones run where they can, the AVX2 ones elsewhere.

// useAsm selects the vector kernels and avx512 the AVX-512 ones over the
// AVX2 ones; tests switch them to compare every path with the Go code.
var (
	useAsm = cpu.X86.HasAVX2
	avx512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT
)

// havePOPCNT reports POPCNT, which the AVX2 partition needs.
var havePOPCNT = cpu.X86.HasPOPCNT

//go:noescape
func partitionAVX2(lo, hi, src *float32, n int, p float32) (nl, ng int)

//go:noescape
func convertAVX2(dst *float32, src *int16, mean *float32, sign float32, n int)

//go:noescape
func sumRowsAVX2(acc *int32, src *int16, stride, rows, n int)

//go:noescape
func centreAVX2(out *float32, stride int, cols *float32, C, n int, med *[blockT]float32)

//go:noescape
func hpInterleaveAVX2(e *float64, src *float32, stride, n int)

//go:noescape
func hpDeinterleaveAVX2(dst *float32, stride int, e *float64, n int, gain float64)

//go:noescape
func convertAVX512(dst *float32, src *int16, mean *float32, sign float32, n int)

//go:noescape
func partitionAVX512(lo, hi, src *float32, n int, p float32) (nl, ng int)

// convertVec does dst[i] = sign·float32(src[i]) − mean[i] for i <
// len(dst).
func convertVec(dst []float32, src []int16, mean []float32, sign float32) bool {
	n := len(dst)
	if !useAsm || n == 0 {
		return false
	}
	_, _ = src[n-1], mean[n-1]
	if avx512 {
		convertAVX512(&dst[0], &src[0], &mean[0], sign, n)
		return true
	}
	n8 := n &^ 7
	convertAVX2(&dst[0], &src[0], &mean[0], sign, n8)
	for i := n8; i < n; i++ {
		dst[i] = sign*float32(src[i]) - mean[i]
	}
	return true
}

// lowerMedianVec returns LowerMedian(x) without reordering x, by
// quickselect with vector three-way partitions into a and b (each at
// least len(x)+16 long). The value of a rank is the same whatever the
// algorithm, except that −0 and +0 compare equal: so it reports false,
// and the caller runs LowerMedian itself, when the median is zero (or
// NaN, which int16 input cannot give), as well as without the kernels.
func lowerMedianVec(x, a, b []float32) (float32, bool) {
	n := len(x)
	if !useAsm || !(avx512 || havePOPCNT) || n == 0 || len(a) < n+16 || len(b) < n+16 {
		return 0, false
	}
	k := (n - 1) / 2
	src := x
	var small [16]float32
	for n > 16 {
		p := median3(src[0], src[n/2], src[n-1])
		var nl, ng int
		if avx512 {
			nl, ng = partitionAVX512(&a[0], &b[0], &src[0], n, p)
		} else {
			nl, ng = partitionAVX2(&a[0], &b[0], &src[0], n, p)
		}
		switch {
		case k < nl:
			src, n = a[:nl], nl
		case k < n-ng:
			if p == 0 || p != p {
				return 0, false
			}
			return p, true
		default:
			k -= n - ng
			src, n = b[:ng], ng
		}
	}
	copy(small[:n], src[:n])
	v := selectRank(small[:n], k)
	if v == 0 || v != v {
		return 0, false
	}
	return v, true
}

// The vector high-pass (hpPassAVX512, hpPassAVX2) needs AVX-512 F, or
// AVX2, and an OS that saves the vector state.

// useHPAsm selects the vector high-pass; hpAVX512 picks the AVX-512
// kernel over the AVX2 one. Tests switch them to compare the paths.
var (
	useHPAsm = cpu.X86.HasAVX512F || cpu.X86.HasAVX2
	hpAVX512 = cpu.X86.HasAVX512F
)

//go:noescape
func hpPassAVX512(e *float64, n, stride int, st *hpState, c *[4]float64)

//go:noescape
func hpPassAVX2(e *float64, n, stride int, st *float64, c *[16]float64)

// hpPass runs n steps of the fused order-3 pass over the hpLanes lanes of
// e, from step i0 in direction dir (±1), continuing from the state st;
// c holds 3, p1, p2, q1. Each step, in each lane, does
//
//	d := ((v − 3·x1) + 3·x2) − x3
//	y := (d − p2·y2) − p1·y1
//	z := y − q1·z1
//
// and overwrites v with z. It panics if the steps leave e.
func hpPass(e []float64, i0, n, dir int, st *hpState, c *[4]float64) {
	if n <= 0 {
		return
	}
	last := i0 + (n-1)*dir
	if i0 < 0 || last < 0 || (max(i0, last)+1)*hpLanes > len(e) || (dir != 1 && dir != -1) {
		panic(fmt.Sprintf("preprocess: hpPass: steps %d … %d outside %d", i0, last, len(e)/hpLanes))
	}
	stride := dir * hpLanes * 8
	if hpAVX512 {
		hpPassAVX512(&e[i0*hpLanes], n, stride, st, c)
		return
	}
	var c4 [16]float64
	for i, v := range c {
		c4[4*i], c4[4*i+1], c4[4*i+2], c4[4*i+3] = v, v, v, v
	}
	hpPassAVX2(&e[i0*hpLanes], n, stride, &st[0][0], &c4)
	hpPassAVX2(&e[i0*hpLanes+8], n, stride, &st[0][8], &c4)
}

//go:noescape
func hpInterleaveAVX512(e *float64, src *float32, stride, n int)

//go:noescape
func hpDeinterleaveAVX512(dst *float32, stride int, e *float64, n int, gain float64)

// lanesIn is lanesInGo, eight steps at a time by the AVX-512 transpose
// (hpAVX512) or four by the AVX2 one.
func lanesIn(e []float64, block []float32, n, s0 int) {
	m := len(e) / hpLanes
	mv := m &^ 3
	if hpAVX512 {
		mv = m &^ 7
	}
	if mv > 0 {
		_ = block[(hpLanes-1)*n+s0+m-1]
		if hpAVX512 {
			hpInterleaveAVX512(&e[0], &block[s0], 4*n, mv)
		} else {
			hpInterleaveAVX2(&e[0], &block[s0], 4*n, mv)
		}
		e, s0 = e[mv*hpLanes:], s0+mv
		if mv == m {
			return
		}
	}
	lanesInGo(e, block, n, s0)
}

// lanesOut is lanesOutGo, eight steps at a time by the AVX-512 transpose
// (hpAVX512) or four by the AVX2 one.
func lanesOut(block []float32, n int, e []float64, g float64) {
	m := len(e) / hpLanes
	mv := m &^ 3
	if hpAVX512 {
		mv = m &^ 7
	}
	if mv > 0 {
		_ = block[(hpLanes-1)*n+m-1]
		if hpAVX512 {
			hpDeinterleaveAVX512(&block[0], 4*n, &e[0], mv, g)
		} else {
			hpDeinterleaveAVX2(&block[0], 4*n, &e[0], mv, g)
		}
		if mv == m {
			return
		}
		lanesOutGo(block[mv:], n, e[mv*hpLanes:], g)
		return
	}
	lanesOutGo(block, n, e, g)
}

//go:noescape
func centreAVX512(out *float32, stride int, cols *float32, C, n int, med *[blockT]float32)

// centreVec writes out[i·T+k] = cols[k·C+i] − med[k] for the 16 columns
// k and the channels i below C rounded down to a multiple of 16 (of 8 with
// AVX2), and returns that count (0 without the kernels).
func centreVec(out []float32, T int, cols []float32, C int, med *[blockT]float32) int {
	n := C &^ 15
	if !avx512 {
		n = C &^ 7
	}
	if !useAsm || n == 0 {
		return 0
	}
	_ = out[(n-1)*T+blockT-1]
	_ = cols[(blockT-1)*C+n-1]
	if avx512 {
		centreAVX512(&out[0], 4*T, &cols[0], C, n, med)
	} else {
		centreAVX2(&out[0], 4*T, &cols[0], C, n, med)
	}
	return n
}

//go:noescape
func sumRowsAVX512(acc *int32, src *int16, stride, rows, n int)

// sumRowsVec adds to acc[c], for the channels c below len(acc) rounded
// down to a multiple of 16, the int16 values src[r·cf+c] of rows r <
// rows, and returns that channel count (0 without the kernels). Each call
// takes at most 32768 rows, so that the int32 sums are exact.
func sumRowsVec(acc []int32, src []int16, cf, rows int) int {
	n := min(len(acc), cf) &^ 15
	if !useAsm || n == 0 || rows <= 0 || rows > 1<<15 {
		return 0
	}
	_ = src[(rows-1)*cf+n-1]
	if avx512 {
		sumRowsAVX512(&acc[0], &src[0], 2*cf, rows, n)
	} else {
		sumRowsAVX2(&acc[0], &src[0], 2*cf, rows, n)
	}
	return n
}
