// Package ops provides general streaming operations on rows of samples, first
// of them the causal trailing mean, together with the float16 and bfloat16
// storage types they accept.
//
// For each row x of a row-major [rows, n] array the causal trailing mean is
//
//	h[t] = (x[max(0, t-cf+1)] + … + x[t]) / min(t+1, cf)
//
// the mean over the last cf samples, early samples divided by the number of
// samples that really exist. Storage may be float32, Float16 or BFloat16.
//
// TrailingMean is the op on any device (NewTrailingMean(dev, rows, n, cf),
// Apply on host slices, ApplyDevice on GPU arrays, Close). Its back ends sit
// side by side:
//
//   - CPU (trailing*.go): CausalTrailingMean, one fused pass (a running
//     window sum in float64) over rows and row segments spread over
//     goroutines, with AVX-512 or AVX2 kernels on amd64 and the plain Go
//     kernels elsewhere; float32 outputs are correctly rounded for all
//     practical row lengths.
//   - CUDA (cuda.go, kernels/trailing_mean.cu): one kernel launch per call
//     in compensated float32 arithmetic, within a few float32 units of the
//     magnitudes in a 2048-sample chunk.
//
// CausalTrailingMeanRef is the plain float64 definition, the reference the
// tests hold both back ends to. docs/perf-ops.md and docs/perf-gpu-ops.md
// give the designs and the measurements.
package ops
