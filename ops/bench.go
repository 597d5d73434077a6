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
	st := strings.ToLower(storage)
	gpu := dev != nil && dev.Kind() == compute.CUDA
	switch st {
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
	if gpu {
		var r gpuBench
		err = dev.CUDA().Do(func(c *cuda.Ctx) error {
			var err error
			r, err = benchGPUTrailing[T](c, rows, n, cf, reps, gpuTrailingOptions{}, false)
			return err
		})
		if err != nil {
			return 0, 0, err
		}
		return r.GBps(r.Fused), r.GBps(r.Copy), nil
	}
	N := rows * n
	rng := rand.New(rand.NewPCG(uint64(rows), uint64(n)))
	x := make([]T, N)
	for i := range x {
		x[i] = fromFloat64[T](1000 + rng.NormFloat64())
	}
	y := make([]T, N)
	workers := runtime.GOMAXPROCS(0)
	bytes := float64(2 * N * elemSize[T]())
	d := medianDuration(reps, func() { CausalTrailingMean(y, x, rows, n, cf) })
	dc := medianDuration(reps, func() { copyParallel(y, x, workers) })
	return bytes / d.Seconds() / 1e9, bytes / dc.Seconds() / 1e9, nil
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
