package ops

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"dspk/compute"
	"dspk/internal/cuda"
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
	if bc.opt.block {
		s += "/block"
	}
	if bc.opt.group > 0 {
		s += fmt.Sprintf("/group%d", bc.opt.group)
	}
	if bc.opt.minBlocks > 0 {
		s += fmt.Sprintf("/minblocks%d", bc.opt.minBlocks)
	}
	if bc.opt.items > 0 {
		s += fmt.Sprintf("/items%d", bc.opt.items)
	}
	if bc.opt.warpItems > 0 {
		s += fmt.Sprintf("/witems%d", bc.opt.warpItems)
	}
	if bc.opt.persist > 0 {
		s += fmt.Sprintf("/persist%d", bc.opt.persist)
	}
	for _, d := range bc.opt.defines {
		s += "/" + strings.TrimPrefix(d, "-D")
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
// window, unaligned rows, the longest direct window, and the variants.
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
	{4096, 8191, 100, "f32", gpuTrailingOptions{}, false},
	{4096, 8191, 100, "bf16", gpuTrailingOptions{}, false},
	{4096, 8192, 2048, "bf16", gpuTrailingOptions{}, false},
	{4096, 8192, 100, "f32", gpuTrailingOptions{block: true}, false},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{block: true}, false},
	{16, 1_000_000, 100, "bf16", gpuTrailingOptions{block: true}, false},
	{4096, 8192, 500, "bf16", gpuTrailingOptions{}, false},
	// Variants: register budgets (minBlocks ×256 threads per
	// multiprocessor; defaults float32 7, 16-bit 5), samples per thread
	// (float32 8, 16-bit 16), chunks per block (1), persistent blocks.
	{4096, 8192, 100, "f32", gpuTrailingOptions{minBlocks: 6}, false},
	{4096, 8192, 100, "f32", gpuTrailingOptions{minBlocks: 8}, false},
	{4096, 8192, 100, "f32", gpuTrailingOptions{minBlocks: 4, persist: 4}, false},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{minBlocks: 4}, false},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{minBlocks: 6}, false},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{minBlocks: 7}, false},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{minBlocks: 8}, false},
	{4096, 8192, 100, "bf16", gpuTrailingOptions{items: 8}, false},
	{16, 1_000_000, 100, "f32", gpuTrailingOptions{minBlocks: 6}, false},
	{16, 1_000_000, 100, "f32", gpuTrailingOptions{minBlocks: 8}, false},
	{16, 1_000_000, 100, "bf16", gpuTrailingOptions{minBlocks: 4}, false},
	{16, 1_000_000, 100, "bf16", gpuTrailingOptions{minBlocks: 6}, false},
	{16, 1_000_000, 100, "bf16", gpuTrailingOptions{minBlocks: 7}, false},
	{16, 1_000_000, 100, "bf16", gpuTrailingOptions{minBlocks: 8}, false},
}

func BenchmarkGPUTrailingMean(b *testing.B) {
	for _, bc := range gpuBenchCases {
		b.Run(bc.name(), bc.bench)
	}
}

// BenchmarkGPUTrailingMeanVariants measures build variants of the kernels
// named at run time, so that one GPU call can compare several without a
// rebuild: CTM_VARIANTS is a ';'-separated list of variants, each a
// space-separated list of NVRTC options ("-DCTM_LAG_AFTER=1"; "base" or
// nothing for the default build; "block" forces the block-wide direct
// kernel, "witemsN" N samples per thread in the warp kernels), each
// measured on [4096, 8192] bfloat16
// and float32 and [16, 10⁶] bfloat16, cf 100. It skips without
// CTM_VARIANTS.
func BenchmarkGPUTrailingMeanVariants(b *testing.B) {
	spec := os.Getenv("CTM_VARIANTS")
	if spec == "" {
		b.Skip("CTM_VARIANTS is not set")
	}
	for _, v := range strings.Split(spec, ";") {
		var opt gpuTrailingOptions
		for _, f := range strings.Fields(v) {
			switch f {
			case "base":
			case "block":
				opt.block = true
			case "witems8", "witems16", "witems32":
				opt.warpItems, _ = strconv.Atoi(strings.TrimPrefix(f, "witems"))
			default:
				opt.defines = append(opt.defines, f)
			}
		}
		for _, bc := range []gpuBenchCase{
			{4096, 8192, 100, "bf16", opt, false},
			{4096, 8192, 100, "f32", opt, false},
			{16, 1_000_000, 100, "bf16", opt, false},
		} {
			b.Run(bc.name(), bc.bench)
		}
	}
}

// bench runs the case and reports its rates, the kernel's registers and
// spills and its resident blocks per multiprocessor.
func (bc gpuBenchCase) bench(b *testing.B) {
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
		b.ReportMetric(float64(r.Kernel.Registers), "regs")
		b.ReportMetric(float64(r.Kernel.LocalBytes), "local-B")
		b.ReportMetric(float64(r.Resident), "blocks/SM")
		if r.Eager > 0 {
			b.ReportMetric(r.GBps(r.Eager), "eagerGB/s")
			b.ReportMetric(r.Eager/r.Fused, "x-eager")
		}
		return nil
	})
}

// BenchmarkGPUCopy2GiB measures the device-to-device copy bandwidth the
// anchors quote (4.27 TB/s counting read and write), with the same timing
// as the fused benchmarks.
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
