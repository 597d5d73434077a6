package ops

import (
	"fmt"
	"testing"

	"dspk/compute"
	"dspk/internal/cuda"
)

// GPU benchmarks of the kernels the product launches. Every timed call
// runs after a 256 MiB write that evicts the previous call's data from L2,
// between two CUDA events; the metrics are medians over max(b.N, 5) calls
// (run with -test.benchtime=20x). Bytes are the compulsory traffic, one
// read of the input and one write of the output; "copy" moves the same
// bytes with cuMemcpyDtoDAsync, the floor the kernels are held to.

// gpuBenchCase is one benchmarked configuration: a shape, a storage type
// and the kernel (the one NewGPUTrailingMean launches unless forced).
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
	gpuDo(b, func(c *cuda.Ctx) error {
		k := gpuKernelFor[T](bc.cf)
		if bc.force {
			k = bc.kernel
		}
		g, err := newGPUTrailingMean[T](c, bc.rows, bc.n, bc.cf, k)
		if err != nil {
			return err
		}
		defer g.Free(c)
		f := g.fused.Function()
		attr, err := f.Attributes()
		if err != nil {
			return err
		}
		resident, err := f.MaxActiveBlocks(g.threads, 0)
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
		b.Logf("%s kernel", g.Kernel())
		return nil
	})
}

// BenchmarkGPUCopy2GiB measures the device-to-device copy bandwidth the
// anchors quote (4.27 TB/s counting read and write), with the same timing
// as the kernel benchmarks.
func BenchmarkGPUCopy2GiB(b *testing.B) {
	bytes := 1 << 30
	bytes <<= 1 // 2 GiB; not a constant, so that 32-bit builds still compile
	gpuDo(b, func(c *cuda.Ctx) error {
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

// TestGPUBenchTrailingMean runs the "dspk bench" hook on the GPU.
func TestGPUBenchTrailingMean(t *testing.T) {
	gpuDevice(t)
	dev, _, err := compute.Open("cuda:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	for _, st := range []string{"float32", "bf16", "f16"} {
		gbps, cp, err := BenchTrailingMean(dev, 256, 8192, 100, st, 3)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s [256, 8192]: %.0f GB/s, copy %.0f GB/s", st, gbps, cp)
		if !(gbps > 0 && cp > 0) {
			t.Errorf("%s: rates %v, %v", st, gbps, cp)
		}
	}
}

// TestBenchTrailingMeanCPU runs the "dspk bench" hook on the CPU (a nil
// device) and checks its argument errors.
func TestBenchTrailingMeanCPU(t *testing.T) {
	gbps, cp, err := BenchTrailingMean(nil, 8, 4096, 100, "bfloat16", 1)
	if err != nil || !(gbps > 0 && cp > 0) {
		t.Fatalf("BenchTrailingMean: %v, %v, %v", gbps, cp, err)
	}
	for _, bad := range []struct {
		storage          string
		rows, n, cf, rep int
	}{{"float64", 1, 1, 1, 1}, {"f32", 0, 1, 1, 1}, {"f32", 1, 1, 0, 1}, {"f32", 1, 1, 1, 0}} {
		if _, _, err := BenchTrailingMean(nil, bad.rows, bad.n, bad.cf, bad.storage, bad.rep); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
