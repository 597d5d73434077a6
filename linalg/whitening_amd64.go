//go:build amd64 && !noasm

package linalg

import "golang.org/x/sys/cpu"

// useCombine selects the vector kernels of Whitening.Apply
// (whitening_amd64.s) and combine512 the AVX-512 one over the AVX2 one;
// tests switch them to compare every path with the Go code.
var (
	useCombine = cpu.X86.HasAVX2
	combine512 = cpu.X86.HasAVX512F && cpu.X86.HasBMI2
)

//go:noescape
func combineAVX512(d, src *float32, index *int32, val *float32, K, T, t0, L int)

//go:noescape
func combineAVX2(d, src *float32, index *int32, val *float32, K, T, t0, L int)

// combineVec computes output row c over samples [t0, t0+len(d)) as
// applyRow does, with the vector kernel; false if it cannot.
func (w *Whitening) combineVec(d, src []float32, T, t0, c int) bool {
	L := len(d)
	if !useCombine || L == 0 || w.K == 0 {
		return false
	}
	idx, val := w.Index[c*w.K:(c+1)*w.K], w.Value[c*w.K:(c+1)*w.K]
	for _, r := range idx {
		if o := int(r)*T + t0; o < 0 || o+L > len(src) {
			panic("linalg: Whitening.Apply: index out of range")
		}
	}
	if combine512 {
		combineAVX512(&d[0], &src[0], &idx[0], &val[0], w.K, T, t0, L)
	} else {
		combineAVX2(&d[0], &src[0], &idx[0], &val[0], w.K, T, t0, L)
	}
	return true
}
