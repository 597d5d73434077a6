package cuda

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Driver API entry points, with the _vN names they were written for
// (gpu.md §4).
var (
	cuInit                      uintptr
	cuDriverGetVersion          uintptr
	cuDeviceGetCount            uintptr
	cuDeviceGet                 uintptr
	cuDeviceGetName             uintptr
	cuDeviceGetAttribute        uintptr
	cuDeviceTotalMem            uintptr
	cuDevicePrimaryCtxRetain    uintptr
	cuDevicePrimaryCtxRelease   uintptr
	cuDevicePrimaryCtxReset     uintptr
	cuDevicePrimaryCtxGetState  uintptr
	cuCtxSetCurrent             uintptr
	cuCtxSynchronize            uintptr
	cuGetErrorName              uintptr
	cuGetErrorString            uintptr
	cuMemAlloc                  uintptr
	cuMemFree                   uintptr
	cuMemGetInfo                uintptr
	cuMemHostAlloc              uintptr
	cuMemFreeHost               uintptr
	cuMemHostRegister           uintptr
	cuMemHostUnregister         uintptr
	cuMemcpyHtoDAsync           uintptr
	cuMemcpyDtoHAsync           uintptr
	cuMemcpyDtoDAsync           uintptr
	cuMemsetD8Async             uintptr
	cuMemsetD32Async            uintptr
	cuStreamCreate              uintptr
	cuStreamCreateWithPriority  uintptr
	cuStreamDestroy             uintptr
	cuStreamSynchronize         uintptr
	cuStreamWaitEvent           uintptr
	cuEventCreate               uintptr
	cuEventDestroy              uintptr
	cuEventRecord               uintptr
	cuEventSynchronize          uintptr
	cuEventElapsedTime          uintptr
	cuModuleLoadData            uintptr
	cuModuleUnload              uintptr
	cuModuleGetFunction         uintptr
	cuFuncSetAttribute          uintptr
	cuFuncGetAttribute          uintptr
	cuOccupancyMaxActiveBlocks  uintptr
	cuLaunchKernel              uintptr
	cuStreamBeginCapture        uintptr
	cuStreamEndCapture          uintptr
	cuGraphInstantiateWithFlags uintptr
	cuGraphLaunch               uintptr
	cuGraphExecDestroy          uintptr
	cuGraphDestroy              uintptr
	cuDeviceGetPCIBusID         uintptr
)

var driverLib = &library{
	what:    "CUDA driver (libcuda.so.1)",
	env:     "DSPK_LIBCUDA",
	stem:    "libcuda.so",
	sonames: []string{"libcuda.so.1"},
	dirs: func() []string {
		return []string{"/usr/local/nvidia/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/wsl/lib"}
	},
	syms: []symbol{
		{name: "cuInit", addr: &cuInit},
		{name: "cuDriverGetVersion", addr: &cuDriverGetVersion},
		{name: "cuDeviceGetCount", addr: &cuDeviceGetCount},
		{name: "cuDeviceGet", addr: &cuDeviceGet},
		{name: "cuDeviceGetName", addr: &cuDeviceGetName},
		{name: "cuDeviceGetAttribute", addr: &cuDeviceGetAttribute},
		{name: "cuDeviceTotalMem_v2", addr: &cuDeviceTotalMem},
		{name: "cuDeviceGetPCIBusId", addr: &cuDeviceGetPCIBusID},
		{name: "cuDevicePrimaryCtxRetain", addr: &cuDevicePrimaryCtxRetain},
		{name: "cuDevicePrimaryCtxRelease_v2", addr: &cuDevicePrimaryCtxRelease},
		{name: "cuDevicePrimaryCtxReset_v2", addr: &cuDevicePrimaryCtxReset},
		{name: "cuDevicePrimaryCtxGetState", addr: &cuDevicePrimaryCtxGetState},
		{name: "cuCtxSetCurrent", addr: &cuCtxSetCurrent},
		{name: "cuCtxSynchronize", addr: &cuCtxSynchronize},
		{name: "cuGetErrorName", addr: &cuGetErrorName},
		{name: "cuGetErrorString", addr: &cuGetErrorString},
		{name: "cuMemAlloc_v2", addr: &cuMemAlloc},
		{name: "cuMemFree_v2", addr: &cuMemFree},
		{name: "cuMemGetInfo_v2", addr: &cuMemGetInfo},
		{name: "cuMemHostAlloc", addr: &cuMemHostAlloc},
		{name: "cuMemFreeHost", addr: &cuMemFreeHost},
		{name: "cuMemHostRegister_v2", addr: &cuMemHostRegister},
		{name: "cuMemHostUnregister", addr: &cuMemHostUnregister},
		{name: "cuMemcpyHtoDAsync_v2", addr: &cuMemcpyHtoDAsync},
		{name: "cuMemcpyDtoHAsync_v2", addr: &cuMemcpyDtoHAsync},
		{name: "cuMemcpyDtoDAsync_v2", addr: &cuMemcpyDtoDAsync},
		{name: "cuMemsetD8Async", addr: &cuMemsetD8Async},
		{name: "cuMemsetD32Async", addr: &cuMemsetD32Async},
		{name: "cuStreamCreate", addr: &cuStreamCreate},
		{name: "cuStreamCreateWithPriority", addr: &cuStreamCreateWithPriority},
		{name: "cuStreamDestroy_v2", addr: &cuStreamDestroy},
		{name: "cuStreamSynchronize", addr: &cuStreamSynchronize},
		{name: "cuStreamWaitEvent", addr: &cuStreamWaitEvent},
		{name: "cuEventCreate", addr: &cuEventCreate},
		{name: "cuEventDestroy_v2", addr: &cuEventDestroy},
		{name: "cuEventRecord", addr: &cuEventRecord},
		{name: "cuEventSynchronize", addr: &cuEventSynchronize},
		{name: "cuEventElapsedTime_v2", alt: []string{"cuEventElapsedTime"}, addr: &cuEventElapsedTime},
		{name: "cuModuleLoadData", addr: &cuModuleLoadData},
		{name: "cuModuleUnload", addr: &cuModuleUnload},
		{name: "cuModuleGetFunction", addr: &cuModuleGetFunction},
		{name: "cuFuncSetAttribute", addr: &cuFuncSetAttribute},
		{name: "cuFuncGetAttribute", addr: &cuFuncGetAttribute},
		{name: "cuOccupancyMaxActiveBlocksPerMultiprocessor", addr: &cuOccupancyMaxActiveBlocks},
		{name: "cuLaunchKernel", addr: &cuLaunchKernel},
		{name: "cuStreamBeginCapture_v2", addr: &cuStreamBeginCapture},
		{name: "cuStreamEndCapture", addr: &cuStreamEndCapture},
		{name: "cuGraphInstantiateWithFlags", addr: &cuGraphInstantiateWithFlags},
		{name: "cuGraphLaunch", addr: &cuGraphLaunch},
		{name: "cuGraphExecDestroy", addr: &cuGraphExecDestroy},
		{name: "cuGraphDestroy", addr: &cuGraphDestroy},
	},
}

// Driver enum values used here, written by hand from cuda.h.
const (
	attrMaxThreadsPerBlock     = 1
	attrClockRate              = 13 // CU_DEVICE_ATTRIBUTE_CLOCK_RATE, kHz
	attrMultiprocessorCount    = 16
	attrMemoryClockRate        = 36 // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, kHz
	attrGlobalMemoryBusWidth   = 37 // CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, bits
	attrL2CacheSize            = 38
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
	attrMaxSharedPerBlockOptin = 97

	streamNonBlocking      = 1 // CU_STREAM_NON_BLOCKING
	eventDefault           = 0 // CU_EVENT_DEFAULT
	captureModeThreadLocal = 1 // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL

	funcAttrMaxThreads       = 0 // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	funcAttrSharedBytes      = 1 // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
	funcAttrLocalBytes       = 3 // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
	funcAttrNumRegs          = 4 // CU_FUNC_ATTRIBUTE_NUM_REGS
	funcAttrMaxDynamicShared = 8 // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
)

var (
	initOnce sync.Once
	initErr  error
)

// Connections is the number of hardware work queues per context that
// dspk asks the driver for (CUDA_DEVICE_MAX_CONNECTIONS) unless the
// environment sets it. The driver's default, 8, makes creating a context
// cost 0.10–0.13 s on the H200 where 2 cost 0.07 and 32 cost 0.54, and its
// teardown follows (docs/perf-wholeprocess.md); dspk has at most four
// streams at once (the device's, the window's copies, preprocessing's
// copies and detection's), whose order it sets itself with events, and its
// passes ran as fast with 2 queues as with 8.
const Connections = 2

// initDriver loads the driver and calls cuInit once per process, after
// setting CUDA_DEVICE_MAX_CONNECTIONS to [Connections] where the
// environment does not set it (the driver reads it when a context is
// created).
func initDriver() error {
	initOnce.Do(func() {
		if _, ok := os.LookupEnv("CUDA_DEVICE_MAX_CONNECTIONS"); !ok {
			os.Setenv("CUDA_DEVICE_MAX_CONNECTIONS", strconv.Itoa(Connections))
		}
		if err := driverLib.load(); err != nil {
			initErr = err
			return
		}
		if r := int(int32(call(cuInit, 0))); r != 0 {
			e := driverError("cuInit", "", r)
			if r == codeNoDevice {
				initErr = fmt.Errorf("cuda: no CUDA device (%v): %w", e, ErrNotFound)
			} else {
				initErr = e
			}
		}
	})
	return initErr
}

// cptr converts the address p of C memory (never Go memory) to a pointer.
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// cstring copies the NUL-terminated C string at p.
func cstring(p uintptr) string {
	if p == 0 {
		return ""
	}
	var b []byte
	for i := uintptr(0); ; i++ {
		c := *(*byte)(cptr(p + i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// driverError builds the *Error of driver status r from function fn.
func driverError(fn, op string, r int) *Error {
	e := &Error{Lib: LibDriver, Func: fn, Code: r, Op: op, Lost: IsSticky(r)}
	var p uintptr
	if cuGetErrorName != 0 && int32(call(cuGetErrorName, uintptr(r), uintptr(unsafe.Pointer(&p)))) == 0 {
		e.Name = cstring(p)
	} else {
		e.Name = "CUDA_ERROR_UNRECOGNIZED"
	}
	p = 0
	if cuGetErrorString != 0 && int32(call(cuGetErrorString, uintptr(r), uintptr(unsafe.Pointer(&p)))) == 0 {
		e.Msg = cstring(p)
	} else {
		e.Msg = "unrecognized error code"
	}
	return e
}

// drv calls a driver function outside a device (no loss tracking). The
// objects that converted pointers refer to are moved to the heap and kept
// alive for the call, as for call.
//
//go:uintptrescapes
func drv(name string, fn uintptr, args ...uintptr) error {
	if r := int(int32(call(fn, args...))); r != 0 {
		return driverError(name, "", r)
	}
	return nil
}

// DriverVersion returns the driver's CUDA version as 1000*major + 10*minor
// (13000 for CUDA 13.0).
func DriverVersion() (int, error) {
	if err := initDriver(); err != nil {
		return 0, err
	}
	var v int32
	if err := drv("cuDriverGetVersion", cuDriverGetVersion, uintptr(unsafe.Pointer(&v))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// DeviceCount returns the number of CUDA devices; an error wrapping
// ErrNotFound when the driver is missing or sees no device.
func DeviceCount() (int, error) {
	if err := initDriver(); err != nil {
		return 0, err
	}
	var n int32
	if err := drv("cuDeviceGetCount", cuDeviceGetCount, uintptr(unsafe.Pointer(&n))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// DeviceInfo describes one CUDA device.
type DeviceInfo struct {
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
func (i DeviceInfo) Arch() string { return fmt.Sprintf("sm_%d%d", i.Major, i.Minor) }

// queryDevice fills the DeviceInfo of ordinal n.
func queryDevice(n int) (DeviceInfo, int32, error) {
	info := DeviceInfo{Ordinal: n}
	var dev int32
	if err := drv("cuDeviceGet", cuDeviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(n)); err != nil {
		return info, 0, err
	}
	name := make([]byte, 256)
	if err := drv("cuDeviceGetName", cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(dev)); err != nil {
		return info, 0, err
	}
	info.Name = strings.TrimRight(string(name), "\x00")
	if i := strings.IndexByte(info.Name, 0); i >= 0 {
		info.Name = info.Name[:i]
	}
	attr := func(a int) (int, error) {
		var v int32
		err := drv("cuDeviceGetAttribute", cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(dev))
		return int(v), err
	}
	var err error
	for _, q := range []struct {
		a   int
		dst *int
	}{
		{attrComputeCapabilityMajor, &info.Major},
		{attrComputeCapabilityMinor, &info.Minor},
		{attrMultiprocessorCount, &info.SMs},
		{attrL2CacheSize, &info.L2},
		{attrMaxSharedPerBlockOptin, &info.MaxSharedPerBlock},
	} {
		if *q.dst, err = attr(q.a); err != nil {
			return info, 0, err
		}
	}
	// The clocks and the bus width only describe the device: a driver
	// that does not give them leaves them 0 rather than failing the open.
	for _, q := range []struct {
		a   int
		dst *int
	}{
		{attrClockRate, &info.ClockRate},
		{attrMemoryClockRate, &info.MemoryClockRate},
		{attrGlobalMemoryBusWidth, &info.MemoryBusWidth},
	} {
		if v, err := attr(q.a); err == nil && v > 0 {
			*q.dst = v
		}
	}
	var mem uint64
	if err := drv("cuDeviceTotalMem_v2", cuDeviceTotalMem, uintptr(unsafe.Pointer(&mem)), uintptr(dev)); err != nil {
		return info, 0, err
	}
	info.Memory = mem
	bus := make([]byte, 32)
	if err := drv("cuDeviceGetPCIBusId", cuDeviceGetPCIBusID, uintptr(unsafe.Pointer(&bus[0])), uintptr(len(bus)), uintptr(dev)); err == nil {
		info.PCIBusID = cstringBytes(bus)
	}
	var v int32
	if err := drv("cuDriverGetVersion", cuDriverGetVersion, uintptr(unsafe.Pointer(&v))); err != nil {
		return info, 0, err
	}
	info.DriverVersion = int(v)
	return info, dev, nil
}

// cstringBytes returns b up to its first NUL.
func cstringBytes(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// Devices lists the CUDA devices; an error wrapping ErrNotFound when the
// driver is missing or sees no device.
func Devices() ([]DeviceInfo, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("cuda: the driver sees no device: %w", ErrNotFound)
	}
	out := make([]DeviceInfo, 0, n)
	for i := 0; i < n; i++ {
		info, _, err := queryDevice(i)
		if err != nil {
			return out, err
		}
		out = append(out, info)
	}
	return out, nil
}

// Device is one GPU, bound to its primary context, with one non-blocking
// stream and a lazily created cuBLAS handle. Use it through [Device.Do].
type Device struct {
	info DeviceInfo
	dev  int32
	ctx  uintptr // primary context

	mu        sync.Mutex
	lost      atomic.Pointer[Error]
	stream    uintptr
	blas      uintptr // cuBLAS handle, 0 until first use
	blasSet   uintptr // stream the handle is bound to
	modules   map[[32]byte]*Module
	closed    bool
	debugSync bool
	cur       Ctx
}

// Open opens device ordinal n: it loads the driver, retains the primary
// context and creates the device's stream. The error wraps ErrNotFound when
// the driver is missing or the device does not exist.
func Open(n int) (*Device, error) {
	count, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if n < 0 || n >= count {
		return nil, fmt.Errorf("cuda: device %d does not exist (%d device(s)): %w", n, count, ErrNotFound)
	}
	info, dev, err := queryDevice(n)
	if err != nil {
		return nil, err
	}
	d := &Device{info: info, dev: dev, modules: map[[32]byte]*Module{}}
	d.debugSync = os.Getenv("DSPK_CUDA_SYNC") == "1"
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := drv("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&d.ctx)), uintptr(dev)); err != nil {
		return nil, err
	}
	if err := drv("cuCtxSetCurrent", cuCtxSetCurrent, d.ctx); err != nil {
		call(cuDevicePrimaryCtxRelease, uintptr(dev))
		return nil, err
	}
	if err := drv("cuStreamCreate", cuStreamCreate, uintptr(unsafe.Pointer(&d.stream)), streamNonBlocking); err != nil {
		call(cuDevicePrimaryCtxRelease, uintptr(dev))
		return nil, err
	}
	d.cur = Ctx{dev: d, stream: d.stream}
	return d, nil
}

// Info returns the device's description.
func (d *Device) Info() DeviceInfo { return d.info }

// Err returns the sticky fault that marked the device lost, or nil.
func (d *Device) Err() error {
	if e := d.lost.Load(); e != nil {
		return e
	}
	return nil
}

// Do runs f with the device's context current on a locked OS thread,
// holding the device's mutex: calls into the device from several
// goroutines are serialised. The Ctx is valid only during f. Do must not be
// called from inside f. If the device is lost, Do returns the fault
// without running f.
func (d *Device) Do(f func(*Ctx) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		panic("cuda: Do on a closed Device")
	}
	if err := d.Err(); err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := &d.cur
	if r := int(int32(call(cuCtxSetCurrent, d.ctx))); r != 0 {
		return c.fail("cuCtxSetCurrent", "", r)
	}
	c.active = true
	defer func() { c.active = false }()
	return f(c)
}

// Close releases the device's cuBLAS handle, modules, stream and primary
// context. A lost device is only forgotten: its context cannot be used.
func (d *Device) Close() error { return d.close(false) }

// CloseFinal is Close for a process that makes no further CUDA call: it
// also resets the primary context (cuDevicePrimaryCtxReset), destroying
// it even though the CUDA runtime inside cuBLAS keeps its own reference
// to it until the process ends. The context's teardown (50–90 ms on the
// H200, with the memory it held) then happens here, where a caller can
// overlap it with other work, and not in the process's exit, where nothing
// can. Opening a device again afterwards works for the driver API, but
// cuBLAS must not be used again in the process.
func (d *Device) CloseFinal() error { return d.close(true) }

// primaryActive reports whether the device's primary context exists
// (someone retains it), also after Close.
func (d *Device) primaryActive() (bool, error) {
	var flags uint32
	var active int32
	err := drv("cuDevicePrimaryCtxGetState", cuDevicePrimaryCtxGetState, uintptr(d.dev),
		uintptr(unsafe.Pointer(&flags)), uintptr(unsafe.Pointer(&active)))
	return active != 0, err
}

func (d *Device) close(reset bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if d.Err() != nil {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	keep(drv("cuCtxSetCurrent", cuCtxSetCurrent, d.ctx))
	keep(drv("cuStreamSynchronize", cuStreamSynchronize, d.stream))
	if d.blas != 0 {
		keep(blasCheck("cublasDestroy_v2", "", call(cublasDestroy, d.blas)))
		d.blas = 0
	}
	for k, m := range d.modules {
		keep(drv("cuModuleUnload", cuModuleUnload, m.h))
		delete(d.modules, k)
	}
	keep(drv("cuStreamDestroy_v2", cuStreamDestroy, d.stream))
	keep(drv("cuDevicePrimaryCtxRelease_v2", cuDevicePrimaryCtxRelease, uintptr(d.dev)))
	if reset {
		keep(drv("cuDevicePrimaryCtxReset_v2", cuDevicePrimaryCtxReset, uintptr(d.dev)))
	}
	return first
}

// Ctx is the handle to a device inside [Device.Do]: every call runs on the
// Ctx's stream (the device's own unless [Ctx.WithStream] chose another).
type Ctx struct {
	dev       *Device
	stream    uintptr
	active    bool
	capturing bool
}

// Device returns the device c belongs to.
func (c *Ctx) Device() *Device { return c.dev }

// Stream returns the stream c's calls run on.
func (c *Ctx) Stream() Stream { return Stream(c.stream) }

// WithStream returns a Ctx whose calls run on stream s; it is valid only
// during the same Do.
func (c *Ctx) WithStream(s Stream) *Ctx {
	c.live()
	return &Ctx{dev: c.dev, stream: uintptr(s), active: true}
}

// live panics if c is used outside Do and returns c's device.
func (c *Ctx) live() *Device {
	if c.dev == nil || !c.dev.cur.active {
		panic("cuda: Ctx used outside Device.Do")
	}
	return c.dev
}

// fail converts driver status r of fn into an error; a sticky fault marks
// the device lost, and every later call returns that first fault.
func (c *Ctx) fail(fn, op string, r int) error {
	e := driverError(fn, op, r)
	if e.Lost {
		c.dev.lost.CompareAndSwap(nil, e)
		return c.dev.lost.Load()
	}
	return e
}

// do calls driver function fn with args, returning the device's fault if
// it is lost (without calling) and recording a new fault.
//
//go:uintptrescapes
func (c *Ctx) do(name, op string, fn uintptr, args ...uintptr) error {
	d := c.live()
	if e := d.lost.Load(); e != nil {
		return e
	}
	if r := int(int32(call(fn, args...))); r != 0 {
		return c.fail(name, op, r)
	}
	return nil
}
