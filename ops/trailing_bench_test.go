package ops

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

// Benchmarks of the causal trailing mean. Bytes are the compulsory traffic,
// one read of the input and one write of the output; "copy" moves the same
// bytes with the built-in copy spread over GOMAXPROCS goroutines, the
// bandwidth the fused pass is measured against. cpu-ms/op is the process's
// CPU time per call, which a loaded machine disturbs less than wall time.

var benchShapes = []struct{ rows, n, cf int }{
	{4096, 8192, 100},
	{16, 1_000_000, 100},
	{16, 1_000_000, 1_000_000},
}

func BenchmarkCausalTrailingMean(b *testing.B) {
	b.Run("float32", benchTrailing[float32])
	b.Run("BFloat16", benchTrailing[BFloat16])
	b.Run("Float16", benchTrailing[Float16])
}

func benchTrailing[T Storage](b *testing.B) {
	for _, sh := range benchShapes {
		N := sh.rows * sh.n
		x := toStorage[T](gen(rand.New(rand.NewPCG(1, 2)), "offset", N))
		dst := make([]T, N)
		var z T
		bytes := int64(2 * N * int(unsafe.Sizeof(z)))
		shape := fmt.Sprintf("%dx%d/cf%d", sh.rows, sh.n, sh.cf)
		workers := runtime.GOMAXPROCS(0)
		for _, im := range impls {
			b.Run(shape+"/fused-"+im.name, func(b *testing.B) {
				trailingMean(dst, x, sh.rows, sh.n, sh.cf, false, im.level, workers)
				b.SetBytes(bytes)
				c0 := cpuSeconds()
				for b.Loop() {
					trailingMean(dst, x, sh.rows, sh.n, sh.cf, false, im.level, workers)
				}
				reportCPU(b, c0)
			})
		}
		b.Run(shape+"/fused-inplace", func(b *testing.B) {
			in := append([]T(nil), x...)
			b.SetBytes(bytes)
			c0 := cpuSeconds()
			for b.Loop() {
				CausalTrailingMean(in, in, sh.rows, sh.n, sh.cf)
			}
			reportCPU(b, c0)
		})
		if sh.cf == 100 {
			b.Run(shape+"/eager", func(b *testing.B) {
				work := causalTrailingMeanEager(dst, x, sh.rows, sh.n, sh.cf, nil)
				b.SetBytes(bytes)
				c0 := cpuSeconds()
				for b.Loop() {
					causalTrailingMeanEager(dst, x, sh.rows, sh.n, sh.cf, work)
				}
				reportCPU(b, c0)
			})
			b.Run(shape+"/copy", func(b *testing.B) {
				parallelCopy(dst, x, workers)
				b.SetBytes(bytes)
				c0 := cpuSeconds()
				for b.Loop() {
					parallelCopy(dst, x, workers)
				}
				reportCPU(b, c0)
			})
		}
	}
}

// parallelCopy copies src to dst in workers contiguous parts.
func parallelCopy[T any](dst, src []T, workers int) {
	var wg sync.WaitGroup
	n := len(src)
	for i := range workers {
		lo, hi := i*n/workers, (i+1)*n/workers
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
}

// reportCPU reports the CPU time per iteration since c0.
func reportCPU(b *testing.B, c0 float64) {
	if c0 > 0 && b.N > 0 {
		b.ReportMetric((cpuSeconds()-c0)*1e3/float64(b.N), "cpu-ms/op")
	}
}
