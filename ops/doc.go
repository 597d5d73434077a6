// Package ops provides streaming operations on rows of samples, first the causal
// trailing mean of each row x of a row-major [rows, n] array,
//
//	h[t] = (x[max(0, t-cf+1)] + … + x[t]) / min(t+1, cf)
//
// with float32, Float16 or BFloat16 storage. TrailingMean is the op on any device;
// its back ends sit side by side: the CPU's CausalTrailingMean (trailing*.go: a
// fused float64 pass, AVX-512, AVX2 or Go kernels) and CUDA (cuda.go, kernels/).
// CausalTrailingMeanRef is the float64 reference the tests hold both to.
// docs/perf-ops.md and docs/perf-gpu-ops.md give the designs and measurements.
package ops
