//go:build !amd64 || noasm

package preprocess

// Without the amd64 assembly only the Go code exists.

// useAsm selects the vector kernels; always false here.
var useAsm = false

func convertVec(dst []float32, src []int16, mean []float32, sign float32) bool { return false }

func lowerMedianVec(x, a, b []float32) (float32, bool) { return 0, false }
