package compute

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"dspk/compute/cuda"
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
}

// Kind returns the device's kind.
func (d *Device) Kind() Kind { return d.kind }

// Spec returns the device's name as Open takes it: "cpu" or "cuda:N".
func (d *Device) Spec() string { return d.spec }

// Reason returns why Open chose the device ("requested" unless "auto").
func (d *Device) Reason() string { return d.reason }

// CUDA returns the GPU of a CUDA device, nil for the CPU.
func (d *Device) CUDA() *cuda.Device { return d.gpu }

// String describes the device, e.g. "cuda:0 (NVIDIA H200, sm_90, 140.4 GiB)"
// or "cpu (16 cores)".
func (d *Device) String() string {
	if d.gpu != nil {
		i := d.gpu.Info()
		return fmt.Sprintf("%s (%s, %s, %.1f GiB)", d.spec, i.Name, i.Arch(), float64(i.Memory)/(1<<30))
	}
	return fmt.Sprintf("cpu (%d cores)", runtime.GOMAXPROCS(0))
}

// Do runs f on the GPU of a CUDA device (see cuda.Device.Do); on the CPU it
// panics.
func (d *Device) Do(f func(*cuda.Ctx) error) error {
	if d.gpu == nil {
		panic("compute: Do on a CPU device")
	}
	return d.gpu.Do(f)
}

// Close releases a GPU's resources; closing the CPU does nothing.
func (d *Device) Close() error {
	if d.gpu == nil {
		return nil
	}
	return d.gpu.Close()
}

// Open returns the device named by spec — "auto", "cpu", "cuda" (= cuda:0)
// or "cuda:N" — and a short reason for the choice. With "auto" a missing
// driver, library or GPU is not an error: the CPU is returned and the
// reason says why (e.g. "no CUDA driver: …"). An explicit CUDA device that
// cannot be opened is an error, wrapping cuda.ErrNotFound when the driver,
// a library or the device is missing.
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

// openCUDA opens GPU n after checking that NVRTC and cuBLAS load.
func openCUDA(n int) (*Device, error) {
	g, err := cuda.Open(n)
	if err != nil {
		return nil, err
	}
	if err := cuda.LoadLibraries(); err != nil {
		g.Close()
		return nil, err
	}
	return &Device{kind: CUDA, spec: "cuda:" + strconv.Itoa(n), gpu: g}, nil
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
