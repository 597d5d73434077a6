// Package cuda provides the bindings to NVIDIA's CUDA driver API, NVRTC
// and cuBLAS that package compute wraps (no algorithm package imports
// them), reached at run time through purego without cgo, so that the
// module builds and tests with CGO_ENABLED=0 on machines without a GPU.
//
// # Libraries
//
// The driver (libcuda.so.1), NVRTC (libnvrtc.so.13 or .12) and cuBLAS
// (libcublas.so.13 or .12) are looked up in this order, first match wins:
// a full path in DSPK_LIBCUDA, DSPK_LIBNVRTC or DSPK_LIBCUBLAS; the soname
// through the system loader; $CUDA_HOME/lib64, /usr/local/cuda/lib64 and
// /usr/local/cuda-*/lib64 (and their targets/x86_64-linux/lib); Python
// site-packages nvidia/cu13/lib (CUDA 12: nvidia/cuda_nvrtc/lib and
// nvidia/cublas/lib). Paths containing /compat/ or /stubs/ are never
// loaded. NVRTC's builtins and cuBLASLt are preloaded from the folder their
// library came from. When the driver or a library is missing, the error
// wraps [ErrNotFound]; callers fall back to the CPU.
//
// # Devices and contexts
//
// [Open] returns a [Device] bound to the GPU's primary context, with one
// non-blocking stream and, on first use, one cuBLAS handle bound to that
// stream. All work happens inside [Device.Do], which takes the device's
// mutex, locks the calling goroutine to its OS thread, makes the primary
// context current and hands the function a [Ctx]. Hand whole stages to Do,
// never single launches.
//
// # Errors
//
// Every failing call returns an [*Error] carrying the library, the C
// function, the status code with its CUDA name and message, and the kernel
// or operation that failed. A kernel fault (an illegal address, a launch
// failure, an unknown error, …) is sticky in CUDA: the context is dead. The
// device is then marked lost and every later call returns that first error,
// which wraps [ErrDeviceLost]; the process should stop and never retry.
// Faults arrive asynchronously and surface at the next synchronisation;
// with DSPK_CUDA_SYNC=1 every launch is followed by a synchronisation so a
// fault is attributed to its kernel.
//
// # Kernels
//
// CUDA C sources are compiled with NVRTC for the device's architecture
// (an sm_XY cubin, -std=c++17; compute_XY PTX when NVRTC is older than the
// device) by [Ctx.Compile], and cached for the life of the process, keyed by
// sha256 of source, options, architecture and NVRTC version. Kernels in
// loops are launched through [Prepared] launches (a pinned argument block
// and purego.SyscallN, no allocation); [Ctx.Launch] packs its arguments on
// every call.
//
// The dynamic-loading layer (dlopen, dlsym, the C call) lives in files built
// only on Linux; elsewhere every entry point returns an error wrapping
// [ErrNotFound].
package cuda
