package ops

import (
	_ "embed" // TrailingMeanCUDA
)

// TrailingMeanCUDA is the CUDA C source of the GPU causal trailing mean
// (kernels/trailing_mean.cu), compiled with NVRTC as is by
// NewGPUTrailingMean. Its header comment documents the numerics, the launch
// geometry and the entry points.
//
//go:embed kernels/trailing_mean.cu
var TrailingMeanCUDA string

// Launch constants of TrailingMeanCUDA (CTM_THREADS and CTM_CHUNK there).
const (
	// TrailingMeanThreads is the block size of the trailing-mean kernels,
	// except the fused kernels of the 16-bit types, whose blocks have
	// TrailingMeanChunk/16 = 128 threads of 16 samples each.
	TrailingMeanThreads = 256
	// TrailingMeanChunk is the number of samples of one row in a chunk, the
	// unit of work of the fused pass (a block handles one by default).
	TrailingMeanChunk = 2048
	// TrailingMeanDirectMax is the longest window the direct kernels take
	// (its carried-in sum comes from the chunk's own lagged samples); longer
	// windows use the look-back kernels.
	TrailingMeanDirectMax = TrailingMeanChunk
)

// trailingMeanStateBytes is the size of the look-back state of a launch
// over total chunks: a 16-byte counter slot, then per chunk two float64 and
// a flag word (ctm_state in the CUDA source).
func trailingMeanStateBytes(total int) int { return 16 + 20*total }
