package compute_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
)

// TestWindowCPU checks that a CPU window keeps the loaded slice and that
// its working array is the host array ops write.
func TestWindowCPU(t *testing.T) {
	dev, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	const C, T, cf = 3, 7, 5
	w, err := dev.NewWindow(C, T, cf)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Channels() != C || w.Len() != T || w.FileChannels() != cf || w.Device() != dev {
		t.Fatalf("shape %d %d %d", w.Channels(), w.Len(), w.FileChannels())
	}
	raw := make([]int16, T*cf)
	if err := w.Load(raw); err != nil {
		t.Fatal(err)
	}
	if &w.Raw()[0] != &raw[0] {
		t.Error("CPU Load copied the raw samples")
	}
	x, err := w.Data()
	if err != nil || len(x) != C*T {
		t.Fatalf("Data: %d values, %v", len(x), err)
	}
	x[4] = 9
	w.MarkWritten()
	if y, _ := w.Data(); y[4] != 9 {
		t.Error("Data is not the working array")
	}
	if (w.RawMem() != compute.Mem{} || w.DataMem() != compute.Mem{}) {
		t.Error("a CPU window has device memory")
	}
	h, err := dev.AllocHost(10)
	if err != nil || len(h.Int16()) != 5 {
		t.Fatalf("AllocHost: %v", err)
	}
	if err := dev.FreeHost(h); err != nil {
		t.Error(err)
	}
}

// TestWindowGPU uploads raw samples from pinned and from pageable memory,
// reads them back on the device, writes the working array on the device
// and checks that Data downloads it once per write.
func TestWindowGPU(t *testing.T) {
	dev := gputest.Device(t)
	const C, T, cf = 5, 1001, 7
	w, err := dev.NewWindow(C, T, cf)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	pin, err := dev.AllocHost(T * cf * 2)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.FreeHost(pin)
	for _, raw := range [][]int16{pin.Int16(), make([]int16, T*cf)} {
		for i := range raw {
			raw[i] = int16(i*37 - 20000)
		}
		if err := w.Load(raw); err != nil {
			t.Fatal(err)
		}
		got := make([]int16, T*cf)
		want := slices.Clone(raw)
		clear(raw) // Load has copied
		if err := dev.Do(func(c *compute.Ctx) error { return compute.Download(c, got, w.RawMem().Ptr) }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Error("raw samples on the device differ from those loaded")
		}
	}
	x := make([]float32, C*T)
	for i := range x {
		x[i] = float32(i) / 3
	}
	if err := dev.Do(func(c *compute.Ctx) error { return compute.Upload(c, w.DataMem().Ptr, x) }); err != nil {
		t.Fatal(err)
	}
	w.MarkWritten()
	got, err := w.Data()
	if err != nil || !slices.Equal(got, x) {
		t.Fatalf("Data after a device write: %v", err)
	}
	// Without a new write Data does not download: a host change stays.
	got[0] = float32(math.NaN())
	if again, _ := w.Data(); !math.IsNaN(float64(again[0])) {
		t.Error("Data downloaded without a device write")
	}
}

// TestMedian checks that Median warms up once, runs reps times, returns
// the median and stops at an error.
func TestMedian(t *testing.T) {
	dev, _, _ := compute.Open("cpu")
	calls := 0
	d, err := dev.Median(4, func() error {
		calls++
		return nil
	})
	if err != nil || calls != 5 || d < 0 {
		t.Errorf("Median: %v, %v after %d calls, want 5", d, err, calls)
	}
	stop := errors.New("stop")
	if _, err := dev.Median(3, func() error { return stop }); err != stop {
		t.Errorf("Median's error = %v, want fn's", err)
	}
}
