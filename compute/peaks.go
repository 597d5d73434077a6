package compute

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/cpu"
)

// Peaks are a device's peak rates: the most its arithmetic units and its
// memory could deliver, never a measurement of dspk's code. The
// benchmarks put each op's time beside the time its work takes at these
// rates. A rate that cannot be known is 0.
type Peaks struct {
	// FP64 and FP32 are the arithmetic peaks in FLOP/s over the whole
	// device. On a GPU a fused multiply-add counts as two flops (the
	// FMA lanes × 2). On the CPU they are what dspk's vector kernels can
	// issue, which use no fused multiply-add: two vector adds and two
	// vector multiplies a cycle, at the width of the kernels (256 bits
	// with AVX2, else scalar).
	FP64, FP32 float64
	// FP64Matrix is the FP64 peak of dense matrix products in FLOP/s:
	// the tensor cores' where the GPU has FP64 tensor cores (twice FP64
	// on sm_80 and sm_90), else FP64.
	FP64Matrix float64
	// Bandwidth is the device memory's bandwidth in bytes per second,
	// reads and writes together; 0 on the CPU, whose bandwidth no
	// attribute gives.
	Bandwidth float64
	// Cores is the number of cores (the CPU's GOMAXPROCS) or
	// multiprocessors (a GPU's SMs) the rates sum over.
	Cores int
	// Source says where the figures come from: the attributes and the
	// arithmetic, e.g. "theoretical, from the device's attributes: 132
	// SMs × 64 FP64 and 128 FP32 FMA lanes × 1.980 GHz; memory 2.619 GHz
	// × 5120 bits × 2".
	Source string
}

// Peaks returns the device's theoretical peak rates. On a GPU they are
// computed from the driver's attributes (multiprocessors, clock rate,
// memory clock and bus width) and the FMA lanes per multiprocessor of
// its compute capability; a capability dspk does not know gives 0 for
// the arithmetic. On the CPU they are cores × clock × vector width, the
// clock being cpufreq's maximum, else /proc/cpuinfo's "cpu MHz", else
// measured once by a chain of dependent adds.
func (d *Device) Peaks() Peaks {
	if d.gpu == nil {
		return cpuPeaks(runtime.GOMAXPROCS(0))
	}
	return gpuPeaks(d.GPU())
}

// gpuLanes returns the FP32 and FP64 fused multiply-add lanes of one
// multiprocessor of compute capability major.minor (the CUDA programming
// guide's throughput of arithmetic instructions, results per clock per
// multiprocessor) and the factor of the FP64 tensor cores over FP64
// (1 without them); 0 lanes for a capability not in the table.
func gpuLanes(major, minor int) (fp32, fp64 int, matrix float64) {
	switch {
	case major == 5:
		return 128, 4, 1
	case major == 6 && minor == 0:
		return 64, 32, 1
	case major == 6:
		return 128, 4, 1
	case major == 7 && minor == 0:
		return 64, 32, 1
	case major == 7 && minor == 5:
		return 64, 2, 1
	case major == 8 && minor == 0:
		return 64, 32, 2
	case major == 8:
		return 128, 2, 1
	case major == 9 && minor == 0:
		return 128, 64, 2
	case major == 10 && minor == 0:
		return 128, 64, 1
	case major == 12:
		return 128, 2, 1
	}
	return 0, 0, 1
}

// gpuPeaks computes the theoretical peaks of the GPU i describes.
func gpuPeaks(i GPUInfo) Peaks {
	p := Peaks{Cores: i.SMs}
	clock := float64(i.ClockRate) * 1e3
	fp32, fp64, matrix := gpuLanes(i.Major, i.Minor)
	var arith, mem string
	switch {
	case clock == 0:
		arith = "clock rate unknown"
	case fp64 == 0:
		arith = fmt.Sprintf("FMA lanes of %s unknown", i.Arch())
	default:
		p.FP64 = 2 * float64(i.SMs*fp64) * clock
		p.FP32 = 2 * float64(i.SMs*fp32) * clock
		p.FP64Matrix = matrix * p.FP64
		arith = fmt.Sprintf("%d SMs × %d FP64 and %d FP32 FMA lanes × %.3f GHz", i.SMs, fp64, fp32, clock/1e9)
		if matrix != 1 {
			arith += fmt.Sprintf(", FP64 tensor cores %g× FP64", matrix)
		}
	}
	if i.MemoryClockRate > 0 && i.MemoryBusWidth > 0 {
		// Double data rate: two transfers per memory clock.
		mclock := float64(i.MemoryClockRate) * 1e3
		p.Bandwidth = 2 * mclock * float64(i.MemoryBusWidth) / 8
		mem = fmt.Sprintf("memory %.3f GHz × %d bits × 2", mclock/1e9, i.MemoryBusWidth)
	} else {
		mem = "memory bandwidth unknown"
	}
	p.Source = "theoretical, from the device's attributes: " + arith + "; " + mem
	return p
}

// cpuPeaks computes the CPU's peaks over cores cores.
func cpuPeaks(cores int) Peaks {
	hz, how := cpuClock()
	// Two vector adds and two vector multiplies a cycle; 4 float64 or 8
	// float32 lanes at 256 bits.
	lanes64, lanes32, width := 1.0, 1.0, "scalar"
	if cpu.X86.HasAVX2 {
		lanes64, lanes32, width = 4, 8, "256-bit AVX2"
	}
	c := float64(cores)
	return Peaks{
		FP64: c * hz * 4 * lanes64, FP32: c * hz * 4 * lanes32, FP64Matrix: c * hz * 4 * lanes64, Cores: cores,
		Source: fmt.Sprintf("theoretical: %d cores × %.3f GHz (%s) × 2 adds and 2 multiplies a cycle, %s", cores, hz/1e9, how, width),
	}
}

var (
	clockOnce sync.Once
	clockHz   float64
	clockHow  string
)

// cpuClock returns the CPU's clock in Hz and where it comes from, found
// once per process.
func cpuClock() (float64, string) {
	clockOnce.Do(func() {
		if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil {
			if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && khz > 0 {
				clockHz, clockHow = khz*1e3, "cpufreq maximum"
				return
			}
		}
		if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
			if mhz := cpuinfoMHz(string(b)); mhz > 0 {
				clockHz, clockHow = mhz*1e6, "/proc/cpuinfo"
				return
			}
		}
		clockHz, clockHow = measureClock(), "measured"
	})
	return clockHz, clockHow
}

// cpuinfoMHz returns the largest "cpu MHz" of a /proc/cpuinfo, 0 if it
// has none.
func cpuinfoMHz(s string) float64 {
	var best float64
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) != "cpu MHz" {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			best = max(best, f)
		}
	}
	return best
}

// addChainLen is the number of dependent adds in one pass of addChain.
const addChainLen = 16

// measureClock estimates the clock in Hz from the fastest of a few runs
// of a chain of dependent integer adds, one cycle each on every core
// dspk runs on (about 0.1 s in all).
func measureClock() float64 {
	const n = 1 << 21
	var a [addChainLen]uint64
	for i := range a {
		a[i] = uint64(i)*0x9e3779b97f4a7c15 + 1
	}
	best := time.Duration(1<<63 - 1)
	for range 5 {
		t := time.Now()
		clockSink += addChain(&a, n)
		best = min(best, time.Since(t))
	}
	return addChainLen * n / best.Seconds()
}

// clockSink keeps addChain's result alive.
var clockSink uint64

// addChain adds the entries of a to one sum n times over: each add waits
// for the one before it, so a pass takes addChainLen cycles whatever the
// core can issue beside it (the loads do not depend on the sum).
//
//go:noinline
func addChain(a *[addChainLen]uint64, n int) uint64 {
	var x uint64
	for range n {
		x += a[0]
		x += a[1]
		x += a[2]
		x += a[3]
		x += a[4]
		x += a[5]
		x += a[6]
		x += a[7]
		x += a[8]
		x += a[9]
		x += a[10]
		x += a[11]
		x += a[12]
		x += a[13]
		x += a[14]
		x += a[15]
	}
	return x
}
