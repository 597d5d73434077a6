package compute

import (
	"time"

	"dspk/internal/cuda"
)

// OpenTimes are the wall times of opening a CUDA device ([Open]).
type OpenTimes struct {
	// Context is the time to load the driver, initialise it and create
	// the device's primary context and stream.
	Context time.Duration
	// Libraries is the time to load NVRTC, which runs concurrently with
	// Context (cuBLAS is loaded on a device's first cuBLAS call).
	Libraries time.Duration
	// Total is the wall time of the whole opening.
	Total time.Duration
}

// OpenTimes returns how long opening d took; zero for the CPU.
func (d *Device) OpenTimes() OpenTimes { return d.opened }

// KernelStats counts the kernel modules the process loaded ([Ctx.Compile])
// and where they came from.
type KernelStats struct {
	// Modules is the number of modules loaded onto a device.
	Modules int `json:"modules"`
	// Compiled were compiled by NVRTC; FromDisk read from the on-disk
	// kernel cache; FromMemory compiled earlier in the process.
	Compiled   int `json:"compiled"`
	FromDisk   int `json:"from_disk_cache"`
	FromMemory int `json:"from_memory"`
	// Seconds is the wall time spent in Compile, NVRTCSeconds the part of
	// it spent compiling.
	Seconds      float64 `json:"seconds"`
	NVRTCSeconds float64 `json:"nvrtc_seconds"`
	// CacheDir is the on-disk kernel cache ("" when disabled).
	CacheDir string `json:"cache_dir"`
	// CacheErrors counts cache entries that could not be read, were
	// damaged or could not be written (each cost a compile at most);
	// LastCacheError describes the last.
	CacheErrors    int    `json:"cache_errors,omitempty"`
	LastCacheError string `json:"last_cache_error,omitempty"`
}

// Kernels returns the process's kernel statistics so far.
func Kernels() KernelStats {
	s := cuda.KernelStats()
	dir := s.CacheDir
	if s.Modules == 0 {
		dir = cuda.KernelCacheDir()
	}
	return KernelStats{Modules: s.Modules, Compiled: s.Compiled, FromDisk: s.FromDisk, FromMemory: s.FromMemory,
		Seconds: s.Wall.Seconds(), NVRTCSeconds: s.NVRTC.Seconds(), CacheDir: dir,
		CacheErrors: s.CacheErrors, LastCacheError: s.LastCacheError}
}

// KernelCacheDir returns the folder of the on-disk kernel cache, or ""
// when it is disabled. Compiled kernels (cubins, or PTX where NVRTC is
// older than the GPU) are kept there between runs, keyed by a hash of
// their source, options, NVRTC and driver versions and the GPU's
// architecture. The folder is $DSPK_CACHE/kernels if DSPK_CACHE is set,
// else os.UserCacheDir()/dspk/kernels; DSPK_KERNEL_CACHE=off disables the
// cache.
func KernelCacheDir() string { return cuda.KernelCacheDir() }

// SetKernelCacheDir makes dir the on-disk kernel cache for the rest of the
// process ("" disables it), overriding the environment.
func SetKernelCacheDir(dir string) { cuda.SetKernelCacheDir(dir) }
