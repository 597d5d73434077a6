package phy

import (
	"math"
	"runtime/debug"
	"sync"
	"testing"
)

// TestTightenHeap: writes that overlap in any order leave the memory
// limit as it was, and one under way holds a limit below it.
func TestTightenHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	if before != math.MaxInt64 {
		t.Skipf("GOMEMLIMIT sets a limit (%d): tightenHeap keeps it", before)
	}
	a := tightenHeap()
	if got := debug.SetMemoryLimit(-1); got >= before {
		t.Errorf("limit %d during a write, want below %d", got, before)
	}
	b := tightenHeap()
	a() // the first write ends before the second
	if got := debug.SetMemoryLimit(-1); got >= before {
		t.Errorf("limit %d while a write is still under way, want below %d", got, before)
	}
	b()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tightenHeap()()
		}()
	}
	wg.Wait()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d after the writes, want %d as before", got, before)
	}
}
