package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"dspk/compute"
	"dspk/ops"
)

// TrailingShape is one case of the trailing-mean benchmark: Rows rows of
// N samples, float32 or (BF16) bfloat16.
type TrailingShape struct {
	Rows, N int
	BF16    bool
}

// defaultTrailingShapes are the cases of the trailing-mean benchmark:
// [4096, 8192] and [16, 10⁶], float32 and bfloat16.
var defaultTrailingShapes = []TrailingShape{{4096, 8192, false}, {4096, 8192, true}, {16, 1000000, false}, {16, 1000000, true}}

// trailing measures the causal trailing mean on the device, with the
// op's own constructor, against a copy of the same bytes on the same
// device.
func (r *runner) trailing() error {
	for _, c := range r.opt.TrailingShapes {
		var err error
		if c.BF16 {
			err = trailingMean[ops.BFloat16](r, c.Rows, c.N, "bfloat16", ops.BFloat16FromFloat64)
		} else {
			err = trailingMean[float32](r, c.Rows, c.N, "float32", func(v float64) float32 { return float32(v) })
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// gpuLaunches is the number of back-to-back launches one timed run of the
// GPU trailing mean and its copy make inside one Do, so that the hand-off
// and the synchronisation (tens of µs) weigh little against a 60-µs
// kernel.
const gpuLaunches = 10

// trailingMean reports one trailing mean, cf = 100, of a [rows, n] array
// of T holding pseudo-normal samples of mean 1000 and SD 1 (conv rounds
// to T): its time, its rate counting one read of the input and one write
// of the output, and its fraction of a copy of the same bytes on the
// device (GPU: device to device, from and to device arrays; CPU: the
// built-in copy on GOMAXPROCS goroutines).
func trailingMean[T float32 | ops.BFloat16](r *runner, rows, n int, name string, conv func(float64) T) error {
	const cf = 100
	dev, reps := r.dev, r.reps
	rng := rand.New(rand.NewPCG(uint64(rows*n), 1000))
	x, y := make([]T, rows*n), make([]T, rows*n)
	for i := range x {
		x[i] = conv(1000 + rng.NormFloat64())
	}
	tm, err := ops.NewTrailingMean[T](dev, rows, n, cf)
	if err != nil {
		return err
	}
	defer tm.Close()
	run := func() error { return tm.Apply(y, x) }
	workers := runtime.GOMAXPROCS(0)
	cp := func() error { copyParallel(y, x, workers); return nil }
	launches := 1
	bytes := 2 * len(x) * int(unsafe.Sizeof(x[0]))
	if dev.Kind() == compute.CUDA {
		var bx, by compute.Mem
		err := dev.Do(func(c *compute.Ctx) error {
			var err error
			if bx, err = c.Alloc(bytes / 2); err != nil {
				return err
			}
			if by, err = c.Alloc(bytes / 2); err != nil {
				return err
			}
			return compute.Upload(c, bx.Ptr, x)
		})
		defer dev.Do(func(c *compute.Ctx) error { c.Free(bx); return c.Free(by) })
		if err != nil {
			return err
		}
		launches = gpuLaunches
		repeat := func(f func(c *compute.Ctx) error) func() error {
			return func() error {
				return dev.Do(func(c *compute.Ctx) error {
					for range launches {
						if err := f(c); err != nil {
							return err
						}
					}
					return nil
				})
			}
		}
		run = repeat(func(c *compute.Ctx) error { return tm.ApplyDevice(c, by.Ptr, bx.Ptr) })
		cp = repeat(func(c *compute.Ctx) error { return c.CopyDtoD(by.Ptr, bx.Ptr, bytes/2) })
	}
	d, err := dev.Median(reps, run)
	if err != nil {
		return err
	}
	dc, err := dev.Median(reps, cp)
	if err != nil {
		return err
	}
	d, dc = d/time.Duration(launches), dc/time.Duration(launches)
	bw, copyBW := float64(bytes)/d.Seconds()/1e9, float64(bytes)/dc.Seconds()/1e9
	r.row(Row{Label: fmt.Sprintf("trailing mean [%d, %d] %s", rows, n, name), Op: "trailing mean",
		Size: fmt.Sprintf("%d×%d %s, cf %d", rows, n, name, cf), Device: dev.Spec(), Time: d, Floor: dc,
		Nums: []Num{{"gb_per_s", bw}, {"copy_gb_per_s", copyBW}},
		Text: fmt.Sprintf("%.0f GB/s, %.0f%% of copy (%.0f GB/s)", bw, 100*bw/copyBW, copyBW)})
	return nil
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
