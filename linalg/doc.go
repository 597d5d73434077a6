// Package linalg provides the dense and sparse linear algebra of the
// Kilosort4 front end: centred covariance and the uncentred second-moment
// accumulator over windows of samples (split products, float32 and float64),
// Kilosort4's local ZCA whitening and its sparse operator [Whitening], and a
// symmetric eigendecomposition with a fixed order and sign convention.
//
// Data are channel-major: a window of C channels is a [C][ld] row-major
// slice, channel c at x[c*ld:], and an operation uses the columns [c0, c1)
// of every row. Programmer errors (bad shapes, lengths or ranges) panic with
// a message prefixed "linalg: "; bad data (NaN or Inf where a decomposition
// needs finite numbers) is reported as an error.
//
// [SecondMoment] is bound to a device ([NewSecondMoment](dev, C)): on a CUDA
// GPU it accumulates windows that live in device memory
// ([SecondMoment.AddWindow] of a compute.Window) with cuBLAS
// (gram_cuda.go, kernels/gram.cu), and only the C×C result comes back.
// [GPUGram] is the same product on device pointers, for ops that hold
// their own device buffers.
//
// Every fast path has a plain float64 reference beside it in the tests.
package linalg
