package ops

import (
	_ "embed" // TrailingMeanCUDA
	"fmt"
)

// TrailingMeanCUDA is the CUDA C source of the GPU causal trailing mean
// (kernels/trailing_mean.cu), to be compiled with NVRTC as is. Its header
// comment documents the numerics, the launch geometry and the entry points;
// PlanTrailingMean computes the geometry for a shape.
//
//go:embed kernels/trailing_mean.cu
var TrailingMeanCUDA string

// Launch constants of TrailingMeanCUDA (CTM_THREADS and CTM_CHUNK there).
const (
	// TrailingMeanThreads is the block size of every trailing-mean kernel.
	TrailingMeanThreads = 256
	// TrailingMeanChunk is the number of samples of one row a block owns;
	// windows up to this length are handled by a single launch.
	TrailingMeanChunk = 2048
	// TrailingMeanCarryScan is the entry point that turns per-chunk sums
	// into carried-in window sums (two-level mode).
	TrailingMeanCarryScan = "ctm_carry_scan"
)

// TrailingMeanPlan is the launch plan of the GPU causal trailing mean for a
// [rows, n] array and window cf.
type TrailingMeanPlan struct {
	// Main is the entry point writing the means, e.g. "ctm_f32"; its
	// arguments are (y, x, n, cf, Chunks, carry) with n, cf, Chunks int64
	// and carry a float64 device pointer, or 0 when not TwoLevel.
	Main string
	// Delta is the first-pass entry point of two-level mode, e.g.
	// "ctm_delta_f32", with arguments (carry, x, n, cf, Chunks).
	Delta string
	// Chunks is the number of chunks per row, ceil(n / TrailingMeanChunk).
	Chunks int
	// Blocks is the grid of Main and Delta: rows·Chunks blocks of
	// TrailingMeanThreads threads.
	Blocks int
	// TwoLevel is true when cf > TrailingMeanChunk: launch Delta (Blocks
	// blocks), TrailingMeanCarryScan (rows blocks, arguments (carry,
	// Chunks)), then Main with carry.
	TwoLevel bool
	// CarryLen is the float64 length of the carry buffer in two-level mode
	// (rows·Chunks), 0 otherwise.
	CarryLen int
}

// PlanTrailingMean returns the GPU launch plan of CausalTrailingMean on
// storage type T. It panics on the shape misuse CausalTrailingMean panics
// on, and for an empty shape, which needs no launch.
func PlanTrailingMean[T Storage](rows, n, cf int) TrailingMeanPlan {
	checkShape("PlanTrailingMean", rows*n, rows*n, rows, n, cf)
	if rows*n == 0 {
		panic(fmt.Sprintf("ops: PlanTrailingMean: empty shape [%d, %d]", rows, n))
	}
	var suffix string
	var z T
	switch any(z).(type) {
	case float32:
		suffix = "f32"
	case Float16:
		suffix = "f16"
	case BFloat16:
		suffix = "bf16"
	}
	chunks := (n + TrailingMeanChunk - 1) / TrailingMeanChunk
	p := TrailingMeanPlan{
		Main:     "ctm_" + suffix,
		Delta:    "ctm_delta_" + suffix,
		Chunks:   chunks,
		Blocks:   rows * chunks,
		TwoLevel: cf > TrailingMeanChunk,
	}
	if p.TwoLevel {
		p.CarryLen = rows * chunks
	}
	return p
}
