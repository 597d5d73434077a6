package ops

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"dspk/internal/cuda"
)

// BenchmarkGPUTrailingMeanTrace runs the direct kernel built with
// CTM_TRACE once, after an L2 flush, and reports where its blocks spend
// their time (SM cycles, from each block's own records): entry to samples
// arrived, arrived to past the barrier, barrier to stores issued; blocks
// resident per SM on average; and the kernel's span. A diagnostic, run by
// hand (-test.bench GPUTrailingMeanTrace); the instrumentation adds a
// barrier and a few stores per block.
func BenchmarkGPUTrailingMeanTrace(b *testing.B) {
	for _, bc := range []gpuBenchCase{
		{4096, 8192, 100, "f32", gpuTrailingOptions{}, false},
		{4096, 8192, 100, "bf16", gpuTrailingOptions{}, false},
		{16, 1_000_000, 100, "bf16", gpuTrailingOptions{}, false},
	} {
		b.Run(bc.name(), func(b *testing.B) {
			gpuDo(b, func(c *cuda.Ctx) error {
				var rep string
				var err error
				switch bc.storage {
				case "f32":
					rep, err = traceGPUTrailing[float32](c, bc.rows, bc.n, bc.cf, bc.opt)
				default:
					rep, err = traceGPUTrailing[BFloat16](c, bc.rows, bc.n, bc.cf, bc.opt)
				}
				if err == nil {
					b.Log("\n" + rep)
				}
				return err
			})
		})
	}
}

const traceWords = 16 // CTM_TRACE_WORDS

func traceGPUTrailing[T Storage](c *cuda.Ctx, rows, n, cf int, opt gpuTrailingOptions) (string, error) {
	opt.defines = append(opt.defines, "-DCTM_TRACE")
	g, err := newGPUTrailingMean[T](c, rows, n, cf, opt)
	if err != nil {
		return "", err
	}
	defer g.Free(c)
	total := rows * g.chunks
	x, err := c.Alloc(g.bytes())
	if err != nil {
		return "", err
	}
	defer c.Free(x)
	y, err := c.Alloc(g.bytes())
	if err != nil {
		return "", err
	}
	defer c.Free(y)
	tr, err := c.Alloc(total * traceWords * 8)
	if err != nil {
		return "", err
	}
	defer c.Free(tr)
	if err := g.fill(c, x.Ptr, rows*n, 1, 1000, 1); err != nil {
		return "", err
	}
	set, err := g.mod.Function("ctm_trace_set")
	if err != nil {
		return "", err
	}
	if err := c.Launch(set, cuda.D1(1), cuda.D1(1), 0, tr); err != nil {
		return "", err
	}
	t, err := newGPUTimer(c, 3)
	if err != nil {
		return "", err
	}
	defer t.free(c)
	sec, err := t.median(c, func() error { return g.Apply(c, y.Ptr, x.Ptr) })
	if err != nil {
		return "", err
	}
	// The last call's records (every call rewrites all of them).
	h, err := c.AllocHost(total * traceWords * 8)
	if err != nil {
		return "", err
	}
	defer c.FreeHost(h)
	if err := c.CopyDtoH(h, 0, tr.Ptr, h.Len()); err != nil {
		return "", err
	}
	if err := c.Sync(); err != nil {
		return "", err
	}
	rec := unsafe.Slice((*uint64)(h.Ptr()), total*traceWords)
	return traceReport(rec, total, g.chunks, sec, 2*float64(g.bytes())), nil
}

// traceReport summarises the block records.
func traceReport(rec []uint64, total, chunks int, sec, bytes float64) string {
	type blk struct{ sm, p0, p1, p2, p3, l0, l1, l2, l3, lo, hi, g0, g1 uint64 }
	bs := make([]blk, total)
	for i := range bs {
		r := rec[i*traceWords:]
		bs[i] = blk{r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12]}
	}
	pct := func(v []float64) string {
		if len(v) == 0 {
			return "(none)"
		}
		slices.Sort(v)
		q := func(p float64) float64 { return v[int(p*float64(len(v)-1))] }
		return fmt.Sprintf("p10 %6.0f  p50 %6.0f  p90 %6.0f  p99 %6.0f  mean %6.0f", q(0.1), q(0.5), q(0.9), q(0.99), traceMean(v))
	}
	var life, arrive, arriveLast, wait, tail, lastArr, lifeFirst, tailFirst []float64
	bySM := map[uint64][]blk{}
	gmin, gmax := ^uint64(0), uint64(0)
	for i, b := range bs {
		if i%chunks == 0 {
			lifeFirst = append(lifeFirst, float64(b.p3-b.p0))
			tailFirst = append(tailFirst, float64(b.p3-b.p2))
		}
		life = append(life, float64(b.p3-b.p0))
		arrive = append(arrive, float64(b.p1-b.p0))
		arriveLast = append(arriveLast, float64(b.hi-b.p0))
		lastArr = append(lastArr, float64(b.l1-b.l0))
		wait = append(wait, float64(b.p2-b.hi))
		tail = append(tail, float64(b.p3-b.p2))
		bySM[b.sm] = append(bySM[b.sm], b)
		gmin, gmax = min(gmin, b.g0), max(gmax, b.g1)
	}
	var resident, gaps, perSM, spanCyc, rate []float64
	for _, l := range bySM {
		slices.SortFunc(l, func(a, b blk) int { return int(int64(a.p0 - b.p0)) })
		first, last := l[0].p0, uint64(0)
		sum := 0.0
		for i, b := range l {
			sum += float64(b.p3 - b.p0)
			last = max(last, b.p3)
			if i > 0 {
				gaps = append(gaps, float64(b.p0-l[i-1].p0))
			}
		}
		span := float64(last - first)
		resident = append(resident, sum/span)
		perSM = append(perSM, float64(len(l)))
		spanCyc = append(spanCyc, span)
		// SM clock from the global timer of its first and last block.
		g := float64(l[len(l)-1].g1) - float64(l[0].g0)
		if g > 0 {
			rate = append(rate, span/g)
		}
	}
	s := fmt.Sprintf("kernel %.1f µs (%.0f GB/s) median of 3; traced call spans %.1f µs (global timer); %d SMs, blocks per SM %s\n",
		sec*1e6, bytes/sec/1e9, float64(gmax-gmin)/1e3, len(bySM), pct(perSM))
	s += fmt.Sprintf("SM clock from the traces: %.2f GHz (median)\n", traceMedian(rate))
	s += "cycles per block:\n"
	s += "  entry → warp 0 samples in      " + pct(arrive) + "\n"
	s += "  entry → last warp's samples in " + pct(arriveLast) + "\n"
	s += "  last warp: entry → samples in  " + pct(lastArr) + "\n"
	s += "  last samples in → past barrier " + pct(wait) + "\n"
	s += "  barrier → stores issued        " + pct(tail) + "\n"
	s += "  lifetime                       " + pct(life) + "\n"
	s += "  a row's first chunk: lifetime  " + pct(lifeFirst) + "\n"
	s += "         barrier → stores issued " + pct(tailFirst) + "\n"
	s += "per SM: blocks resident on average " + pct(resident) + "\n"
	s += "        cycles between block starts " + pct(gaps) + "\n"
	s += "        span (cycles)               " + pct(spanCyc) + "\n"
	return s
}

func traceMean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func traceMedian(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// TestTraceReport checks traceReport on synthetic records: two SMs, each
// running two blocks one after the other (entry 0 and 100, samples in 40
// cycles later, barrier 20 later, stores 40 later), chunks of 2 per row.
func TestTraceReport(t *testing.T) {
	const total = 4
	rec := make([]uint64, total*traceWords)
	for i := range total {
		r := rec[i*traceWords:]
		start := uint64(100 * (i / 2))
		r[0] = uint64(i % 2) // SM
		for _, off := range []int{1, 5} {
			r[off], r[off+1], r[off+2], r[off+3] = start, start+40, start+60, start+100
		}
		r[9], r[10] = start+40, start+40 // earliest and latest samples in
		r[11], r[12] = start*10, start*10+1000
	}
	rep := traceReport(rec, total, 2, 1e-6, 1e6)
	for _, want := range []string{
		"2 SMs, blocks per SM p10      2  p50      2",
		"entry → warp 0 samples in      p10     40  p50     40",
		"last samples in → past barrier p10     20",
		"barrier → stores issued        p10     40",
		"lifetime                       p10    100  p50    100",
		"blocks resident on average p10      1  p50      1",
		"cycles between block starts p10    100",
		"span (cycles)               p10    200",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
}
