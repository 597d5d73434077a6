//go:build amd64 && !noasm

package preprocess

import "golang.org/x/sys/cpu"

// The AVX-512 kernels (kernels_amd64.s) need AVX-512 F, BW and VL, BMI2
// and POPCNT, and an OS that saves the ZMM state (x/sys/cpu checks).

// useAsm selects the vector kernels; tests switch it off to compare with
// the Go path.
var useAsm = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT

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
	convertAVX512(&dst[0], &src[0], &mean[0], sign, n)
	return true
}

// lowerMedianVec returns LowerMedian(x) without reordering x, by
// quickselect with AVX-512 three-way partitions into a and b (each at
// least len(x)+16 long). The value of a rank is the same whatever the
// algorithm, except that −0 and +0 compare equal: so it reports false,
// and the caller runs LowerMedian itself, when the median is zero (or
// NaN, which int16 input cannot give), as well as without the kernels.
func lowerMedianVec(x, a, b []float32) (float32, bool) {
	n := len(x)
	if !useAsm || n == 0 || len(a) < n+16 || len(b) < n+16 {
		return 0, false
	}
	k := (n - 1) / 2
	src := x
	var small [16]float32
	for n > 16 {
		p := median3(src[0], src[n/2], src[n-1])
		nl, ng := partitionAVX512(&a[0], &b[0], &src[0], n, p)
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
