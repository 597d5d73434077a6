package ops

import (
	"slices"

	"dspk/internal/cuda"
)

// gpuFlushBytes is the size of the buffer written before each timed call to
// evict the previous call's data from the L2 cache (50 MB on an H200).
const gpuFlushBytes = 256 << 20

// gpuTimer times device work with CUDA events, each call after a write of a
// gpuFlushBytes buffer, so that no call finds its data in the L2 cache.
type gpuTimer struct {
	flush cuda.Buffer
	ev    []cuda.Event
}

func newGPUTimer(c *cuda.Ctx, reps int) (*gpuTimer, error) {
	t := &gpuTimer{}
	var err error
	if t.flush, err = c.Alloc(gpuFlushBytes); err != nil {
		return nil, err
	}
	for range 2 * reps {
		e, err := c.NewEvent()
		if err != nil {
			t.free(c)
			return nil, err
		}
		t.ev = append(t.ev, e)
	}
	return t, nil
}

func (t *gpuTimer) free(c *cuda.Ctx) {
	for _, e := range t.ev {
		c.DestroyEvent(e)
	}
	c.Free(t.flush)
	t.ev, t.flush = nil, cuda.Buffer{}
}

// median runs fn once to warm up, then len(ev)/2 times, each after a cache
// flush and between two events, and returns the median time in seconds.
func (t *gpuTimer) median(c *cuda.Ctx, fn func() error) (float64, error) {
	if err := fn(); err != nil {
		return 0, err
	}
	reps := len(t.ev) / 2
	for i := range reps {
		if err := c.Memset32(t.flush.Ptr, uint32(i), t.flush.Bytes/4); err != nil {
			return 0, err
		}
		if err := c.Record(t.ev[2*i]); err != nil {
			return 0, err
		}
		if err := fn(); err != nil {
			return 0, err
		}
		if err := c.Record(t.ev[2*i+1]); err != nil {
			return 0, err
		}
	}
	if err := c.Sync(); err != nil {
		return 0, err
	}
	ms := make([]float64, reps)
	for i := range ms {
		v, err := c.Elapsed(t.ev[2*i], t.ev[2*i+1])
		if err != nil {
			return 0, err
		}
		ms[i] = float64(v)
	}
	slices.Sort(ms)
	return ms[reps/2] / 1e3, nil
}

// gpuBench is the outcome of benchGPUTrailing: median seconds per call.
type gpuBench struct {
	// Bytes is the compulsory traffic of one call: one read of the input
	// and one write of the output.
	Bytes float64
	// Fused, Eager and Copy time the fused pass, the eager formulation (0
	// unless asked for) and a device-to-device copy of the input (moving
	// the same Bytes).
	Fused, Eager, Copy float64
	// Lookback reports which fused kernel ran.
	Lookback bool
	// Kernel is what the compiler gave the fused kernel; Resident, how
	// many of its blocks fit on a multiprocessor.
	Kernel   cuda.FuncAttributes
	Resident int
}

// GBps returns bytes per second, in GB/s, at s seconds per call.
func (b gpuBench) GBps(s float64) float64 { return b.Bytes / s / 1e9 }

// benchGPUTrailing times, on a fresh pseudo-normal [rows, n] input of T
// (mean 1000, SD 1), the fused pass, optionally the eager formulation, and
// a device-to-device copy of the same array, reps calls each after a cache
// flush; medians.
func benchGPUTrailing[T Storage](c *cuda.Ctx, rows, n, cf, reps int, opt gpuTrailingOptions, eager bool) (gpuBench, error) {
	g, err := newGPUTrailingMean[T](c, rows, n, cf, opt)
	if err != nil {
		return gpuBench{}, err
	}
	defer g.Free(c)
	res := gpuBench{Bytes: 2 * float64(g.bytes()), Lookback: g.lookback}
	if g.rows*g.n == 0 {
		return res, nil
	}
	if res.Kernel, res.Resident, err = g.kernelAttributes(); err != nil {
		return res, err
	}
	x, err := c.Alloc(g.bytes())
	if err != nil {
		return res, err
	}
	defer c.Free(x)
	y, err := c.Alloc(g.bytes())
	if err != nil {
		return res, err
	}
	defer c.Free(y)
	if err := g.fill(c, x.Ptr, rows*n, 1, 1000, 1); err != nil {
		return res, err
	}
	t, err := newGPUTimer(c, reps)
	if err != nil {
		return res, err
	}
	defer t.free(c)
	if res.Fused, err = t.median(c, func() error { return g.Apply(c, y.Ptr, x.Ptr) }); err != nil {
		return res, err
	}
	if eager {
		if res.Eager, err = t.median(c, func() error { return g.ApplyEager(c, y.Ptr, x.Ptr) }); err != nil {
			return res, err
		}
	}
	res.Copy, err = t.median(c, func() error { return c.CopyDtoD(y.Ptr, x.Ptr, g.bytes()) })
	return res, err
}
