package compute

import (
	"math"
	"strings"
	"testing"
)

// TestGPUPeaks computes the peaks of an H200's attributes: 132 SMs at
// 1.98 GHz, HBM3e at 3.201 GHz on 6144 bits.
func TestGPUPeaks(t *testing.T) {
	p := gpuPeaks(GPUInfo{Name: "NVIDIA H200", Major: 9, SMs: 132, ClockRate: 1980000, MemoryClockRate: 3201000, MemoryBusWidth: 6144})
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*want }
	if !near(p.FP64, 2*132*64*1.98e9) || !near(p.FP32, 2*132*128*1.98e9) || !near(p.FP64Matrix, 2*p.FP64) {
		t.Errorf("arithmetic peaks %+v", p)
	}
	if !near(p.Bandwidth, 2*3.201e9*6144/8) || p.Cores != 132 {
		t.Errorf("bandwidth %g, cores %d", p.Bandwidth, p.Cores)
	}
	if !strings.HasPrefix(p.Source, "theoretical, from the device's attributes: 132 SMs × 64 FP64") {
		t.Errorf("source %q", p.Source)
	}
	// A driver that gives no clock, and an unknown capability: no
	// arithmetic peak, said in the source.
	if p := gpuPeaks(GPUInfo{Major: 9, SMs: 132, MemoryClockRate: 1, MemoryBusWidth: 8}); p.FP64 != 0 || p.FP32 != 0 || !strings.Contains(p.Source, "clock rate unknown") {
		t.Errorf("no clock: %+v", p)
	}
	if p := gpuPeaks(GPUInfo{Major: 99, SMs: 1, ClockRate: 1}); p.FP64 != 0 || p.Bandwidth != 0 || !strings.Contains(p.Source, "sm_990") ||
		!strings.Contains(p.Source, "memory bandwidth unknown") {
		t.Errorf("unknown capability: %+v", p)
	}
}

// TestCPUPeaks checks the CPU's peaks against their own clock and the
// parsing of /proc/cpuinfo.
func TestCPUPeaks(t *testing.T) {
	p := cpuPeaks(3)
	hz, how := cpuClock()
	if !(hz > 1e8 && hz < 1e10) || how == "" {
		t.Fatalf("clock %g Hz (%s)", hz, how)
	}
	if p.Cores != 3 || !(p.FP32 >= p.FP64 && p.FP64 >= 3*hz*4) || p.FP64Matrix != p.FP64 || p.Bandwidth != 0 {
		t.Errorf("peaks %+v at %g Hz", p, hz)
	}
	if !strings.Contains(p.Source, how) {
		t.Errorf("source %q does not say %q", p.Source, how)
	}
	if got := cpuinfoMHz("processor\t: 0\ncpu MHz\t\t: 2096.025\nprocessor\t: 1\ncpu MHz\t\t: 3100.5\n"); got != 3100.5 {
		t.Errorf("cpuinfoMHz %g", got)
	}
	if got := cpuinfoMHz("processor\t: 0\n"); got != 0 {
		t.Errorf("cpuinfoMHz without a clock: %g", got)
	}
}

// TestMeasureClock checks that the chain of adds gives a plausible clock.
func TestMeasureClock(t *testing.T) {
	if hz := measureClock(); !(hz > 2e8 && hz < 1e10) {
		t.Errorf("measured clock %g Hz", hz)
	}
}
