//go:build !amd64 || noasm

package ops

// Without the amd64 assembly the "assembly" kernels are the Go ones.

const hasAsm = false

var (
	kernelF32Asm  = kernelF32Go
	kernelF16Asm  = kernelF16Go
	kernelBF16Asm = kernelBF16Go
)

// useAsm selects the assembly kernels in CausalTrailingMean.
var useAsm = false
