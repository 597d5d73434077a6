package cuda

import (
	"fmt"
	"unsafe"

	"dspk/internal/par"
)

// HostBuffer is page-locked host memory, copied to and from the device at
// full PCIe speed. Its memory is not Go memory: free it with
// [Ctx.FreeHost].
type HostBuffer struct {
	p uintptr
	n int
	// mapped is the whole mapping of memory registered with the driver
	// (nil for memory of cuMemHostAlloc).
	mapped []byte
}

// Len returns the size in bytes.
func (h *HostBuffer) Len() int { return h.n }

// Ptr returns the host address.
func (h *HostBuffer) Ptr() unsafe.Pointer { return cptr(h.p) }

// Bytes returns the buffer as a byte slice.
func (h *HostBuffer) Bytes() []byte { return unsafe.Slice((*byte)(h.Ptr()), h.n) }

// Float32 returns the buffer as float32s (Len()/4 of them).
func (h *HostBuffer) Float32() []float32 { return unsafe.Slice((*float32)(h.Ptr()), h.n/4) }

// Float64 returns the buffer as float64s (Len()/8 of them).
func (h *HostBuffer) Float64() []float64 { return unsafe.Slice((*float64)(h.Ptr()), h.n/8) }

// Int16 returns the buffer as int16s (Len()/2 of them).
func (h *HostBuffer) Int16() []int16 { return unsafe.Slice((*int16)(h.Ptr()), h.n/2) }

// Registered reports whether the buffer is ordinary memory registered
// with the driver (the fast path of [Ctx.AllocHost]) rather than memory
// of cuMemHostAlloc.
func (h *HostBuffer) Registered() bool { return h.mapped != nil }

// MapHost returns bytes (> 0) of fresh anonymous host memory, not yet
// pinned: mapped on a huge-page boundary with transparent huge pages asked
// for, and faulted in from several threads at once. It makes no driver
// call, so that a caller can prepare buffers while the device is busy or
// still being opened; [Ctx.PinHost] pins them.
func MapHost(bytes int) (*HostBuffer, error) {
	if bytes <= 0 {
		panic(fmt.Sprintf("cuda: MapHost of %d bytes", bytes))
	}
	m, p, err := mapHost(bytes)
	if err != nil {
		return nil, fmt.Errorf("cuda: mapping %d bytes of host memory: %w", bytes, err)
	}
	faultIn(unsafe.Slice((*byte)(cptr(p)), bytes))
	return &HostBuffer{p: p, n: bytes, mapped: m}, nil
}

// PinHost returns bytes of pinned host memory: h, memory of [MapHost],
// registered with the driver (cuMemHostRegister), or, where h is nil or
// cannot be registered, new memory of cuMemHostAlloc (h is then unmapped
// and must not be used). Free the result with [Ctx.FreeHost].
func (c *Ctx) PinHost(h *HostBuffer, bytes int) (*HostBuffer, error) {
	if h != nil {
		if h.mapped == nil || h.p == 0 || h.n != bytes {
			panic("cuda: PinHost of memory not from MapHost, or of another size")
		}
		err := c.do("cuMemHostRegister_v2", fmt.Sprintf("%d bytes", h.n), cuMemHostRegister, h.p, uintptr(h.n), 0)
		if err == nil {
			return h, nil
		}
		h.FreeUnregistered()
		if c.live().lost.Load() != nil {
			return nil, err
		}
	}
	var p uintptr
	if err := c.do("cuMemHostAlloc", fmt.Sprintf("%d bytes", bytes), cuMemHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes), 0); err != nil {
		return nil, err
	}
	return &HostBuffer{p: p, n: bytes}, nil
}

// AllocHost allocates bytes (> 0) of pinned host memory: [MapHost]
// memory registered with the driver, or, where that fails, memory of
// cuMemHostAlloc ([Ctx.PinHost]). cuMemHostAlloc does the whole work on
// the calling thread: on the H200's host 20 ms for each 46-MB window
// buffer, where registering memory already faulted in takes 2–3 ms (see
// docs/perf-wholeprocess.md).
func (c *Ctx) AllocHost(bytes int) (*HostBuffer, error) {
	if bytes <= 0 {
		panic(fmt.Sprintf("cuda: AllocHost of %d bytes", bytes))
	}
	h, _ := MapHost(bytes) // nil where mapping fails: PinHost falls back
	return c.PinHost(h, bytes)
}

// FreeUnregistered unmaps memory of [MapHost] that was never registered
// (a caller that gives up before [Ctx.PinHost]).
func (h *HostBuffer) FreeUnregistered() {
	if h.mapped != nil {
		unmapHost(h.mapped)
	}
	h.p, h.n, h.mapped = 0, 0, nil
}

// FreeHost releases h; it must not be used afterwards.
func (c *Ctx) FreeHost(h *HostBuffer) error {
	if h == nil || h.p == 0 {
		return nil
	}
	var err error
	if h.mapped != nil {
		err = c.do("cuMemHostUnregister", "", cuMemHostUnregister, h.p)
		unmapHost(h.mapped)
		h.mapped = nil
	} else {
		err = c.do("cuMemFreeHost", "", cuMemFreeHost, h.p)
	}
	h.p, h.n = 0, 0
	return err
}

// hugePage is the size of a transparent huge page on x86-64 and arm64
// (with 4-KiB base pages); mappings are aligned to it.
const hugePage = 2 << 20

// faultIn writes a zero into every page of m from up to GOMAXPROCS
// goroutines (at least 4 MiB each), so that the kernel allocates and
// zeroes the pages in parallel before the driver locks them.
func faultIn(m []byte) {
	const page = 4096
	par.Split(len(m), par.Workers(len(m)>>22), func(_, lo, hi int) {
		for o := lo &^ (page - 1); o < hi; o += page {
			m[max(o, lo)] = 0
		}
	})
}
