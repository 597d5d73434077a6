package ops

import (
	_ "embed" // the CUDA source
	"fmt"
	"math"
	"strings"
	"unsafe"

	"dspk/internal/cuda"
)

//go:embed kernels/trailing_mean.cu
var trailingMeanCU string

//go:embed kernels/trailing_mean_io.cuh
var trailingMeanIO string

// trailingMeanInclude is the line of kernels/trailing_mean.cu that
// includes kernels/trailing_mean_io.cuh.
const trailingMeanInclude = `#include "trailing_mean_io.cuh"` + "\n"

// TrailingMeanCUDA is the CUDA C source of the GPU causal trailing mean:
// kernels/trailing_mean.cu with its include of kernels/trailing_mean_io.cuh
// expanded (NVRTC compiles one source), compiled with NVRTC as is by
// NewGPUTrailingMean. Its header comment documents the numerics, the launch
// geometry and the entry points.
var TrailingMeanCUDA = strings.Replace(trailingMeanCU, trailingMeanInclude, trailingMeanIO, 1)

// Launch constants of TrailingMeanCUDA (CTM_CHUNK there).
const (
	// TrailingMeanChunk is the number of samples of one row in a chunk, the
	// unit of work of one block of the kernels.
	TrailingMeanChunk = 2048
	// TrailingMeanDirectMax is the longest window the direct kernels take
	// (its carried-in sum comes from the chunk's own lagged samples); longer
	// windows use the look-back kernels.
	TrailingMeanDirectMax = TrailingMeanChunk
)

// Samples per thread of the kernels (CTM_ITEMS_F32 and CTM_ITEMS_16 in the
// CUDA source): a block has TrailingMeanChunk/items threads, a warp 32·items
// samples, the longest window of the warp kernels.
const (
	trailingMeanItems32 = 8
	trailingMeanItems16 = 16
)

// trailingMeanStateBytes is the size of the look-back state of a launch
// over total chunks: a 16-byte counter slot, then per chunk two float64 and
// a flag word (ctm_state in the CUDA source).
func trailingMeanStateBytes(total int) int { return 16 + 20*total }

// gpuKernel names a family of kernels of TrailingMeanCUDA, in the order of
// the windows they take: each takes every window the one before it takes.
type gpuKernel int

const (
	gpuWarp     gpuKernel = iota // cf ≤ 32·items: every warp carries its own window sum
	gpuDirect                    // cf ≤ TrailingMeanDirectMax: one window sum per block
	gpuLookback                  // any cf: chunks chained by a decoupled look-back
)

var gpuKernelNames = [...]string{gpuWarp: "warp", gpuDirect: "direct", gpuLookback: "lookback"}

// gpuKernelFor returns the kernel NewGPUTrailingMean launches for windows
// of cf samples of T: the first that takes cf.
func gpuKernelFor[T Storage](cf int) gpuKernel {
	switch {
	case cf <= 32*itemsOf[T]():
		return gpuWarp
	case cf <= TrailingMeanDirectMax:
		return gpuDirect
	}
	return gpuLookback
}

// itemsOf returns the samples per thread of the kernels of T.
func itemsOf[T Storage]() int {
	if elemSize[T]() == 4 {
		return trailingMeanItems32
	}
	return trailingMeanItems16
}

// GPUTrailingMean is CausalTrailingMean on a CUDA device: an operation bound
// to a shape [rows, n], a window cf and the storage type T, built once by
// NewGPUTrailingMean and applied to arrays in device memory. It computes
// the same means in one kernel launch, each block (256 threads of 8 samples
// for float32, 128 threads of 16 samples for the 16-bit types) owning one
// chunk of 2048 samples of a row, so long rows use the whole GPU.
// Windows up to the samples of a warp (256 for float32, 512 for the 16-bit
// types) make every warp's share a chunk of its own, which takes its
// carried-in sum from the lagged samples its lanes load anyway (no
// barrier); windows up to TrailingMeanDirectMax do the same per block;
// longer windows chain the chunks of a row with a decoupled look-back
// scan. Kernel names the one in use.
//
// Arithmetic is float32, compensated where errors would otherwise grow
// along the row: a mean is within a few float32 units of the magnitudes
// summed in its own 2048-sample chunk, whatever the row length (10⁷
// samples of mean 1000 and SD 1: within one float32 unit of the mean), and
// is rounded once to T. It is therefore not always the correctly rounded
// mean CausalTrailingMean returns (float64 conversions are slow on the
// GPU); kernels/trailing_mean.cu states the numerics. As on the CPU, a
// non-finite sample makes every output whose window holds it non-finite,
// may do the same to later outputs of its row, and leaves earlier ones as
// they are.
//
// All methods must be called inside the device's Do, on the Ctx Do hands
// out; a GPUTrailingMean is not safe for concurrent use.
type GPUTrailingMean[T Storage] struct {
	rows, n, cf int
	kernel      gpuKernel
	threads     int // of a block
	mod         *cuda.Module
	fused       *cuda.Prepared
	state       cuda.Buffer // look-back state (look-back kernels only)
	epoch       uint32
	scratch     cuda.Buffer // copy of the input for in-place calls
}

// storageSuffix returns the kernel-name suffix of T: "f32", "f16" or "bf16".
func storageSuffix[T Storage]() string {
	var z T
	switch any(z).(type) {
	case float32:
		return "f32"
	case Float16:
		return "f16"
	}
	return "bf16"
}

// elemSize returns the size of T in bytes.
func elemSize[T Storage]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// NewGPUTrailingMean compiles the kernels (once per process and device) and
// prepares a GPUTrailingMean for [rows, n] arrays of T and windows of cf
// samples. It panics if rows, n or cf is negative, cf is zero, or the shape
// needs more than 2³¹−1 blocks of 2048 samples.
func NewGPUTrailingMean[T Storage](c *cuda.Ctx, rows, n, cf int) (*GPUTrailingMean[T], error) {
	return newGPUTrailingMean[T](c, rows, n, cf, gpuKernelFor[T](cf))
}

// newGPUTrailingMean is NewGPUTrailingMean with kernel k, which must take
// cf (the tests run every kernel that takes a window, not only the first).
func newGPUTrailingMean[T Storage](c *cuda.Ctx, rows, n, cf int, k gpuKernel) (*GPUTrailingMean[T], error) {
	checkShape("NewGPUTrailingMean", rows*n, rows*n, rows, n, cf)
	if k < gpuKernelFor[T](cf) {
		panic(fmt.Sprintf("ops: NewGPUTrailingMean: the %s kernel does not take windows of %d samples", gpuKernelNames[k], cf))
	}
	chunks := (n + TrailingMeanChunk - 1) / TrailingMeanChunk
	if rows > 0 && chunks > math.MaxInt32/rows {
		panic(fmt.Sprintf("ops: NewGPUTrailingMean: shape [%d, %d] needs more than 2³¹−1 blocks", rows, n))
	}
	g := &GPUTrailingMean[T]{rows: rows, n: n, cf: cf, kernel: k, threads: TrailingMeanChunk / itemsOf[T]()}
	mod, err := c.Compile("ops/kernels/trailing_mean.cu", TrailingMeanCUDA)
	if err != nil {
		return nil, err
	}
	g.mod = mod
	total := rows * chunks
	if total == 0 {
		return g, nil
	}
	f, err := mod.Function("ctm_" + gpuKernelNames[k] + "_" + storageSuffix[T]())
	if err != nil {
		return nil, err
	}
	var null cuda.DevicePtr
	inv := float32(1 / float64(cf))
	if k == gpuLookback {
		if g.state, err = c.Alloc(trailingMeanStateBytes(total)); err != nil {
			return nil, err
		}
		if err := c.Memset8(g.state.Ptr, 0, g.state.Bytes); err != nil {
			g.Free(c)
			return nil, err
		}
		g.fused = f.Prepare(cuda.D1(total), cuda.D1(g.threads), 0,
			null, null, int64(n), int64(cf), inv, int64(chunks), int64(total), g.state, uint32(0))
		return g, nil
	}
	// Chunk along x, row along y and z (the kernel locates its chunk
	// without a division).
	y := min(rows, 65535)
	grid := cuda.Dim3{X: chunks, Y: y, Z: (rows + y - 1) / y}
	g.fused = f.Prepare(grid, cuda.D1(g.threads), 0,
		null, null, int64(n), int64(cf), inv, int64(chunks), int64(total))
	return g, nil
}

// Rows returns the number of rows.
func (g *GPUTrailingMean[T]) Rows() int { return g.rows }

// N returns the row length.
func (g *GPUTrailingMean[T]) N() int { return g.n }

// CF returns the window length.
func (g *GPUTrailingMean[T]) CF() int { return g.cf }

// Lookback reports whether the look-back kernel is used (windows longer
// than TrailingMeanDirectMax).
func (g *GPUTrailingMean[T]) Lookback() bool { return g.kernel == gpuLookback }

// Kernel names the kernel g launches: "warp" (windows up to the samples of
// a warp, 256 for float32 and 512 for the 16-bit types: every warp
// carries its own window sum), "direct" (up to TrailingMeanDirectMax: one
// per block of 2048 samples) or "lookback" (longer windows).
func (g *GPUTrailingMean[T]) Kernel() string { return gpuKernelNames[g.kernel] }

// bytes returns the size of one [rows, n] array of T.
func (g *GPUTrailingMean[T]) bytes() int { return g.rows * g.n * elemSize[T]() }

// checkPtrs panics on null, misaligned or partially overlapping arrays.
func (g *GPUTrailingMean[T]) checkPtrs(fn string, dst, src cuda.DevicePtr) {
	es := uintptr(elemSize[T]())
	if dst == 0 || src == 0 {
		panic(fmt.Sprintf("ops: GPUTrailingMean.%s: null device pointer", fn))
	}
	if uintptr(dst)%es != 0 || uintptr(src)%es != 0 {
		panic(fmt.Sprintf("ops: GPUTrailingMean.%s: pointers %#x, %#x not aligned to the %d-byte elements", fn, dst, src, es))
	}
	b := cuda.DevicePtr(g.bytes())
	if dst != src && dst < src+b && src < dst+b {
		panic(fmt.Sprintf("ops: GPUTrailingMean.%s: dst and src overlap without being equal", fn))
	}
	if g.fused == nil && g.mod == nil {
		panic(fmt.Sprintf("ops: GPUTrailingMean.%s after Free", fn))
	}
}

// Apply enqueues on c's stream the causal trailing mean of the [rows, n]
// array of T at src into the array at dst (both in device memory, aligned
// to the element size). dst may equal src (in place: the input is first
// copied to a scratch buffer the GPUTrailingMean allocates on first use and
// keeps), but must not otherwise overlap it. It panics on null, misaligned
// or partially overlapping pointers.
func (g *GPUTrailingMean[T]) Apply(c *cuda.Ctx, dst, src cuda.DevicePtr) error {
	if g.rows*g.n == 0 {
		return nil
	}
	g.checkPtrs("Apply", dst, src)
	x := src
	if dst == src {
		if g.scratch.Ptr == 0 {
			var err error
			if g.scratch, err = c.Alloc(g.bytes()); err != nil {
				return err
			}
		}
		if err := c.CopyDtoD(g.scratch.Ptr, src, g.bytes()); err != nil {
			return err
		}
		x = g.scratch.Ptr
	}
	g.fused.Set(0, dst)
	g.fused.Set(1, x)
	if g.kernel == gpuLookback {
		// A new epoch per launch: flags of earlier launches never match.
		g.epoch++
		if g.epoch >= 1<<30 {
			g.epoch = 1
		}
		g.fused.Set(8, g.epoch)
	}
	return g.fused.Launch(c)
}

// ApplyHost computes the causal trailing mean of src into dst (host slices
// of rows·n elements) on the device: it uploads src, applies, downloads dst
// and waits. dst may be src (then the device computes in place too) but
// must not otherwise overlap it. The device output buffer is filled with
// NaN first, so that an element the kernel failed to write reads back as
// NaN. It allocates and frees its device buffers on every call: a
// convenience for tests and small jobs, not for streaming.
func (g *GPUTrailingMean[T]) ApplyHost(c *cuda.Ctx, dst, src []T) error {
	N := g.rows * g.n
	if len(dst) != N || len(src) != N {
		panic(fmt.Sprintf("ops: GPUTrailingMean.ApplyHost: len(dst) = %d, len(src) = %d, want rows·n = %d", len(dst), len(src), N))
	}
	if N == 0 {
		return nil
	}
	inPlace := &dst[0] == &src[0]
	if !inPlace && overlap(dst, src) {
		panic("ops: GPUTrailingMean.ApplyHost: dst and src overlap without being equal")
	}
	in, err := c.Alloc(g.bytes())
	if err != nil {
		return err
	}
	defer c.Free(in)
	out := in
	if !inPlace {
		if out, err = c.Alloc(g.bytes()); err != nil {
			return err
		}
		defer c.Free(out)
		if err := c.Memset8(out.Ptr, 0xff, out.Bytes); err != nil {
			return err
		}
	}
	if err := cuda.Upload(c, in.Ptr, src); err != nil {
		return err
	}
	if err := g.Apply(c, out.Ptr, in.Ptr); err != nil {
		return err
	}
	return cuda.Download(c, dst, out.Ptr)
}

// Free releases the device buffers and launch blocks; g must not be used
// afterwards. The compiled module stays cached in the device.
func (g *GPUTrailingMean[T]) Free(c *cuda.Ctx) error {
	err := c.Free(g.state)
	if e := c.Free(g.scratch); err == nil {
		err = e
	}
	g.state, g.scratch = cuda.Buffer{}, cuda.Buffer{}
	if g.fused != nil {
		g.fused.Free()
		g.fused = nil
	}
	g.mod = nil
	return err
}
