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
	// Prepared memory on the CPU becomes Go memory of its size; the
	// preparation is left empty, and freeing it again does nothing.
	prep := compute.PrepareHost(4099)
	if prep.Len() != 4099 {
		t.Errorf("PrepareHost(4099).Len() = %d", prep.Len())
	}
	h, err = dev.AllocHostPrepared(prep)
	if err != nil || h.Len() != 4099 || len(h.Bytes()) != 4099 || compute.HostPinned(dev, h) {
		t.Fatalf("AllocHostPrepared on the CPU: %v", err)
	}
	prep.Free()
	h.Bytes()[4098] = 7 // the whole length is usable
	if err := dev.FreeHost(h); err != nil {
		t.Error(err)
	}
	unused := compute.PrepareHost(1 << 20)
	unused.Free()
	unused.Free()
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
	// Memory prepared before the device was known, then pinned.
	prep := compute.PrepareHost(T * cf * 2)
	pre, err := dev.AllocHostPrepared(prep)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.FreeHost(pre)
	prep.Free() // taken: does nothing
	if !compute.HostPinned(dev, pin) || !compute.HostPinned(dev, pre) || pre.Len() != T*cf*2 {
		t.Fatalf("AllocHost pinned %v, AllocHostPrepared pinned %v (%d bytes)",
			compute.HostPinned(dev, pin), compute.HostPinned(dev, pre), pre.Len())
	}
	for _, raw := range [][]int16{pin.Int16(), pre.Int16(), make([]int16, T*cf)} {
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

// TestWindowPrefetch loads a sequence of windows from pinned buffers,
// prefetching each next one while the device holds the current one, and
// checks the samples on the device after every Load; a Load of another
// slice than the one prefetched, and a prefetch from pageable memory,
// upload that slice. On the CPU Prefetch does nothing.
func TestWindowPrefetch(t *testing.T) {
	cpu, _, _ := compute.Open("cpu")
	cw, _ := cpu.NewWindow(1, 3, 2)
	if err := cw.Prefetch(make([]int16, 6)); err != nil {
		t.Fatal(err)
	}
	dev := gputest.Device(t)
	const C, T, cf = 3, 4099, 5
	w, err := dev.NewWindow(C, T, cf)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var bufs [][]int16
	for range 3 {
		h, err := dev.AllocHost(T * cf * 2)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.FreeHost(h)
		bufs = append(bufs, h.Int16())
	}
	pageable := make([]int16, T*cf)
	fill := func(raw []int16, k int) {
		for i := range raw {
			raw[i] = int16(i*31 + k*1009)
		}
	}
	check := func(k int) {
		t.Helper()
		got := make([]int16, T*cf)
		if err := dev.Do(func(c *compute.Ctx) error { return compute.Download(c, got, w.RawMem().Ptr) }); err != nil {
			t.Fatal(err)
		}
		want := make([]int16, T*cf)
		fill(want, k)
		if !slices.Equal(got, want) {
			t.Fatalf("window %d: the device holds other samples", k)
		}
	}
	fill(bufs[0], 0)
	if err := w.Load(bufs[0]); err != nil {
		t.Fatal(err)
	}
	check(0)
	for k := 1; k < 9; k++ {
		raw := bufs[k%3]
		fill(raw, k)
		if err := w.Prefetch(raw); err != nil {
			t.Fatal(err)
		}
		check(k - 1) // the current window is untouched by the prefetch
		switch k {
		case 4: // a Load of another slice than the one prefetched
			fill(pageable, k)
			raw = pageable
		case 6: // a prefetch from pageable memory does nothing
			fill(pageable, k)
			if err := w.Prefetch(pageable); err != nil {
				t.Fatal(err)
			}
			raw = pageable
		}
		if err := w.Load(raw); err != nil {
			t.Fatal(err)
		}
		clear(raw) // the samples may be reused once Load returns
		check(k)
	}
}

// TestWindowSwapDataMem exchanges a GPU window's working array for
// another: the window then holds and downloads the new one, the old one
// (returned) keeps its values, and a buffer of the wrong size panics, as
// does any swap on the CPU.
func TestWindowSwapDataMem(t *testing.T) {
	cpu, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	cw, err := cpu.NewWindow(2, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("SwapDataMem on the CPU did not panic")
			}
		}()
		cw.SwapDataMem(compute.Mem{})
	}()
	dev := gputest.Device(t)
	const C, T = 3, 101
	w, err := dev.NewWindow(C, T, C)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	first := make([]float32, C*T)
	second := make([]float32, C*T)
	for i := range first {
		first[i], second[i] = float32(i), -float32(i)
	}
	var spare compute.Mem
	err = dev.Do(func(c *compute.Ctx) error {
		if err := compute.Upload(c, w.DataMem().Ptr, first); err != nil {
			return err
		}
		var err error
		if spare, err = c.Alloc(C * T * 4); err != nil {
			return err
		}
		return compute.Upload(c, spare.Ptr, second)
	})
	if err != nil {
		t.Fatal(err)
	}
	old := w.SwapDataMem(spare)
	if w.DataMem() != spare {
		t.Fatal("the window does not hold the new array")
	}
	got, err := w.Data()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, second) {
		t.Errorf("Data after the swap: %v…", got[:4])
	}
	back := make([]float32, C*T)
	if err := dev.Do(func(c *compute.Ctx) error { return compute.Download(c, back, old.Ptr) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, first) {
		t.Errorf("the returned array: %v…", back[:4])
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("SwapDataMem of a short buffer did not panic")
			}
		}()
		w.SwapDataMem(compute.Mem{Ptr: old.Ptr, Bytes: 4})
	}()
	if err := dev.Do(func(c *compute.Ctx) error { return c.Free(old) }); err != nil {
		t.Fatal(err)
	}
}
