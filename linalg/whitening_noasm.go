//go:build !amd64 || noasm

package linalg

// useCombine and combine512 are false without the amd64 assembly.
var useCombine, combine512 = false, false

func (w *Whitening) combineVec(d, src []float32, T, t0, c int) bool { return false }
