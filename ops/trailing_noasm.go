//go:build !amd64 || noasm

package ops

// bestISA is the best kernel set this CPU supports.
const bestISA = isaGo

var (
	kernelsF32  = [...]*kernel[float32]{isaGo: &kernelF32Go, isaAVX2: nil, isaAVX512: nil}
	kernelsF16  = [...]*kernel[Float16]{isaGo: &kernelF16Go, isaAVX2: nil, isaAVX512: nil}
	kernelsBF16 = [...]*kernel[BFloat16]{isaGo: &kernelBF16Go, isaAVX2: nil, isaAVX512: nil}
)

// No float32-lane kernels without the assembly.
const lanesF16, lanesBF16 = false, false
