// Package compute provides the devices dspk's operations run on — the CPU
// (pure Go, always present) and NVIDIA GPUs — and the device layer through
// which the algorithm packages use a GPU without naming a CUDA type.
//
// # Devices
//
// [Open] takes "auto", "cpu" or "cuda:N" and returns a [*Device]. "auto"
// takes the first CUDA GPU when the driver and NVRTC load and a device
// answers, otherwise the CPU, and returns a short reason saying which it
// took and why. An explicit "cuda:N" that cannot be opened is an error
// wrapping [ErrNotFound]. cuBLAS is loaded on a device's first cuBLAS
// call (an error wrapping [ErrNotFound] there if it is missing), so that
// runs that make none do not pay for loading it. [Devices] lists what the machine has, with
// the CUDA library files mapped into the process, for "dspk info
// -devices".
//
// Operations (preprocess.New, linalg.NewSecondMoment, detect.NewDetector,
// …) take the Device at construction and decide there which back end
// runs; their callers never branch on the device.
//
// [Device.Peaks] gives the device's theoretical peak rates (FP64 and
// FP32 FLOP/s, memory bandwidth), computed from the GPU's attributes or
// the CPU's cores, clock and vector width, for the benchmarks' floors.
//
// # Windows
//
// A [Window] is one padded window held where its device works on it: the
// raw int16 samples as stored and the float32 working array [C][T]. On a
// CUDA device the raw samples are uploaded once ([Window.Load]), the ops
// read and write device memory ([Window.RawMem], [Window.DataMem],
// [Window.MarkWritten]), and only a host stage's [Window.Data] downloads
// the working array; an op that keeps reading the array while the window
// moves on takes it in exchange for another ([Window.SwapDataMem]).
// [Device.AllocHost] gives host memory for the
// recording loader to read into: pinned on a GPU, so uploads run at PCIe
// speed.
//
// # GPU API
//
// Inside [Device.Do], which serialises the device's users and runs on a
// locked OS thread, a [*Ctx] gives:
//
//   - device memory: [Ctx.Alloc], [Ctx.Free] ([Mem], [Ptr]); pinned host
//     memory: [Ctx.AllocHost], [Ctx.FreeHost] ([HostMem]);
//   - copies and fills on the Ctx's stream: [Upload], [Download],
//     [Ctx.CopyHtoD], [Ctx.CopyDtoH], [Ctx.CopyDtoD], [Ctx.Memset8],
//     [Ctx.Memset32]; synchronisation: [Ctx.Sync], [Ctx.SyncOp],
//     [Ctx.SyncDevice];
//   - streams and events: [Ctx.NewStream], [Ctx.WithStream],
//     [Ctx.NewEvent], [Ctx.Record], [Ctx.Wait], [Ctx.EventSync],
//     [Ctx.Elapsed];
//   - kernels: [Ctx.Compile] compiles CUDA C source (embedded with go:embed
//     from the package's kernels/ folder) with NVRTC for the device's
//     architecture and caches it by a hash of source, options, target,
//     NVRTC and driver versions, in the process and on disk
//     ([KernelCacheDir]; DSPK_KERNEL_CACHE=off disables the disk cache,
//     [Kernels] counts where each module came from);
//     [Module.Kernel] finds an entry point; [Kernel.Prepare] packs a
//     launch once ([Prepared.Set], [Prepared.Launch]: no allocation per
//     launch); [Ctx.Launch] launches once; [Ctx.Capture] records a
//     [Graph];
//   - cuBLAS: [Ctx.Sgemm], [Ctx.Dgemm], [Ctx.SgemmStridedBatched],
//     [Ctx.DgemmStridedBatched], [Ctx.GemmStridedBatchedEx], [Ctx.Ssyrk],
//     [Ctx.Dsyrk].
//
// A kernel fault is sticky: the device is then lost, every later call
// returns that first error (wrapping [ErrDeviceLost]) and the process
// should stop. With DSPK_CUDA_SYNC=1 every launch is followed by a
// synchronisation, so that a fault is attributed to its kernel.
//
// The purego bindings themselves (driver API, NVRTC, cuBLAS; library
// discovery) live in dspk/internal/cuda, which no other package
// imports.
package compute
