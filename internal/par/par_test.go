package par

import (
	"sync/atomic"
	"testing"
)

// TestSplit checks that Split covers [0, n) once, in the ranges
// [w·n/W, (w+1)·n/W), each worker index once.
func TestSplit(t *testing.T) {
	var l Loop
	for _, n := range []int{0, 1, 2, 7, 100, 1001} {
		for _, workers := range []int{0, 1, 2, 3, 8, 200} {
			hits := make([]int32, n)
			var calls atomic.Int32
			W := max(1, min(workers, n))
			seen := make([]atomic.Int32, W)
			l.Split(n, workers, func(w, lo, hi int) {
				calls.Add(1)
				seen[w].Add(1)
				if n > 0 && (lo != w*n/W || hi != (w+1)*n/W) {
					t.Errorf("n %d, %d workers: worker %d got [%d, %d)", n, workers, w, lo, hi)
				}
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&hits[i], 1)
				}
			})
			if int(calls.Load()) != W {
				t.Errorf("n %d, %d workers: %d calls, want %d", n, workers, calls.Load(), W)
			}
			for w := range seen {
				if seen[w].Load() != 1 {
					t.Errorf("n %d, %d workers: worker %d ran %d times", n, workers, w, seen[w].Load())
				}
			}
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("n %d, %d workers: item %d done %d times", n, workers, i, h)
				}
			}
		}
	}
}

// TestEach checks that Each does every item once, with worker indices
// below min(workers, n).
func TestEach(t *testing.T) {
	var l Loop
	for _, n := range []int{0, 1, 5, 1000} {
		for _, workers := range []int{1, 2, 4, 64} {
			hits := make([]int32, n)
			W := max(1, min(workers, n))
			l.Each(n, workers, func(w, k int) {
				if w < 0 || w >= W {
					t.Errorf("worker %d of %d", w, W)
				}
				atomic.AddInt32(&hits[k], 1)
			})
			for k, h := range hits {
				if h != 1 {
					t.Fatalf("n %d, %d workers: item %d done %d times", n, workers, k, h)
				}
			}
		}
	}
}

// TestRun checks that Run calls every worker once.
func TestRun(t *testing.T) {
	for _, workers := range []int{-1, 0, 1, 2, 9} {
		W := max(1, workers)
		seen := make([]atomic.Int32, W)
		Run(workers, func(w int) { seen[w].Add(1) })
		for w := range seen {
			if seen[w].Load() != 1 {
				t.Errorf("%d workers: worker %d ran %d times", workers, w, seen[w].Load())
			}
		}
	}
}

// TestLoopAllocs checks that a warm Loop allocates nothing.
func TestLoopAllocs(t *testing.T) {
	var l Loop
	var sum atomic.Int64
	f := func(w, lo, hi int) { sum.Add(int64(hi - lo)) }
	g := func(w, k int) { sum.Add(int64(k)) }
	l.Split(100, 4, f)
	l.Each(100, 4, g)
	if a := testing.AllocsPerRun(20, func() { l.Split(100, 4, f); l.Each(100, 4, g) }); a != 0 {
		t.Errorf("%v allocations per loop", a)
	}
}

// TestWorkers checks Workers' bounds.
func TestWorkers(t *testing.T) {
	if w := Workers(0); w != 1 {
		t.Errorf("Workers(0) = %d", w)
	}
	if w := Workers(1 << 30); w < 1 {
		t.Errorf("Workers(big) = %d", w)
	}
}
