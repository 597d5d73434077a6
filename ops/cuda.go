package ops

import (
	_ "embed" // the CUDA source
	"fmt"
	"math"
	"strings"
	"unsafe"

	"dspk/compute"
)

// The CUDA back end of TrailingMean (design: docs/perf-gpu-ops.md).

//go:embed kernels/trailing_mean.cu
var trailingMeanCU string

//go:embed kernels/trailing_mean_io.cuh
var trailingMeanIO string

// TrailingMeanCUDA is the CUDA source of TrailingMean, its include expanded for NVRTC.
var TrailingMeanCUDA = strings.Replace(trailingMeanCU, `#include "trailing_mean_io.cuh"`+"\n", trailingMeanIO, 1)

// Launch constants (CTM_CHUNK, CTM_ITEMS_F32, CTM_ITEMS_16 in TrailingMeanCUDA).
const (
	gpuChunk   = 2048
	gpuItems32 = 8
	gpuItems16 = 16
)

// gpuStateBytes is the size of the look-back state over total chunks (ctm_state).
func gpuStateBytes(total int) int { return 16 + 20*total }

// gpuKernel names a kernel family; each takes every window the one before takes.
type gpuKernel int

const (
	gpuWarp     gpuKernel = iota // cf ≤ 32·items: every warp carries its own window sum
	gpuDirect                    // cf ≤ gpuChunk: one window sum per block
	gpuLookback                  // any cf: chunks chained by a decoupled look-back
)

var gpuKernelNames = [...]string{gpuWarp: "warp", gpuDirect: "direct", gpuLookback: "lookback"}

// gpuKernelFor returns the first kernel that takes windows of cf samples of T.
func gpuKernelFor[T Storage](cf int) gpuKernel {
	switch {
	case cf <= 32*itemsOf[T]():
		return gpuWarp
	case cf <= gpuChunk:
		return gpuDirect
	}
	return gpuLookback
}

// itemsOf returns the samples per thread of the kernels of T.
func itemsOf[T Storage]() int {
	if elemSize[T]() == 4 {
		return gpuItems32
	}
	return gpuItems16
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

// cudaTrailing is the CUDA back end of a TrailingMean: the prepared launch.
type cudaTrailing struct {
	kernel  gpuKernel
	threads int // of a block
	fused   *compute.Prepared
	state   compute.Mem // look-back state (look-back kernels only)
	epoch   uint32
	scratch compute.Mem // copy of the input for in-place calls
}

// checkCUDA panics unless kernel k takes cf and [rows, n] needs ≤ 2³¹−1 blocks.
func checkCUDA[T Storage](rows, n, cf int, k gpuKernel) {
	if k < gpuKernelFor[T](cf) {
		panic(fmt.Sprintf("ops: NewTrailingMean: the %s kernel does not take windows of %d samples", gpuKernelNames[k], cf))
	}
	if chunks := (n + gpuChunk - 1) / gpuChunk; rows > 0 && chunks > math.MaxInt32/rows {
		panic(fmt.Sprintf("ops: NewTrailingMean: shape [%d, %d] needs more than 2³¹−1 blocks on the GPU", rows, n))
	}
}

// newCUDATrailing compiles the kernels and prepares the launch of k (checkCUDA must hold).
func newCUDATrailing[T Storage](c *compute.Ctx, rows, n, cf int, k gpuKernel) (*cudaTrailing, error) {
	chunks := (n + gpuChunk - 1) / gpuChunk
	g := &cudaTrailing{kernel: k, threads: gpuChunk / itemsOf[T]()}
	mod, err := c.Compile("ops/kernels/trailing_mean.cu", TrailingMeanCUDA)
	if err != nil {
		return nil, err
	}
	total := rows * chunks
	if total == 0 {
		return g, nil
	}
	f, err := mod.Kernel("ctm_" + gpuKernelNames[k] + "_" + storageSuffix[T]())
	if err != nil {
		return nil, err
	}
	var null compute.Ptr
	inv := float32(1 / float64(cf))
	if k == gpuLookback {
		if g.state, err = c.Alloc(gpuStateBytes(total)); err != nil {
			return nil, err
		}
		if err := c.Memset8(g.state.Ptr, 0, g.state.Bytes); err != nil {
			g.free(c)
			return nil, err
		}
		g.fused = f.Prepare(compute.D1(total), compute.D1(g.threads), 0,
			null, null, int64(n), int64(cf), inv, int64(chunks), int64(total), g.state, uint32(0))
		return g, nil
	}
	// Chunk along x, row along y and z: the kernel needs no division.
	y := min(rows, 65535)
	grid := compute.Dim3{X: chunks, Y: y, Z: (rows + y - 1) / y}
	g.fused = f.Prepare(grid, compute.D1(g.threads), 0,
		null, null, int64(n), int64(cf), inv, int64(chunks), int64(total))
	return g, nil
}

// apply enqueues the launch from src into dst (if equal, through the scratch).
func (g *cudaTrailing) apply(c *compute.Ctx, dst, src compute.Ptr, bytes int) error {
	x := src
	if dst == src {
		if g.scratch.Ptr == 0 {
			var err error
			if g.scratch, err = c.Alloc(bytes); err != nil {
				return err
			}
		}
		if err := c.CopyDtoD(g.scratch.Ptr, src, bytes); err != nil {
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

// applyHost uploads src, applies, and downloads into dst; out of place, unwritten outputs read NaN.
func applyHost[T Storage](g *cudaTrailing, c *compute.Ctx, dst, src []T, bytes int) error {
	in, err := c.Alloc(bytes)
	if err != nil {
		return err
	}
	defer c.Free(in)
	out := in
	if &dst[0] != &src[0] {
		if out, err = c.Alloc(bytes); err != nil {
			return err
		}
		defer c.Free(out)
		if err := c.Memset8(out.Ptr, 0xff, out.Bytes); err != nil {
			return err
		}
	}
	if err := compute.Upload(c, in.Ptr, src); err != nil {
		return err
	}
	if err := g.apply(c, out.Ptr, in.Ptr, bytes); err != nil {
		return err
	}
	return compute.Download(c, dst, out.Ptr)
}

// free releases the device buffers and the launch block.
func (g *cudaTrailing) free(c *compute.Ctx) error {
	err := c.Free(g.state)
	if e := c.Free(g.scratch); err == nil {
		err = e
	}
	g.state, g.scratch = compute.Mem{}, compute.Mem{}
	if g.fused != nil {
		g.fused.Free()
		g.fused = nil
	}
	return err
}
