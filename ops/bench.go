package ops

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"dspk/compute"
	"dspk/internal/cuda"
)

// BenchTrailingMean measures CausalTrailingMean on dev (the CPU when dev is
// nil or a CPU device, else the GPU through GPUTrailingMean) for a [rows, n]
// array of the named storage type — "float32", "float16" or "bfloat16"
// ("f32", "f16", "bf16") — with window cf, on pseudo-normal data with mean
// 1000 and SD 1. It returns the median rate over reps calls (after one
// warm-up) and the median rate of a copy of the same array on the same
// device, both in GB/s counting one read of the input and one write of the
// output. On the CPU the copy is the built-in copy spread over GOMAXPROCS
// goroutines; on the GPU it is a device-to-device copy, and every call runs
// after a write of 256 MiB that evicts the previous call's data from the L2
// cache. It is the hook of "dspk bench".
func BenchTrailingMean(dev *compute.Device, rows, n, cf int, storage string, reps int) (gbps, copyGBps float64, err error) {
	if reps < 1 {
		return 0, 0, fmt.Errorf("ops: BenchTrailingMean: reps = %d, want ≥ 1", reps)
	}
	if rows < 1 || n < 1 || cf < 1 {
		return 0, 0, fmt.Errorf("ops: BenchTrailingMean: shape [%d, %d], cf %d: want all ≥ 1", rows, n, cf)
	}
	gpu := dev != nil && dev.Kind() == compute.CUDA
	switch strings.ToLower(storage) {
	case "float32", "f32":
		return benchTrailingMean[float32](dev, gpu, rows, n, cf, reps)
	case "float16", "f16", "half":
		return benchTrailingMean[Float16](dev, gpu, rows, n, cf, reps)
	case "bfloat16", "bf16":
		return benchTrailingMean[BFloat16](dev, gpu, rows, n, cf, reps)
	}
	return 0, 0, fmt.Errorf("ops: BenchTrailingMean: unknown storage type %q (want float32, float16 or bfloat16)", storage)
}

func benchTrailingMean[T Storage](dev *compute.Device, gpu bool, rows, n, cf, reps int) (gbps, copyGBps float64, err error) {
	x := benchInput[T](rows * n)
	bytes := float64(2 * len(x) * elemSize[T]())
	if gpu {
		var s, sc float64
		err = dev.CUDA().Do(func(c *cuda.Ctx) error {
			g, err := NewGPUTrailingMean[T](c, rows, n, cf)
			if err != nil {
				return err
			}
			defer g.Free(c)
			s, sc, err = gpuTimes(c, g, x, reps)
			return err
		})
		return bytes / s / 1e9, bytes / sc / 1e9, err
	}
	y := make([]T, len(x))
	workers := runtime.GOMAXPROCS(0)
	d := medianDuration(reps, func() { CausalTrailingMean(y, x, rows, n, cf) })
	dc := medianDuration(reps, func() { copyParallel(y, x, workers) })
	return bytes / d.Seconds() / 1e9, bytes / dc.Seconds() / 1e9, nil
}

// benchInput returns N pseudo-normal samples of mean 1000 and SD 1 rounded
// to T, the same for every call.
func benchInput[T Storage](N int) []T {
	rng := rand.New(rand.NewPCG(uint64(N), 1000))
	x := make([]T, N)
	for i := range x {
		x[i] = fromFloat64[T](1000 + rng.NormFloat64())
	}
	return x
}

// fromFloat64 rounds v to T.
func fromFloat64[T Storage](v float64) T {
	var z T
	switch any(z).(type) {
	case float32:
		return any(float32(v)).(T)
	case Float16:
		return any(Float16FromFloat64(v)).(T)
	}
	return any(BFloat16FromFloat64(v)).(T)
}

// medianDuration runs fn once, then reps times, and returns the median
// duration.
func medianDuration(reps int, fn func()) time.Duration {
	fn()
	d := make([]time.Duration, reps)
	for i := range d {
		t := time.Now()
		fn()
		d[i] = time.Since(t)
	}
	slices.Sort(d)
	return d[reps/2]
}

// copyParallel copies src to dst in workers contiguous parts, one goroutine
// each.
func copyParallel[T any](dst, src []T, workers int) {
	var wg sync.WaitGroup
	n := len(src)
	for i := range workers {
		lo, hi := i*n/workers, (i+1)*n/workers
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
}

// gpuFlushBytes is the size of the buffer written before each timed call to
// evict the previous call's data from the L2 cache (50 MB on an H200).
const gpuFlushBytes = 256 << 20

// gpuTimes uploads x, the input of g, and returns the median seconds per
// call of g.Apply into a second array and of a device-to-device copy of the
// same bytes (gpuMedian).
func gpuTimes[T Storage](c *cuda.Ctx, g *GPUTrailingMean[T], x []T, reps int) (fused, cp float64, err error) {
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
	if err := cuda.Upload(c, bx.Ptr, x); err != nil {
		return 0, 0, err
	}
	if fused, err = gpuMedian(c, reps, func() error { return g.Apply(c, by.Ptr, bx.Ptr) }); err != nil {
		return 0, 0, err
	}
	cp, err = gpuMedian(c, reps, func() error { return c.CopyDtoD(by.Ptr, bx.Ptr, g.bytes()) })
	return fused, cp, err
}

// gpuMedian runs fn once to warm up, then reps times, each after a write of
// gpuFlushBytes (so that no call finds its data in the L2 cache) and
// between two CUDA events, and returns the median time in seconds.
func gpuMedian(c *cuda.Ctx, reps int, fn func() error) (sec float64, err error) {
	flush, err := c.Alloc(gpuFlushBytes)
	if err != nil {
		return 0, err
	}
	defer c.Free(flush)
	ev := make([]cuda.Event, 0, 2*reps)
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
