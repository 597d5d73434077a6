package ops

import (
	"runtime"
	"sync"
)

// The eager formulation of the causal trailing mean, the baseline the
// tests and benchmarks compare the fused pass with.

// eagerWorkLen returns the float32 workspace length causalTrailingMeanEager
// needs for a [rows, n] array: four materialised [rows, n] intermediates and
// the divisor row.
func eagerWorkLen(rows, n int) int { return 4*rows*n + n }

// causalTrailingMeanEager computes the causal trailing mean the way an eager
// tensor library does it, one materialised pass per step with float32
// intermediates:
//
//	a = float32(x)                      (cast; skipped for float32 storage)
//	c = cumsum(a) along each row        (sequential float32 accumulation)
//	p = pad(c, cf zeros on the left)[:n] (c shifted right by cf)
//	w = c − p
//	m = w / count, count[t] = min(t+1, cf)
//	dst = T(m)                          (cast; skipped for float32 storage)
//
// It exists as the baseline the fused pass is measured against, and to show
// its flaw: the float32 prefix sum loses digits as it grows, so the error of
// a long row with an offset grows with the row length. Each pass is spread
// over GOMAXPROCS goroutines by rows. work must be nil (then it is
// allocated) or hold at least eagerWorkLen(rows, n) elements; it is returned
// for reuse. dst and src may be the same slice. It panics on the same shape
// misuse as CausalTrailingMean.
func causalTrailingMeanEager[T Storage](dst, src []T, rows, n, cf int, work []float32) []float32 {
	checkShape("causalTrailingMeanEager", len(dst), len(src), rows, n, cf)
	if rows*n == 0 {
		return work
	}
	N := rows * n
	if work == nil {
		work = make([]float32, eagerWorkLen(rows, n))
	}
	if len(work) < eagerWorkLen(rows, n) {
		panic("ops: causalTrailingMeanEager: work shorter than eagerWorkLen(rows, n)")
	}
	a, c, p, w, count := work[:N], work[N:2*N], work[2*N:3*N], work[3*N:4*N], work[4*N:4*N+n]

	// Pass 1: cast to float32.
	switch s := any(src).(type) {
	case []float32:
		a = s
	case []Float16:
		eagerRows(rows, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				a[i] = s[i].Float32()
			}
		})
	case []BFloat16:
		eagerRows(rows, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				a[i] = s[i].Float32()
			}
		})
	}
	// Pass 2: cumsum along rows.
	eagerRows(rows, n, func(lo, hi int) {
		for r := lo; r < hi; r += n {
			var acc float32
			for i := r; i < r+n; i++ {
				acc += a[i]
				c[i] = acc
			}
		}
	})
	// Pass 3: pad (shift right by cf with zeros).
	eagerRows(rows, n, func(lo, hi int) {
		for r := lo; r < hi; r += n {
			k := min(cf, n)
			clear(p[r : r+k])
			copy(p[r+k:r+n], c[r:r+n-k])
		}
	})
	// Pass 4: subtract.
	eagerRows(rows, n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			w[i] = c[i] - p[i]
		}
	})
	// Pass 5: divide by the window count (a float32 row, as a broadcast
	// tensor would be).
	for t := range count {
		count[t] = float32(min(t+1, cf))
	}
	var m []float32
	if d, ok := any(dst).([]float32); ok {
		m = d
	} else {
		m = p // p is dead: reuse it as the quotient before the cast.
	}
	eagerRows(rows, n, func(lo, hi int) {
		for r := lo; r < hi; r += n {
			for t := range n {
				m[r+t] = w[r+t] / count[t]
			}
		}
	})
	// Pass 6: cast to the storage type.
	switch d := any(dst).(type) {
	case []Float16:
		eagerRows(rows, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d[i] = Float16FromFloat32(m[i])
			}
		})
	case []BFloat16:
		eagerRows(rows, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d[i] = BFloat16FromFloat32(m[i])
			}
		})
	}
	return work
}

// eagerRows runs f over [lo, hi) element ranges made of whole rows, spread
// over GOMAXPROCS goroutines, and waits.
func eagerRows(rows, n int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), rows)
	if rows*n < parallelMin || workers <= 1 {
		f(0, rows*n)
		return
	}
	var wg sync.WaitGroup
	for i := range workers {
		r0, r1 := i*rows/workers, (i+1)*rows/workers
		wg.Go(func() { f(r0*n, r1*n) })
	}
	wg.Wait()
}
