package linalg

import (
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/compute"
)

// addWindows adds each [C][T] window's columns [c0, c0+n) to m through
// AddWindow (loading the window's working array through the device) and
// returns the result.
func addWindows(t *testing.T, dev *compute.Device, m *SecondMoment, C int, xs [][]float32, Ts, c0s, ns []int) []float64 {
	t.Helper()
	for i, x := range xs {
		win, err := dev.NewWindow(C, Ts[i], 1)
		if err != nil {
			t.Fatal(err)
		}
		if dm := win.DataMem(); dm.Bytes > 0 {
			if err := dev.Do(func(c *compute.Ctx) error { return compute.Upload(c, dm.Ptr, x) }); err != nil {
				t.Fatal(err)
			}
			win.MarkWritten()
		} else {
			h, _ := win.Data()
			copy(h, x)
		}
		if err := m.AddWindow(win, c0s[i], c0s[i]+ns[i]); err != nil {
			t.Fatal(err)
		}
		if err := win.Close(); err != nil {
			t.Fatal(err)
		}
	}
	r, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// secondMomentCase returns windows of lengths that grow (so that a GPU
// accumulator must grow its buffers) and the host reference.
func secondMomentCase(C int) (xs [][]float32, Ts, c0s, ns []int, want []float64) {
	rng := rand.New(rand.NewPCG(15, 3))
	ref := NewSecondMoment(nil, C)
	for _, n := range []int{17, 4097, 1, 9001} {
		c0 := rng.IntN(40)
		T := c0 + n + rng.IntN(7)
		x := window(rng, C, T, c0, n)
		xs, Ts, c0s, ns = append(xs, x), append(Ts, T), append(c0s, c0), append(ns, n)
		ref.Add32(x, T, c0, c0+n)
	}
	return xs, Ts, c0s, ns, result(ref)
}

// TestSecondMomentAddWindowCPU checks that AddWindow on the CPU is Add32,
// bit for bit.
func TestSecondMomentAddWindowCPU(t *testing.T) {
	dev, _, _ := compute.Open("cpu")
	const C = 13
	xs, Ts, c0s, ns, want := secondMomentCase(C)
	m := NewSecondMoment(dev, C)
	defer m.Close()
	if got := addWindows(t, dev, m, C, xs, Ts, c0s, ns); !slices.Equal(got, want) {
		t.Error("AddWindow differs from Add32")
	}
}

// TestSecondMomentAddWindowGPU accumulates on the GPU (buffers grown as the
// windows lengthen) and compares with the host within 1e-6, mixes in a host
// window, and checks Reset.
func TestSecondMomentAddWindowGPU(t *testing.T) {
	dev := gpuDevice(t)
	const C = 37
	xs, Ts, c0s, ns, want := secondMomentCase(C)
	m := NewSecondMoment(dev, C)
	defer m.Close()
	all := make([]int, C)
	for i := range all {
		all[i] = i
	}
	got := addWindows(t, dev, m, C, xs, Ts, c0s, ns)
	checkSymmetric(t, got, C)
	if e := relErr(got, C, all, want); !(e <= 1e-6) {
		t.Errorf("GPU second moment: relative difference from the host %.3g > 1e-6", e)
	}
	if m.Windows() != len(xs) {
		t.Errorf("Windows() = %d, want %d", m.Windows(), len(xs))
	}
	// A host window joins the GPU's.
	ref := NewSecondMoment(nil, C)
	for i, x := range xs {
		ref.Add32(x, Ts[i], c0s[i], c0s[i]+ns[i])
	}
	ref.Add32(xs[0], Ts[0], c0s[0], c0s[0]+ns[0])
	m.Add32(xs[0], Ts[0], c0s[0], c0s[0]+ns[0])
	if e := relErr(result(m), C, all, result(ref)); !(e <= 1e-6) {
		t.Errorf("GPU and host windows: relative difference %.3g > 1e-6", e)
	}
	if err := m.Reset(); err != nil {
		t.Fatal(err)
	}
	if r := result(m); m.Windows() != 0 || r[0] == r[0] {
		t.Errorf("after Reset: %d windows, element 0 = %v (want NaN)", m.Windows(), r[0])
	}
}
