package ops

import (
	"runtime"
	"sync"
)

// CausalTrailingMeanRef is the float64 reference of CausalTrailingMean:
//
//	dst[r*n+t] = (src[r*n+t-k+1] + … + src[r*n+t]) / k,  k = min(t+1, cf)
//
// Each window sum is the difference of two prefix sums kept in double-double
// arithmetic (an error-free TwoSum per sample), so it is exact to about 2⁻¹⁰⁰
// of the prefix magnitude whatever the row length; the mean is then the
// float64 quotient, within one float64 rounding of the exact value for any
// practical length. It is independent of the fused pass (no running
// difference, no blocking) and single-threaded. dst and src may be the same
// slice. It panics on the same shape misuse as CausalTrailingMean.
func CausalTrailingMeanRef(dst, src []float64, rows, n, cf int) {
	checkShape("CausalTrailingMeanRef", len(dst), len(src), rows, n, cf)
	if rows*n == 0 {
		return
	}
	inPlace := &dst[0] == &src[0]
	for r := range rows {
		x, y := src[r*n:(r+1)*n], dst[r*n:(r+1)*n]
		// lead: prefix sum of x[0 … t]; trail: prefix sum of x[0 … t−cf].
		var leadHi, leadLo, trailHi, trailLo float64
		// In place, y[t−cf] is overwritten before trail needs x[t−cf]: keep
		// the last cf inputs in a ring.
		var ring []float64
		if inPlace {
			ring = make([]float64, min(cf, n))
		}
		for t := range n {
			v := x[t]
			leadHi, leadLo = twoSumAdd(leadHi, leadLo, v)
			if t >= cf {
				old := 0.0
				if ring != nil {
					old = ring[t%cf]
				} else {
					old = x[t-cf]
				}
				trailHi, trailLo = twoSumAdd(trailHi, trailLo, old)
			}
			if ring != nil {
				ring[t%cf] = v
			}
			// (leadHi + leadLo) − (trailHi + trailLo), in double-double.
			h, l := twoSum(leadHi, -trailHi)
			l += leadLo - trailLo
			y[t] = (h + l) / float64(min(t+1, cf))
		}
	}
}

// twoSum returns s = fl(a+b) and the exact error e with a + b = s + e.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// twoSumAdd adds v to the double-double (hi, lo).
func twoSumAdd(hi, lo, v float64) (float64, float64) {
	s, e := twoSum(hi, v)
	e += lo
	return fastTwoSum(s, e)
}

// fastTwoSum renormalises s + e with |s| ≥ |e|.
func fastTwoSum(s, e float64) (float64, float64) {
	h := s + e
	return h, e - (h - s)
}

// EagerWorkLen returns the float32 workspace length CausalTrailingMeanEager
// needs for a [rows, n] array: four materialised [rows, n] intermediates and
// the divisor row.
func EagerWorkLen(rows, n int) int { return 4*rows*n + n }

// CausalTrailingMeanEager computes the causal trailing mean the way an eager
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
// allocated) or hold at least EagerWorkLen(rows, n) elements; it is returned
// for reuse. dst and src may be the same slice. It panics on the same shape
// misuse as CausalTrailingMean.
func CausalTrailingMeanEager[T Storage](dst, src []T, rows, n, cf int, work []float32) []float32 {
	checkShape("CausalTrailingMeanEager", len(dst), len(src), rows, n, cf)
	if rows*n == 0 {
		return work
	}
	N := rows * n
	if work == nil {
		work = make([]float32, EagerWorkLen(rows, n))
	}
	if len(work) < EagerWorkLen(rows, n) {
		panic("ops: CausalTrailingMeanEager: work shorter than EagerWorkLen(rows, n)")
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
