// Package ops provides general streaming operations on rows of samples, first
// of them the causal trailing mean CausalTrailingMean, together with the
// float16 and bfloat16 storage types they accept.
//
// # Causal trailing mean
//
// For each row x of a row-major [rows, n] array, CausalTrailingMean writes
//
//	h[t] = (x[max(0, t-cf+1)] + … + x[t]) / min(t+1, cf)
//
// the mean over the last cf samples, where early samples are divided by the
// number of samples that really exist rather than by cf. cf = 1 is the
// identity and cf ≥ n is the running prefix mean. Storage may be float32,
// Float16 or BFloat16; sums are carried in float64 (exact differences of
// float32 samples, no growth of the error with the row length) and each
// output is rounded to the storage type once (for the 16-bit types on
// AVX-512 CPUs, the mean of float32 lanes with a float64 carry is rounded:
// see CausalTrailingMean).
//
// CausalTrailingMean is the fused single pass (running window sum updated
// with x[t] − x[t−cf]), rows and row segments spread over goroutines, with
// AVX-512 or AVX2 kernels on amd64 and plain Go kernels elsewhere;
// CausalTrailingMeanRef is the plain float64 definition, the reference the
// tests hold it to.
//
// On a CUDA GPU, GPUTrailingMean (NewGPUTrailingMean) computes the same
// means in one kernel launch on device arrays, in float32 arithmetic
// compensated where errors would grow along the row (within a few float32
// units of the magnitudes in a 2048-sample chunk, not always correctly
// rounded); the CUDA C source is embedded as TrailingMeanCUDA and
// documented at the top of kernels/trailing_mean.cu. BenchTrailingMean
// measures either against a copy of the same bytes, for "dspk bench".
package ops
