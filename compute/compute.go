package compute

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"dspk/internal/cuda"
)

// Kind is the kind of a Device.
type Kind int

// Device kinds.
const (
	CPU Kind = iota
	CUDA
)

// String returns "cpu" or "cuda".
func (k Kind) String() string {
	switch k {
	case CPU:
		return "cpu"
	case CUDA:
		return "cuda"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Device is where operations run: the CPU or one CUDA GPU.
type Device struct {
	kind   Kind
	spec   string
	reason string
	gpu    *cuda.Device
	ctx    Ctx // handed to Do's functions
	opened OpenTimes

	hostMu sync.Mutex
	hosts  []*HostMem // allocated by Device.AllocHost, freed by Close
}

// Kind returns the device's kind.
func (d *Device) Kind() Kind { return d.kind }

// Spec returns the device's name as Open takes it: "cpu" or "cuda:N".
func (d *Device) Spec() string { return d.spec }

// Reason returns why Open chose the device ("requested" unless "auto").
func (d *Device) Reason() string { return d.reason }

// GPU returns the description of a CUDA device's GPU; the zero GPUInfo for
// the CPU.
func (d *Device) GPU() GPUInfo {
	if d.gpu == nil {
		return GPUInfo{}
	}
	return GPUInfo(d.gpu.Info())
}

// Err returns the fault that marked a CUDA device lost (wrapping
// ErrDeviceLost), or nil.
func (d *Device) Err() error {
	if d.gpu == nil {
		return nil
	}
	return d.gpu.Err()
}

// String describes the device, e.g. "cuda:0 (NVIDIA H200, sm_90, 140.4 GiB)"
// or "cpu (16 cores)".
func (d *Device) String() string {
	if d.gpu != nil {
		i := d.GPU()
		return fmt.Sprintf("%s (%s, %s, %.1f GiB)", d.spec, i.Name, i.Arch(), float64(i.Memory)/(1<<30))
	}
	return fmt.Sprintf("cpu (%d cores)", runtime.GOMAXPROCS(0))
}

// Do runs f with the GPU of a CUDA device ready on a locked OS thread,
// holding the device's mutex, so that calls from several goroutines are
// serialised; the Ctx is valid only during f, and Do must not be called
// from inside f. Hand whole stages to Do, never single launches (a hand-off
// costs about 20 µs). If the device is lost, Do returns the fault without
// running f. On the CPU it panics.
func (d *Device) Do(f func(*Ctx) error) error {
	if d.gpu == nil {
		panic("compute: Do on a CPU device")
	}
	return d.gpu.Do(func(c *cuda.Ctx) error {
		d.ctx.c = c
		return f(&d.ctx)
	})
}

// AllocHost allocates bytes (> 0) of host memory for data that crosses to
// the device: pinned on a CUDA device (so that [Window.Load] uploads it at
// full speed), ordinary Go memory on the CPU. It must not be called inside
// Do. Free it with [Device.FreeHost]; Close frees what is left.
func (d *Device) AllocHost(bytes int) (*HostMem, error) {
	if bytes <= 0 {
		panic(fmt.Sprintf("compute: AllocHost of %d bytes", bytes))
	}
	if d.gpu == nil {
		return d.keepHost(&HostMem{cpu: make([]uint64, (bytes+7)/8), n: bytes}), nil
	}
	// The pages are faulted in before Do, so that other goroutines keep
	// the device meanwhile; only their registration holds it.
	return d.AllocHostPrepared(PrepareHost(bytes))
}

// PreparedHost is host memory made ready for [Device.AllocHostPrepared]
// before the device is known: on Linux anonymous memory mapped on a
// huge-page boundary and faulted in from every core, which is most of the
// cost of pinning it (the kernel allocating and zeroing its pages). It
// holds no driver resource.
type PreparedHost struct {
	m *cuda.HostBuffer // nil where mapping failed: pinning then allocates
	n int
}

// PrepareHost maps and faults in bytes (> 0) of host memory for a later
// [Device.AllocHostPrepared]. It makes no driver call, so it may run
// while a GPU is being opened. Where mapping fails, the memory is
// allocated by AllocHostPrepared instead.
func PrepareHost(bytes int) *PreparedHost {
	if bytes <= 0 {
		panic(fmt.Sprintf("compute: PrepareHost of %d bytes", bytes))
	}
	m, _ := cuda.MapHost(bytes)
	return &PreparedHost{m: m, n: bytes}
}

// Len returns the size in bytes.
func (p *PreparedHost) Len() int { return p.n }

// Free releases memory that no AllocHostPrepared took. It may be called
// more than once, and after AllocHostPrepared (which took the memory).
func (p *PreparedHost) Free() {
	if p.m != nil {
		p.m.FreeUnregistered()
		p.m = nil
	}
}

// AllocHostPrepared is [Device.AllocHost] of p's size, taking p's memory
// (p is left empty): on a CUDA device it pins it (or, where p could not be
// mapped, allocates pinned memory); on the CPU it frees p and allocates Go
// memory. It must not be called inside Do.
func (d *Device) AllocHostPrepared(p *PreparedHost) (*HostMem, error) {
	bytes := p.n
	if d.gpu == nil {
		p.Free()
		return d.AllocHost(bytes)
	}
	m := p.m
	p.m = nil
	var h *HostMem
	err := d.Do(func(c *Ctx) error {
		b, err := c.c.PinHost(m, bytes)
		m = nil // registered, or unmapped by PinHost
		if err == nil {
			h = &HostMem{h: b, n: bytes}
		}
		return err
	})
	if m != nil {
		m.FreeUnregistered() // Do ran nothing (a lost device)
	}
	if err != nil {
		return nil, err
	}
	return d.keepHost(h), nil
}

// keepHost records h among the host memory Close frees.
func (d *Device) keepHost(h *HostMem) *HostMem {
	d.hostMu.Lock()
	d.hosts = append(d.hosts, h)
	d.hostMu.Unlock()
	return h
}

// FreeHost releases h, allocated by [Device.AllocHost]; it must not be
// used afterwards, nor FreeHost called inside Do.
func (d *Device) FreeHost(h *HostMem) error {
	d.hostMu.Lock()
	for i, x := range d.hosts {
		if x == h {
			d.hosts = append(d.hosts[:i], d.hosts[i+1:]...)
			break
		}
	}
	d.hostMu.Unlock()
	if h.h == nil {
		h.cpu, h.n = nil, 0
		return nil
	}
	return d.Do(func(c *Ctx) error { return c.FreeHost(h) })
}

// pinnedOf returns the pinned memory of [Device.AllocHost] holding the
// bytes at p, and their offset in it.
func (d *Device) pinnedOf(p unsafe.Pointer, bytes int) (*HostMem, int, bool) {
	a := uintptr(p)
	d.hostMu.Lock()
	defer d.hostMu.Unlock()
	for _, h := range d.hosts {
		if h.h == nil {
			continue
		}
		base := uintptr(h.Ptr())
		if a >= base && a+uintptr(bytes) <= base+uintptr(h.n) {
			return h, int(a - base), true
		}
	}
	return nil, 0, false
}

// Close releases a GPU's resources, the host memory of AllocHost
// included; closing the CPU does nothing.
func (d *Device) Close() error { return d.close(false) }

// CloseFinal is Close for a process that will make no further GPU call: on
// a CUDA device it also destroys the primary context, which the CUDA
// runtime inside cuBLAS otherwise keeps until the process exits, so that
// its teardown costs the caller (who can overlap it with other work, such
// as writing results) and not the process's exit. No device may be used
// for cuBLAS work in the process afterwards; on the CPU it is Close.
func (d *Device) CloseFinal() error { return d.close(true) }

func (d *Device) close(final bool) error {
	if d.gpu == nil {
		return nil
	}
	d.hostMu.Lock()
	hosts := d.hosts
	d.hosts = nil
	d.hostMu.Unlock()
	var first error
	if len(hosts) > 0 && d.gpu.Err() == nil {
		first = d.Do(func(c *Ctx) error {
			var first error
			for _, h := range hosts {
				if err := c.FreeHost(h); err != nil && first == nil {
					first = err
				}
			}
			return first
		})
	}
	closeGPU := d.gpu.Close
	if final {
		closeGPU = d.gpu.CloseFinal
	}
	if err := closeGPU(); first == nil {
		first = err
	}
	return first
}

// Open returns the device named by spec — "auto", "cpu", "cuda" (= cuda:0)
// or "cuda:N" — and a short reason for the choice. With "auto" a missing
// driver, NVRTC or GPU is not an error: the CPU is returned and the
// reason says why (e.g. "no CUDA driver: …"). An explicit CUDA device that
// cannot be opened is an error, wrapping ErrNotFound when the driver,
// NVRTC or the device is missing. cuBLAS is loaded on the device's first
// cuBLAS call, which fails with an error wrapping ErrNotFound if it is
// missing; [Devices] reports whether it loads.
func Open(spec string) (*Device, string, error) {
	switch {
	case spec == "cpu":
		return &Device{kind: CPU, spec: "cpu", reason: "requested"}, "requested", nil
	case spec == "auto" || spec == "":
		d, err := openCUDA(0)
		if err != nil {
			r := fallbackReason(err)
			return &Device{kind: CPU, spec: "cpu", reason: r}, r, nil
		}
		i := d.gpu.Info()
		r := fmt.Sprintf("first CUDA GPU (%s, %s)", i.Name, i.Arch())
		d.reason = r
		return d, r, nil
	case spec == "cuda" || strings.HasPrefix(spec, "cuda:"):
		n := 0
		if spec != "cuda" {
			v, err := strconv.Atoi(spec[len("cuda:"):])
			if err != nil || v < 0 {
				return nil, "", fmt.Errorf("compute: bad device %q: want auto, cpu or cuda:N", spec)
			}
			n = v
		}
		d, err := openCUDA(n)
		if err != nil {
			return nil, "", fmt.Errorf("compute: cannot open %s: %w", spec, err)
		}
		d.reason = "requested"
		return d, "requested", nil
	}
	return nil, "", fmt.Errorf("compute: bad device %q: want auto, cpu or cuda:N", spec)
}

// openCUDA opens GPU n after checking that NVRTC loads, which it does
// while the driver initialises and the context is created: the two are
// independent until the first kernel is compiled. cuBLAS is loaded on the
// first cuBLAS call (a detect run on a GPU with full-rate FP64 makes none):
// loading its libraries beside the driver's start-up delays the context by
// about 0.09 s on the H200 (docs/perf-wholeprocess.md).
func openCUDA(n int) (*Device, error) {
	t0 := time.Now()
	libs := make(chan error, 1)
	var libTime time.Duration
	go func() {
		t := time.Now()
		err := cuda.LoadNVRTC()
		libTime = time.Since(t)
		libs <- err
	}()
	g, err := cuda.Open(n)
	ctxTime := time.Since(t0)
	libErr := <-libs
	if err != nil {
		return nil, err
	}
	if libErr != nil {
		g.Close()
		return nil, libErr
	}
	d := &Device{kind: CUDA, spec: "cuda:" + strconv.Itoa(n), gpu: g,
		opened: OpenTimes{Context: ctxTime, Libraries: libTime, Total: time.Since(t0)}}
	d.ctx.dev = d
	return d, nil
}

// fallbackReason says in a few words why "auto" took the CPU.
func fallbackReason(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "CUDA driver") && errors.Is(err, cuda.ErrNotFound):
		return "no CUDA driver: " + msg
	case strings.Contains(msg, "NVRTC") || strings.Contains(msg, "cuBLAS"):
		return "CUDA library missing: " + msg
	case errors.Is(err, cuda.ErrNotFound):
		return "no CUDA device: " + msg
	}
	return "CUDA failed: " + msg
}

// DeviceInfo describes one device for listings.
type DeviceInfo struct {
	// Spec is the name Open takes: "cpu" or "cuda:N".
	Spec string
	// Name is the product name ("NVIDIA H200") or the CPU's architecture.
	Name string
	// Arch is the GPU architecture ("sm_90"); empty for the CPU.
	Arch string
	// Memory is the device memory in bytes (0 for the CPU).
	Memory uint64
	// Cores is the CPU's GOMAXPROCS or the GPU's multiprocessor count.
	Cores int
	// DriverVersion is the CUDA driver version (13000 for 13.0); 0 for
	// the CPU.
	DriverVersion int
}

// Report is what Devices found.
type Report struct {
	// Devices lists the CPU first, then every CUDA GPU.
	Devices []DeviceInfo
	// Libraries are the CUDA library files mapped into the process, from
	// /proc/self/maps.
	Libraries []string
	// CUDA is empty when the driver, NVRTC and cuBLAS all loaded, and
	// otherwise says what is missing.
	CUDA string
}

// Devices lists the CPU and the CUDA GPUs, loading the CUDA libraries to
// report their paths. It never fails: what is missing is said in
// Report.CUDA.
func Devices() Report {
	r := Report{Devices: []DeviceInfo{{Spec: "cpu", Name: runtime.GOOS + "/" + runtime.GOARCH, Cores: runtime.GOMAXPROCS(0)}}}
	gpus, err := cuda.Devices()
	if err != nil {
		r.CUDA = fallbackReason(err)
	}
	for _, g := range gpus {
		r.Devices = append(r.Devices, DeviceInfo{
			Spec: "cuda:" + strconv.Itoa(g.Ordinal), Name: g.Name, Arch: g.Arch(),
			Memory: g.Memory, Cores: g.SMs, DriverVersion: g.DriverVersion,
		})
	}
	if err == nil {
		if err := cuda.LoadLibraries(); err != nil {
			r.CUDA = fallbackReason(err)
		}
	}
	r.Libraries = cuda.LoadedLibraries()
	return r
}
