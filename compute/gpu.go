package compute

import (
	"fmt"
	"unsafe"

	"dspk/internal/cuda"
)

// This file is compute's GPU API: the types through which the algorithm
// packages allocate device and pinned host memory, order work with streams
// and events, compile kernels and launch them, and call cuBLAS. It wraps
// the purego bindings of internal/cuda; no CUDA type appears in its
// signatures. Every method of a Ctx (and of the Modules, Kernels and
// Prepared launches made through it) must be called inside [Device.Do].

// ErrNotFound is wrapped by every error that means the CUDA driver, NVRTC or
// cuBLAS is not installed or no GPU is present: callers fall back to the
// CPU and GPU tests skip.
var ErrNotFound = cuda.ErrNotFound

// ErrDeviceLost is wrapped by the error of a kernel fault and by every
// later error of the same device: the GPU's context is dead and the
// process must stop.
var ErrDeviceLost = cuda.ErrDeviceLost

// GPUInfo describes a CUDA GPU.
type GPUInfo struct {
	// Ordinal is the device's index, as in "cuda:N".
	Ordinal int
	// Name is the product name, e.g. "NVIDIA H200".
	Name string
	// Major and Minor are the compute capability (9 and 0 for sm_90).
	Major, Minor int
	// Memory is the total device memory in bytes.
	Memory uint64
	// SMs is the number of multiprocessors.
	SMs int
	// L2 is the L2 cache size in bytes.
	L2 int
	// MaxSharedPerBlock is the opt-in shared memory per block in bytes.
	MaxSharedPerBlock int
	// PCIBusID is the PCI bus id, e.g. "0000:17:00.0".
	PCIBusID string
	// DriverVersion is the driver's CUDA version (13000 for 13.0).
	DriverVersion int
	// ClockRate is the multiprocessors' peak clock in kHz, MemoryClockRate
	// the memory's peak clock in kHz and MemoryBusWidth the memory bus's
	// width in bits; 0 where the driver does not say.
	ClockRate, MemoryClockRate, MemoryBusWidth int
}

// Arch returns the architecture name, e.g. "sm_90".
func (i GPUInfo) Arch() string { return fmt.Sprintf("sm_%d%d", i.Major, i.Minor) }

// Ctx is the handle to a GPU inside [Device.Do]: every call runs on the
// Ctx's stream (the device's own unless [Ctx.WithStream] chose another).
// It is valid only during the Do that handed it out.
type Ctx struct {
	c   *cuda.Ctx
	dev *Device
}

// Device returns the device c belongs to.
func (c *Ctx) Device() *Device { return c.dev }

// Stream returns the stream c's calls run on.
func (c *Ctx) Stream() Stream { return Stream{c.c.Stream()} }

// WithStream returns a Ctx whose calls run on stream s; it is valid only
// during the same Do.
func (c *Ctx) WithStream(s Stream) *Ctx { return &Ctx{c: c.c.WithStream(s.h), dev: c.dev} }

// Ptr is an address in device memory.
type Ptr uintptr

// Add returns p advanced by bytes.
func (p Ptr) Add(bytes int) Ptr { return p + Ptr(bytes) }

// Mem is a device allocation of Bytes bytes at Ptr. The zero Mem is empty.
type Mem struct {
	Ptr   Ptr
	Bytes int
}

func (m Mem) buf() cuda.Buffer { return cuda.Buffer{Ptr: cuda.DevicePtr(m.Ptr), Bytes: m.Bytes} }

// Alloc allocates bytes of device memory (never managed memory). Zero
// bytes gives an empty Mem.
func (c *Ctx) Alloc(bytes int) (Mem, error) {
	b, err := c.c.Alloc(bytes)
	return Mem{Ptr: Ptr(b.Ptr), Bytes: b.Bytes}, err
}

// Free releases m; freeing an empty Mem does nothing.
func (c *Ctx) Free(m Mem) error { return c.c.Free(m.buf()) }

// MemInfo returns the free and total device memory in bytes.
func (c *Ctx) MemInfo() (free, total uint64, err error) { return c.c.MemInfo() }

// HostMem is page-locked (pinned) host memory, copied to and from the
// device at full PCIe speed. Its memory is not Go memory: free it with
// [Ctx.FreeHost] or [Device.FreeHost], whichever allocated it.
type HostMem struct {
	h   *cuda.HostBuffer
	cpu []uint64 // on a CPU device (Device.AllocHost): Go memory
	n   int
}

// Len returns the size in bytes.
func (h *HostMem) Len() int { return h.n }

// Ptr returns the host address.
func (h *HostMem) Ptr() unsafe.Pointer {
	if h.h != nil {
		return h.h.Ptr()
	}
	return unsafe.Pointer(unsafe.SliceData(h.cpu))
}

// Bytes returns the memory as a byte slice.
func (h *HostMem) Bytes() []byte { return unsafe.Slice((*byte)(h.Ptr()), h.n) }

// Float32 returns the memory as float32s (Len()/4 of them).
func (h *HostMem) Float32() []float32 { return unsafe.Slice((*float32)(h.Ptr()), h.n/4) }

// Float64 returns the memory as float64s (Len()/8 of them).
func (h *HostMem) Float64() []float64 { return unsafe.Slice((*float64)(h.Ptr()), h.n/8) }

// Int16 returns the memory as int16s (Len()/2 of them).
func (h *HostMem) Int16() []int16 { return unsafe.Slice((*int16)(h.Ptr()), h.n/2) }

// AllocHost allocates bytes (> 0) of pinned host memory; free it with
// [Ctx.FreeHost].
func (c *Ctx) AllocHost(bytes int) (*HostMem, error) {
	h, err := c.c.AllocHost(bytes)
	if err != nil {
		return nil, err
	}
	return &HostMem{h: h, n: bytes}, nil
}

// FreeHost releases h; it must not be used afterwards.
func (c *Ctx) FreeHost(h *HostMem) error {
	if h == nil || h.h == nil {
		return nil
	}
	err := c.c.FreeHost(h.h)
	h.h, h.n = nil, 0
	return err
}

// CopyHtoD copies bytes from the pinned memory src at offset off to dst,
// asynchronously on c's stream: src must not change until the copy has
// completed (synchronise, or wait on an event).
func (c *Ctx) CopyHtoD(dst Ptr, src *HostMem, off, bytes int) error {
	return c.c.CopyHtoD(cuda.DevicePtr(dst), src.h, off, bytes)
}

// CopyDtoH copies bytes from src to the pinned memory dst at offset off,
// asynchronously on c's stream: synchronise before reading dst.
func (c *Ctx) CopyDtoH(dst *HostMem, off int, src Ptr, bytes int) error {
	return c.c.CopyDtoH(dst.h, off, cuda.DevicePtr(src), bytes)
}

// CopyDtoD copies bytes between device addresses, asynchronously.
func (c *Ctx) CopyDtoD(dst, src Ptr, bytes int) error {
	return c.c.CopyDtoD(cuda.DevicePtr(dst), cuda.DevicePtr(src), bytes)
}

// Memset32 sets n 32-bit words at dst to v, asynchronously (v =
// math.Float32bits(x) fills with a float32; 0x7fc00000 is a NaN).
func (c *Ctx) Memset32(dst Ptr, v uint32, n int) error {
	return c.c.Memset32(cuda.DevicePtr(dst), v, n)
}

// Memset8 sets n bytes at dst to v, asynchronously.
func (c *Ctx) Memset8(dst Ptr, v byte, n int) error { return c.c.Memset8(cuda.DevicePtr(dst), v, n) }

// Number is the element types of Upload and Download.
type Number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Upload copies the Go slice src to dst on c's stream and waits for the
// copy (pageable memory, about 7 GB/s: stage large data through pinned
// HostMem).
func Upload[T Number](c *Ctx, dst Ptr, src []T) error {
	return cuda.Upload(c.c, cuda.DevicePtr(dst), src)
}

// Download copies len(dst) elements from src into the Go slice dst on c's
// stream and waits for the copy.
func Download[T Number](c *Ctx, dst []T, src Ptr) error {
	return cuda.Download(c.c, dst, cuda.DevicePtr(src))
}

// Sync waits for all work on c's stream; a fault that happened there is
// returned (and marks the device lost).
func (c *Ctx) Sync() error { return c.c.Sync() }

// SyncOp is Sync with a fault attributed to op.
func (c *Ctx) SyncOp(op string) error { return c.c.SyncOp(op) }

// SyncDevice waits for all work on the device.
func (c *Ctx) SyncDevice() error { return c.c.SyncDevice() }

// Stream is a queue of GPU work; work on one stream runs in order. The
// zero Stream is none.
type Stream struct{ h cuda.Stream }

// Event marks a point in a stream's work, for ordering other streams after
// it and for timing. The zero Event is none.
type Event struct{ h cuda.Event }

// NewStream creates a non-blocking stream.
func (c *Ctx) NewStream() (Stream, error) {
	s, err := c.c.NewStream()
	return Stream{s}, err
}

// NewStreamPriority creates a non-blocking stream whose kernels the device
// serves before those of streams of a larger priority number (0 is the
// default; the driver clamps the number into the device's range, on
// current GPUs 0 down to −5).
func (c *Ctx) NewStreamPriority(priority int) (Stream, error) {
	s, err := c.c.NewStreamPriority(priority)
	return Stream{s}, err
}

// DestroyStream destroys s (after its work completes).
func (c *Ctx) DestroyStream(s Stream) error { return c.c.DestroyStream(s.h) }

// NewEvent creates an event that records timing.
func (c *Ctx) NewEvent() (Event, error) {
	e, err := c.c.NewEvent()
	return Event{e}, err
}

// DestroyEvent destroys e.
func (c *Ctx) DestroyEvent(e Event) error { return c.c.DestroyEvent(e.h) }

// Record records e on c's stream.
func (c *Ctx) Record(e Event) error { return c.c.Record(e.h) }

// Wait makes c's stream wait for e (recorded on any stream).
func (c *Ctx) Wait(e Event) error { return c.c.Wait(e.h) }

// EventSync waits on the host until e has completed.
func (c *Ctx) EventSync(e Event) error { return c.c.EventSync(e.h) }

// Elapsed returns the milliseconds between two completed events.
func (c *Ctx) Elapsed(start, end Event) (float32, error) { return c.c.Elapsed(start.h, end.h) }

// Module is CUDA C source compiled for the device and loaded into it.
type Module struct{ m *cuda.Module }

// Compile compiles the CUDA C source (typically embedded with go:embed
// from the package's kernels/ folder; name appears in messages) with NVRTC
// for the device's architecture (-std=c++17 plus options) and loads it.
// Compilation is cached for the life of the process and loading per
// device, keyed by a hash of source, options, target and NVRTC version. A
// compilation error carries NVRTC's log. Entry points must be extern "C".
func (c *Ctx) Compile(name, source string, options ...string) (*Module, error) {
	m, err := c.c.Compile(name, source, options...)
	if err != nil {
		return nil, err
	}
	return &Module{m}, nil
}

// Kernel is a kernel entry point of a Module.
type Kernel struct{ f *cuda.Function }

// Kernel returns the extern "C" kernel called name.
func (m *Module) Kernel(name string) (*Kernel, error) {
	f, err := m.m.Function(name)
	if err != nil {
		return nil, err
	}
	return &Kernel{f}, nil
}

// Name returns the kernel's name.
func (k *Kernel) Name() string { return k.f.Name() }

// MaxActiveBlocks returns how many blocks of threads threads, each with
// dynamicShared bytes of dynamic shared memory, fit on one multiprocessor
// at once (the driver's occupancy calculator).
func (k *Kernel) MaxActiveBlocks(threads, dynamicShared int) (int, error) {
	return k.f.MaxActiveBlocks(threads, dynamicShared)
}

// SetMaxDynamicShared allows launches of k with up to bytes of dynamic
// shared memory (needed above 48 KiB).
func (k *Kernel) SetMaxDynamicShared(bytes int) error { return k.f.SetMaxDynamicShared(bytes) }

// KernelAttributes are what the compiler gave a kernel.
type KernelAttributes struct {
	// Registers is the number of registers per thread.
	Registers int
	// LocalBytes is the local memory per thread (spills, local arrays).
	LocalBytes int
	// SharedBytes is the static shared memory per block.
	SharedBytes int
	// MaxThreads is the largest block the kernel can be launched with.
	MaxThreads int
}

// Attributes returns k's registers, local and static shared memory and
// largest block.
func (k *Kernel) Attributes() (KernelAttributes, error) {
	a, err := k.f.Attributes()
	return KernelAttributes(a), err
}

// Dim3 is a grid or block size; zero components count as 1.
type Dim3 struct{ X, Y, Z int }

// D1 returns the one-dimensional size {x, 1, 1}.
func D1(x int) Dim3 { return Dim3{x, 1, 1} }

// arg converts a kernel argument of compute's types to the bindings'.
func arg(v any) any {
	switch x := v.(type) {
	case Ptr:
		return cuda.DevicePtr(x)
	case Mem:
		return cuda.DevicePtr(x.Ptr)
	}
	return v
}

// Prepared is a kernel launch whose arguments live in a pinned block, so
// that launching it costs one call into the driver and no allocation
// (about 5 µs of host time). Change arguments in place with
// [Prepared.Set]; release the block with [Prepared.Free].
type Prepared struct {
	p *cuda.Prepared
	k *Kernel
}

// Prepare packs a launch of k with the given grid, block, dynamic shared
// memory bytes and kernel arguments: int32, uint32, int64, uint64,
// float32, float64, Ptr or Mem (its address), in the kernel's parameter
// order and types. Go's int is refused: its width is not the kernel's.
func (k *Kernel) Prepare(grid, block Dim3, shared int, args ...any) *Prepared {
	conv := make([]any, len(args))
	for i, a := range args {
		conv[i] = arg(a)
	}
	return &Prepared{p: k.f.Prepare(cuda.Dim3(grid), cuda.Dim3(block), shared, conv...), k: k}
}

// Set replaces argument i with v, which must have the type it had.
func (p *Prepared) Set(i int, v any) {
	switch x := v.(type) {
	case Ptr:
		p.p.SetPtr(i, cuda.DevicePtr(x))
	case Mem:
		p.p.SetPtr(i, cuda.DevicePtr(x.Ptr))
	default:
		p.p.Set(i, v)
	}
}

// SetGrid changes the grid size.
func (p *Prepared) SetGrid(grid Dim3) { p.p.SetGrid(cuda.Dim3(grid)) }

// Kernel returns the kernel p launches.
func (p *Prepared) Kernel() *Kernel { return p.k }

// Launch enqueues the kernel on c's stream. A bad configuration is reported
// at once; a fault inside the kernel surfaces at the next synchronisation
// (at once with DSPK_CUDA_SYNC=1).
func (p *Prepared) Launch(c *Ctx) error { return p.p.Launch(c.c) }

// Free unpins the argument block; p must not be launched afterwards.
func (p *Prepared) Free() { p.p.Free() }

// Launch packs the arguments and launches k once (see [Kernel.Prepare]
// for the argument types). Use a Prepared launch in loops.
func (c *Ctx) Launch(k *Kernel, grid, block Dim3, shared int, args ...any) error {
	p := k.Prepare(grid, block, shared, args...)
	defer p.Free()
	return p.Launch(c)
}

// Graph is a recorded sequence of GPU work, replayed with one launch.
type Graph struct{ g *cuda.Graph }

// Capture records the work f enqueues on c's stream into a graph instead
// of running it. f must not synchronise.
func (c *Ctx) Capture(f func(*Ctx) error) (*Graph, error) {
	g, err := c.c.Capture(func(*cuda.Ctx) error { return f(c) })
	if err != nil {
		return nil, err
	}
	return &Graph{g}, nil
}

// LaunchGraph enqueues g on c's stream.
func (c *Ctx) LaunchGraph(g *Graph) error { return c.c.LaunchGraph(g.g) }

// DestroyGraph releases g.
func (c *Ctx) DestroyGraph(g *Graph) error { return c.c.DestroyGraph(g.g) }

// Transpose selects op(X) of a BLAS call (column-major, as cuBLAS).
type Transpose int

// Transpose values.
const (
	NoTrans Transpose = Transpose(cuda.NoTrans)
	Trans   Transpose = Transpose(cuda.Trans)
)

// Fill selects the stored triangle of a symmetric result (column-major).
type Fill int

// Fill values.
const (
	Lower Fill = Fill(cuda.Lower)
	Upper Fill = Fill(cuda.Upper)
)

// DataType is an element type of a mixed-precision BLAS call.
type DataType int

// DataType values.
const (
	R32F  DataType = DataType(cuda.R32F)
	R64F  DataType = DataType(cuda.R64F)
	R16F  DataType = DataType(cuda.R16F)
	R16BF DataType = DataType(cuda.R16BF)
)

// ComputeType is the arithmetic of a mixed-precision BLAS call.
type ComputeType int

// ComputeType values. Compute32FFastTF32 rounds inputs to TF32 (about
// 1e-4 relative error on Gram matrices): opt-in only.
const (
	Compute32F         ComputeType = ComputeType(cuda.Compute32F)
	Compute32FFast16BF ComputeType = ComputeType(cuda.Compute32FFast16BF)
	Compute32FFastTF32 ComputeType = ComputeType(cuda.Compute32FFastTF32)
	Compute64F         ComputeType = ComputeType(cuda.Compute64F)
)

// BLASVersion returns cuBLAS's version (130100 for 13.1.0).
func (c *Ctx) BLASVersion() (int, error) { return c.c.BLASVersion() }

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in float32, column-major:
// op(A) is m×k, op(B) k×n, C m×n. For row-major X [rows][ld], X·Xᵀ is
// Sgemm(Trans, NoTrans, rows, rows, cols, …, X, ld, X, ld, …).
func (c *Ctx) Sgemm(ta, tb Transpose, m, n, k int, alpha float32, a Ptr, lda int, b Ptr, ldb int, beta float32, cc Ptr, ldc int) error {
	return c.c.Sgemm(cuda.Transpose(ta), cuda.Transpose(tb), m, n, k, alpha, cuda.DevicePtr(a), lda, cuda.DevicePtr(b), ldb, beta, cuda.DevicePtr(cc), ldc)
}

// Dgemm is Sgemm in float64.
func (c *Ctx) Dgemm(ta, tb Transpose, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, cc Ptr, ldc int) error {
	return c.c.Dgemm(cuda.Transpose(ta), cuda.Transpose(tb), m, n, k, alpha, cuda.DevicePtr(a), lda, cuda.DevicePtr(b), ldb, beta, cuda.DevicePtr(cc), ldc)
}

// SgemmStridedBatched computes batch products C_i = alpha·op(A_i)·op(B_i) +
// beta·C_i, with A_i at a + i·strideA elements (likewise B, C).
func (c *Ctx) SgemmStridedBatched(ta, tb Transpose, m, n, k int, alpha float32, a Ptr, lda int, strideA int64, b Ptr, ldb int, strideB int64, beta float32, cc Ptr, ldc int, strideC int64, batch int) error {
	return c.c.SgemmStridedBatched(cuda.Transpose(ta), cuda.Transpose(tb), m, n, k, alpha, cuda.DevicePtr(a), lda, strideA,
		cuda.DevicePtr(b), ldb, strideB, beta, cuda.DevicePtr(cc), ldc, strideC, batch)
}

// DgemmStridedBatched is SgemmStridedBatched in float64.
func (c *Ctx) DgemmStridedBatched(ta, tb Transpose, m, n, k int, alpha float64, a Ptr, lda int, strideA int64, b Ptr, ldb int, strideB int64, beta float64, cc Ptr, ldc int, strideC int64, batch int) error {
	return c.c.DgemmStridedBatched(cuda.Transpose(ta), cuda.Transpose(tb), m, n, k, alpha, cuda.DevicePtr(a), lda, strideA,
		cuda.DevicePtr(b), ldb, strideB, beta, cuda.DevicePtr(cc), ldc, strideC, batch)
}

// GemmStridedBatchedEx is the mixed-precision strided batched GEMM with
// element types at, bt, ctype and arithmetic compute; alpha and beta are
// passed as float64 for Compute64F and as float32 otherwise.
func (c *Ctx) GemmStridedBatchedEx(ta, tb Transpose, m, n, k int, alpha float64, a Ptr, at DataType, lda int, strideA int64, b Ptr, bt DataType, ldb int, strideB int64, beta float64, cc Ptr, ctype DataType, ldc int, strideC int64, batch int, compute ComputeType) error {
	return c.c.GemmStridedBatchedEx(cuda.Transpose(ta), cuda.Transpose(tb), m, n, k, alpha,
		cuda.DevicePtr(a), cuda.DataType(at), lda, strideA, cuda.DevicePtr(b), cuda.DataType(bt), ldb, strideB,
		beta, cuda.DevicePtr(cc), cuda.DataType(ctype), ldc, strideC, batch, cuda.ComputeType(compute))
}

// Ssyrk computes the uplo triangle of C = alpha·op(A)·op(A)ᵀ + beta·C in
// float32: with trans = Trans, A is k×n (lda ≥ k) and op(A)·op(A)ᵀ = AᵀA
// is n×n. The other triangle is not written.
func (c *Ctx) Ssyrk(uplo Fill, trans Transpose, n, k int, alpha float32, a Ptr, lda int, beta float32, cc Ptr, ldc int) error {
	return c.c.Ssyrk(cuda.Fill(uplo), cuda.Transpose(trans), n, k, alpha, cuda.DevicePtr(a), lda, beta, cuda.DevicePtr(cc), ldc)
}

// Dsyrk is Ssyrk in float64.
func (c *Ctx) Dsyrk(uplo Fill, trans Transpose, n, k int, alpha float64, a Ptr, lda int, beta float64, cc Ptr, ldc int) error {
	return c.c.Dsyrk(cuda.Fill(uplo), cuda.Transpose(trans), n, k, alpha, cuda.DevicePtr(a), lda, beta, cuda.DevicePtr(cc), ldc)
}
