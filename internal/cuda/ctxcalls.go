package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Stream is a CUDA stream handle.
type Stream uintptr

// Event is a CUDA event handle.
type Event uintptr

// DevicePtr is an address in device memory.
type DevicePtr uintptr

// Add returns p advanced by bytes.
func (p DevicePtr) Add(bytes int) DevicePtr { return p + DevicePtr(bytes) }

// Buffer is a device allocation of Bytes bytes at Ptr.
type Buffer struct {
	Ptr   DevicePtr
	Bytes int
}

// Sync waits for all work on c's stream; a fault that happened there is
// returned (and marks the device lost).
func (c *Ctx) Sync() error {
	return c.do("cuStreamSynchronize", "", cuStreamSynchronize, c.stream)
}

// SyncOp is Sync with the fault attributed to op.
func (c *Ctx) SyncOp(op string) error {
	return c.do("cuStreamSynchronize", op, cuStreamSynchronize, c.stream)
}

// SyncDevice waits for all work on the device.
func (c *Ctx) SyncDevice() error {
	return c.do("cuCtxSynchronize", "", cuCtxSynchronize)
}

// MemInfo returns the free and total device memory in bytes.
func (c *Ctx) MemInfo() (free, total uint64, err error) {
	err = c.do("cuMemGetInfo_v2", "", cuMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	return free, total, err
}

// Alloc allocates bytes of device memory (cuMemAlloc; never managed
// memory). Zero bytes gives an empty Buffer.
func (c *Ctx) Alloc(bytes int) (Buffer, error) {
	if bytes < 0 {
		panic(fmt.Sprintf("cuda: Alloc of %d bytes", bytes))
	}
	if bytes == 0 {
		c.live()
		return Buffer{}, nil
	}
	var p uintptr
	if err := c.do("cuMemAlloc_v2", fmt.Sprintf("%d bytes", bytes), cuMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes)); err != nil {
		return Buffer{}, err
	}
	return Buffer{Ptr: DevicePtr(p), Bytes: bytes}, nil
}

// Free releases b; freeing an empty Buffer does nothing.
func (c *Ctx) Free(b Buffer) error {
	if b.Ptr == 0 {
		return nil
	}
	return c.do("cuMemFree_v2", "", cuMemFree, uintptr(b.Ptr))
}

// CopyHtoD copies bytes from the pinned buffer src at offset off to dst,
// asynchronously on c's stream: src must not change until the copy has
// completed (synchronise, or wait on an event).
func (c *Ctx) CopyHtoD(dst DevicePtr, src *HostBuffer, off, bytes int) error {
	if off < 0 || bytes < 0 || off+bytes > src.n {
		panic(fmt.Sprintf("cuda: CopyHtoD of %d bytes at %d from a %d-byte host buffer", bytes, off, src.n))
	}
	if bytes == 0 {
		return nil
	}
	return c.do("cuMemcpyHtoDAsync_v2", "", cuMemcpyHtoDAsync, uintptr(dst), src.p+uintptr(off), uintptr(bytes), c.stream)
}

// CopyDtoH copies bytes from src to the pinned buffer dst at offset off,
// asynchronously on c's stream: synchronise before reading dst.
func (c *Ctx) CopyDtoH(dst *HostBuffer, off int, src DevicePtr, bytes int) error {
	if off < 0 || bytes < 0 || off+bytes > dst.n {
		panic(fmt.Sprintf("cuda: CopyDtoH of %d bytes at %d into a %d-byte host buffer", bytes, off, dst.n))
	}
	if bytes == 0 {
		return nil
	}
	return c.do("cuMemcpyDtoHAsync_v2", "", cuMemcpyDtoHAsync, dst.p+uintptr(off), uintptr(src), uintptr(bytes), c.stream)
}

// CopyDtoD copies bytes between device addresses, asynchronously.
func (c *Ctx) CopyDtoD(dst, src DevicePtr, bytes int) error {
	if bytes == 0 {
		return nil
	}
	return c.do("cuMemcpyDtoDAsync_v2", "", cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), c.stream)
}

// Memset32 sets n 32-bit words at dst to v, asynchronously (v =
// math.Float32bits(x) fills with a float32; 0x7fc00000 is a NaN).
func (c *Ctx) Memset32(dst DevicePtr, v uint32, n int) error {
	if n == 0 {
		return nil
	}
	return c.do("cuMemsetD32Async", "", cuMemsetD32Async, uintptr(dst), uintptr(v), uintptr(n), c.stream)
}

// Memset8 sets n bytes at dst to v, asynchronously.
func (c *Ctx) Memset8(dst DevicePtr, v byte, n int) error {
	if n == 0 {
		return nil
	}
	return c.do("cuMemsetD8Async", "", cuMemsetD8Async, uintptr(dst), uintptr(v), uintptr(n), c.stream)
}

// Number is the element types of Upload and Download.
type Number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Upload copies the Go slice src to dst and waits for the copy to finish
// (pageable memory: ~7 GB/s; stage large data through a HostBuffer).
func Upload[T Number](c *Ctx, dst DevicePtr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	var z T
	n := len(src) * int(unsafe.Sizeof(z))
	if err := c.do("cuMemcpyHtoDAsync_v2", "", cuMemcpyHtoDAsync, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(n), c.stream); err != nil {
		return err
	}
	err := c.Sync()
	runtime.KeepAlive(src)
	return err
}

// Download copies len(dst) elements from src into the Go slice dst and
// waits for the copy to finish.
func Download[T Number](c *Ctx, dst []T, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	var z T
	n := len(dst) * int(unsafe.Sizeof(z))
	if err := c.do("cuMemcpyDtoHAsync_v2", "", cuMemcpyDtoHAsync, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(n), c.stream); err != nil {
		return err
	}
	err := c.Sync()
	runtime.KeepAlive(dst)
	return err
}

// NewStream creates a non-blocking stream.
func (c *Ctx) NewStream() (Stream, error) {
	var s uintptr
	err := c.do("cuStreamCreate", "", cuStreamCreate, uintptr(unsafe.Pointer(&s)), streamNonBlocking)
	return Stream(s), err
}

// NewStreamPriority creates a non-blocking stream of the given priority:
// lower numbers are served first; the driver clamps the number into the
// device's range (on current GPUs 0, the default, down to −5).
func (c *Ctx) NewStreamPriority(priority int) (Stream, error) {
	var s uintptr
	err := c.do("cuStreamCreateWithPriority", "", cuStreamCreateWithPriority, uintptr(unsafe.Pointer(&s)), streamNonBlocking, uintptr(priority))
	return Stream(s), err
}

// DestroyStream destroys s (after its work completes).
func (c *Ctx) DestroyStream(s Stream) error {
	return c.do("cuStreamDestroy_v2", "", cuStreamDestroy, uintptr(s))
}

// NewEvent creates an event that records timing.
func (c *Ctx) NewEvent() (Event, error) {
	var e uintptr
	err := c.do("cuEventCreate", "", cuEventCreate, uintptr(unsafe.Pointer(&e)), eventDefault)
	return Event(e), err
}

// DestroyEvent destroys e.
func (c *Ctx) DestroyEvent(e Event) error {
	return c.do("cuEventDestroy_v2", "", cuEventDestroy, uintptr(e))
}

// Record records e on c's stream.
func (c *Ctx) Record(e Event) error {
	return c.do("cuEventRecord", "", cuEventRecord, uintptr(e), c.stream)
}

// Wait makes c's stream wait for e (recorded on any stream).
func (c *Ctx) Wait(e Event) error {
	return c.do("cuStreamWaitEvent", "", cuStreamWaitEvent, c.stream, uintptr(e), 0)
}

// EventSync waits on the host until e has completed.
func (c *Ctx) EventSync(e Event) error {
	return c.do("cuEventSynchronize", "", cuEventSynchronize, uintptr(e))
}

// Elapsed returns the milliseconds between two completed events.
func (c *Ctx) Elapsed(start, end Event) (float32, error) {
	var ms float32
	err := c.do("cuEventElapsedTime_v2", "", cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end))
	return ms, err
}
