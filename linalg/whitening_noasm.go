//go:build !amd64 || noasm

package linalg

// useCombine is false without the amd64 assembly.
var useCombine = false

func (w *Whitening) combineVec(d, src []float32, T, t0, c int) bool { return false }
