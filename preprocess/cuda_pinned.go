package preprocess

import (
	"fmt"
	"sync"
	"unsafe"

	"dspk/compute"
)

// PinnedWindows allocates k pinned host buffers of one raw window each
// (T·NChanFile int16) and returns a function that hands them out, one per
// call, for recording.LoaderOptions.Alloc with InFlight = k−1: the loader
// then reads windows straight into pinned memory, and
// [cudaPreprocessor.Upload] sends each with one asynchronous copy. The
// function panics if asked for another length or for more than k buffers.
// The buffers belong to g and are freed by Close. PinnedWindows must not
// be called inside the device's Do.
func (g *cudaPreprocessor) PinnedWindows(k int) (func(n int) []int16, error) {
	g.check("PinnedWindows")
	if k < 1 {
		panic(fmt.Sprintf("preprocess: cudaPreprocessor.PinnedWindows(%d)", k))
	}
	n := g.t * g.cf
	bufs := make([][]int16, 0, k)
	err := g.dev.Do(func(c *compute.Ctx) error {
		for range k {
			h, err := g.allocPinned(c, n*2)
			if err != nil {
				return err
			}
			bufs = append(bufs, h.Int16()[:n])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	next := 0
	return func(m int) []int16 {
		if m != n {
			panic(fmt.Sprintf("preprocess: pinned window of %d values asked for, have %d", m, n))
		}
		mu.Lock()
		defer mu.Unlock()
		if next == len(bufs) {
			panic(fmt.Sprintf("preprocess: all %d pinned windows handed out", len(bufs)))
		}
		next++
		return bufs[next-1]
	}, nil
}

// PinnedOutput allocates a pinned host buffer of C·T float32 for
// [cudaPreprocessor.Download] at full copy speed. It belongs to g and is
// freed by Close. PinnedOutput must not be called inside the device's Do.
func (g *cudaPreprocessor) PinnedOutput() ([]float32, error) {
	g.check("PinnedOutput")
	var out []float32
	err := g.dev.Do(func(c *compute.Ctx) error {
		h, err := g.allocPinned(c, g.c*g.t*4)
		if err == nil {
			out = h.Float32()[:g.c*g.t]
		}
		return err
	})
	return out, err
}

// allocPinned allocates and records a pinned host buffer.
func (g *cudaPreprocessor) allocPinned(c *compute.Ctx, bytes int) (*compute.HostMem, error) {
	h, err := c.AllocHost(bytes)
	if err != nil {
		return nil, err
	}
	g.pinMu.Lock()
	g.pinned = append(g.pinned, h)
	g.pinMu.Unlock()
	return h, nil
}

// pinnedOf returns the pinned buffer of g holding the bytes at p, and
// their offset in it.
func (g *cudaPreprocessor) pinnedOf(p unsafe.Pointer, bytes int) (*compute.HostMem, int, bool) {
	a := uintptr(p)
	g.pinMu.Lock()
	defer g.pinMu.Unlock()
	for _, h := range g.pinned {
		base := uintptr(h.Ptr())
		if a >= base && a+uintptr(bytes) <= base+uintptr(h.Len()) {
			return h, int(a - base), true
		}
	}
	return nil, 0, false
}
