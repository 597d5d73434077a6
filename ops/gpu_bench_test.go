package ops

import (
	"fmt"
	"testing"

	"dspk/compute/cuda"
)

// GPU benchmarks. Every timed call runs after a 256 MiB write that evicts
// the previous call's data from L2, between two CUDA events; the metrics
// are medians over max(b.N, 5) calls (run with -test.benchtime=20x).
// Bytes are the compulsory traffic, one read of the input and one write of
// the output; "copy" moves the same bytes with cuMemcpyDtoDAsync.

// gpuBenchCase is one benchmarked configuration.
type gpuBenchCase struct {
	rows, n, cf int
	storage     string
	opt         gpuTrailingOptions
	eager       bool
}

func (bc gpuBenchCase) name() string {
	s := fmt.Sprintf("%dx%d/cf%d/%s", bc.rows, bc.n, bc.cf, bc.storage)
	if bc.opt.lookback {
		s += "/lookback"
	}
	if bc.opt.group > 0 {
		s += fmt.Sprintf("/group%d", bc.opt.group)
	}
	if bc.opt.minBlocks > 1 {
		s += fmt.Sprintf("/minblocks%d", bc.opt.minBlocks)
	}
	return s
}

func (bc gpuBenchCase) run(c *cuda.Ctx, reps int) (gpuBench, error) {
	switch bc.storage {
	case "f32":
		return benchGPUTrailing[float32](c, bc.rows, bc.n, bc.cf, reps, bc.opt, bc.eager)
	case "f16":
		return benchGPUTrailing[Float16](c, bc.rows, bc.n, bc.cf, reps, bc.opt, bc.eager)
	}
	return benchGPUTrailing[BFloat16](c, bc.rows, bc.n, bc.cf, reps, bc.opt, bc.eager)
}

// gpuBenchCases are the shapes ([4096, 8192] and [16, 1 000 000],
// cf = 100, float32 and bfloat16, with the eager formulation), the prefix
// mean of long rows (look-back), the look-back kernel forced on a short
// window, unaligned rows, and the chunks-per-block variants.
var gpuBenchCases = []gpuBenchCase{
	{4096, 8192, 100, "f32", gpuTrailingOptions{}, true},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{}, true},
	{4096, 8192, 100, "f16", gpuTrailingOptions{}, false},
	{16, 1_000_000, 100, "f32", gpuTrailingOptions{}, true},
	{16, 1_000_000, 100, "bf16", gpuTrailingOptions{}, true},
	{16, 1_000_000, 1_000_000, "f32", gpuTrailingOptions{}, false},
	{16, 1_000_000, 1_000_000, "bf16", gpuTrailingOptions{}, false},
	{4096, 8192, 100, "f32", gpuTrailingOptions{lookback: true}, false},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{lookback: true}, false},
	{16, 1_000_000, 100, "bf16", gpuTrailingOptions{lookback: true}, false},
	{4096, 8191, 100, "f32", gpuTrailingOptions{}, false},
	{4096, 8191, 100, "bf16", gpuTrailingOptions{}, false},
	{4096, 8192, 100, "f32", gpuTrailingOptions{group: 2}, false},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{group: 1}, false},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{group: 2, minBlocks: 4}, false},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{group: 4}, false},
	{16, 1_000_000, 100, "bf16", gpuTrailingOptions{group: 4}, false},
}

func BenchmarkGPUTrailingMean(b *testing.B) {
	for _, bc := range gpuBenchCases {
		b.Run(bc.name(), func(b *testing.B) {
			gpuDo(b, func(c *cuda.Ctx) error {
				r, err := bc.run(c, max(b.N, 5))
				if err != nil {
					return err
				}
				fused, cp := r.GBps(r.Fused), r.GBps(r.Copy)
				b.ReportMetric(r.Fused*1e6, "µs")
				b.ReportMetric(fused, "GB/s")
				b.ReportMetric(cp, "copyGB/s")
				b.ReportMetric(fused/cp, "of-copy")
				b.ReportMetric(fused/4270, "of-4270")
				if r.Eager > 0 {
					b.ReportMetric(r.GBps(r.Eager), "eagerGB/s")
					b.ReportMetric(r.Eager/r.Fused, "x-eager")
				}
				return nil
			})
		})
	}
}

// BenchmarkGPUCopy2GiB measures the device-to-device copy bandwidth the
// anchors quote (4.27 TB/s counting read and write), with the same timing
// as the fused benchmarks.
func BenchmarkGPUCopy2GiB(b *testing.B) {
	const bytes = 2 << 30
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
		t, err := newGPUTimer(c, max(b.N, 5))
		if err != nil {
			return err
		}
		defer t.free(c)
		s, err := t.median(c, func() error { return c.CopyDtoD(y.Ptr, x.Ptr, bytes) })
		if err != nil {
			return err
		}
		b.ReportMetric(s*1e3, "ms")
		b.ReportMetric(2*bytes/s/1e9, "GB/s")
		return nil
	})
}
