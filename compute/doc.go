// Package compute provides the devices dspk's operations run on: the CPU
// (pure Go, always present) and NVIDIA GPUs through package compute/cuda.
//
// [Open] takes "auto", "cpu" or "cuda:N". "auto" takes the first CUDA GPU
// when the driver, NVRTC and cuBLAS load and a device answers, otherwise
// the CPU, and returns a short reason saying which it took and why. An
// explicit "cuda:N" that cannot be opened is an error. [Devices] lists what
// the machine has, with the CUDA library files mapped into the process,
// for "dspk info -devices".
//
// Operations are objects bound to a device and a shape, built once; which
// implementation runs (pure Go or CUDA) is decided at construction from the
// [Device]'s [Kind].
package compute
