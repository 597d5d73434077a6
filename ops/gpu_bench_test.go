package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/compute"
)

// GPU benchmarks of the kernels the product launches. Every timed call
// runs after a 256 MiB write that evicts the previous call's data from L2,
// between two CUDA events; the metrics are medians over max(b.N, 5) calls
// (run with -test.benchtime=20x). Bytes are the compulsory traffic, one
// read of the input and one write of the output; "copy" moves the same
// bytes with cuMemcpyDtoDAsync, the floor the kernels are held to.

// gpuBenchCase is one benchmarked configuration: a shape, a storage type
// and the kernel (the one NewTrailingMean launches unless forced).
type gpuBenchCase struct {
	rows, n, cf int
	storage     string
	force       bool
	kernel      gpuKernel
}

func (bc gpuBenchCase) name() string {
	s := fmt.Sprintf("%dx%d/cf%d/%s", bc.rows, bc.n, bc.cf, bc.storage)
	if bc.force {
		s += "/" + gpuKernelNames[bc.kernel]
	}
	return s
}

// gpuBenchCases are [4096, 8192] and [16, 1 000 000] with cf = 100 (the
// warp kernels), the other kernels forced on the same shapes, the prefix
// mean of long rows (look-back), unaligned rows and the longest direct
// window.
var gpuBenchCases = []gpuBenchCase{
	{4096, 8192, 100, "f32", false, 0},
	{4096, 8192, 100, "bf16", false, 0},
	{4096, 8192, 100, "f16", false, 0},
	{16, 1_000_000, 100, "f32", false, 0},
	{16, 1_000_000, 100, "bf16", false, 0},
	{16, 1_000_000, 1_000_000, "f32", false, 0},
	{16, 1_000_000, 1_000_000, "bf16", false, 0},
	{4096, 8192, 100, "f32", true, gpuDirect},
	{4096, 8192, 100, "bf16", true, gpuDirect},
	{4096, 8192, 100, "f32", true, gpuLookback},
	{4096, 8192, 100, "bf16", true, gpuLookback},
	{4096, 8191, 100, "f32", false, 0},
	{4096, 8191, 100, "bf16", false, 0},
	{4096, 8192, 500, "bf16", false, 0},
	{4096, 8192, 2048, "bf16", false, 0},
}

func BenchmarkGPUTrailingMean(b *testing.B) {
	for _, bc := range gpuBenchCases {
		b.Run(bc.name(), func(b *testing.B) {
			switch bc.storage {
			case "f32":
				benchGPU[float32](b, bc)
			case "f16":
				benchGPU[Float16](b, bc)
			default:
				benchGPU[BFloat16](b, bc)
			}
		})
	}
}

// benchGPU runs the case and reports its rates, its fraction of the copy,
// the kernel's registers and spills and its resident blocks per
// multiprocessor.
func benchGPU[T Storage](b *testing.B, bc gpuBenchCase) {
	k := gpuKernelFor[T](bc.cf)
	if bc.force {
		k = bc.kernel
	}
	g, err := newTrailingMean[T](gpuDevice(b), bc.rows, bc.n, bc.cf, k)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	gpuDo(b, func(c *compute.Ctx) error {
		f := g.gpu.fused.Kernel()
		attr, err := f.Attributes()
		if err != nil {
			return err
		}
		resident, err := f.MaxActiveBlocks(g.gpu.threads, 0)
		if err != nil {
			return err
		}
		s, sc, err := gpuTimes(c, g, benchInput[T](bc.rows*bc.n), max(b.N, 5))
		if err != nil {
			return err
		}
		bytes := 2 * float64(g.bytes())
		fused, cp := bytes/s/1e9, bytes/sc/1e9
		b.ReportMetric(s*1e6, "µs")
		b.ReportMetric(fused, "GB/s")
		b.ReportMetric(cp, "copyGB/s")
		b.ReportMetric(fused/cp, "of-copy")
		b.ReportMetric(float64(attr.Registers), "regs")
		b.ReportMetric(float64(attr.LocalBytes), "local-B")
		b.ReportMetric(float64(resident), "blocks/SM")
		b.Logf("%s kernel", g.kernelName())
		return nil
	})
}

// BenchmarkGPUCopy2GiB measures the device-to-device copy bandwidth the
// anchors quote (4.27 TB/s counting read and write), with the same timing
// as the kernel benchmarks.
func BenchmarkGPUCopy2GiB(b *testing.B) {
	bytes := 1 << 30
	bytes <<= 1 // 2 GiB; not a constant, so that 32-bit builds still compile
	gpuDo(b, func(c *compute.Ctx) error {
		x, err := c.Alloc(bytes)
		if err != nil {
			return err
		}
		defer c.Free(x)
		y, err := c.Alloc(bytes)
		if err != nil {
			return err
		}
		defer c.Free(y)
		if err := c.Memset32(x.Ptr, 0x3f800000, bytes/4); err != nil {
			return err
		}
		s, err := gpuMedian(c, max(b.N, 5), func() error { return c.CopyDtoD(y.Ptr, x.Ptr, bytes) })
		if err != nil {
			return err
		}
		b.ReportMetric(s*1e3, "ms")
		b.ReportMetric(2*float64(bytes)/s/1e9, "GB/s")
		return nil
	})
}

// benchInput returns N pseudo-normal samples of mean 1000 and SD 1 rounded
// to T, the same for every call.
func benchInput[T Storage](N int) []T {
	rng := rand.New(rand.NewPCG(uint64(N), 1000))
	x := make([]float64, N)
	for i := range x {
		x[i] = 1000 + rng.NormFloat64()
	}
	return toStorage[T](x)
}

// gpuFlushBytes is the size of the buffer written before each timed call to
// evict the previous call's data from the L2 cache (50 MB on an H200).
const gpuFlushBytes = 256 << 20

// gpuTimes uploads x, the input of g, and returns the median seconds per
// call of g.ApplyDevice into a second array and of a device-to-device copy
// of the same bytes (gpuMedian).
func gpuTimes[T Storage](c *compute.Ctx, g *TrailingMean[T], x []T, reps int) (fused, cp float64, err error) {
	bx, err := c.Alloc(g.bytes())
	if err != nil {
		return 0, 0, err
	}
	defer c.Free(bx)
	by, err := c.Alloc(g.bytes())
	if err != nil {
		return 0, 0, err
	}
	defer c.Free(by)
	if err := compute.Upload(c, bx.Ptr, x); err != nil {
		return 0, 0, err
	}
	if fused, err = gpuMedian(c, reps, func() error { return g.ApplyDevice(c, by.Ptr, bx.Ptr) }); err != nil {
		return 0, 0, err
	}
	cp, err = gpuMedian(c, reps, func() error { return c.CopyDtoD(by.Ptr, bx.Ptr, g.bytes()) })
	return fused, cp, err
}

// gpuMedian runs fn once to warm up, then reps times, each after a write of
// gpuFlushBytes (so that no call finds its data in the L2 cache) and
// between two CUDA events, and returns the median time in seconds.
func gpuMedian(c *compute.Ctx, reps int, fn func() error) (sec float64, err error) {
	flush, err := c.Alloc(gpuFlushBytes)
	if err != nil {
		return 0, err
	}
	defer c.Free(flush)
	ev := make([]compute.Event, 0, 2*reps)
	defer func() {
		for _, e := range ev {
			c.DestroyEvent(e)
		}
	}()
	for range 2 * reps {
		e, err := c.NewEvent()
		if err != nil {
			return 0, err
		}
		ev = append(ev, e)
	}
	if err := fn(); err != nil {
		return 0, err
	}
	for i := range reps {
		if err := c.Memset32(flush.Ptr, uint32(i), flush.Bytes/4); err != nil {
			return 0, err
		}
		if err := c.Record(ev[2*i]); err != nil {
			return 0, err
		}
		if err := fn(); err != nil {
			return 0, err
		}
		if err := c.Record(ev[2*i+1]); err != nil {
			return 0, err
		}
	}
	if err := c.Sync(); err != nil {
		return 0, err
	}
	ms := make([]float64, reps)
	for i := range ms {
		v, err := c.Elapsed(ev[2*i], ev[2*i+1])
		if err != nil {
			return 0, err
		}
		ms[i] = float64(v)
	}
	slices.Sort(ms)
	return ms[reps/2] / 1e3, nil
}
