package motion

import (
	"math/rand/v2"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
)

// Benchmarks on NP1's shape: 384 sites, Y = 766 depth bins, windows of
// T = 60122 samples (60 000 + 2·61). Floors are for the whole op at
// 60 TFLOP/s FP32 (67 FP64) and 4.8 TB/s on an H200, and per core on a
// CPU.

const benchT = 60122

// BenchmarkHistogram bins one window's 2000 detections (Add).
// Floor per spike: one log10, two divisions, one increment of a 61-KB
// histogram: ≈ 30 ns of one core; 8 bytes read.
func BenchmarkHistogram(b *testing.B) {
	_, yc := testProbe(384)
	e, err := NewEstimator(nil, yc, 1, DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	w := randomWindows(rng, 1, 2000, yc[0], yc[len(yc)-1])[0]
	b.SetBytes(int64(8 * len(w.y)))
	for b.Loop() {
		if err := e.Add(0, w.y, w.amp); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRegistration estimates nb windows of 500 detections (rigid).
// Floor for NP1's 300 windows: the rigid scores are 10 iterations × 31
// shifts × 300 windows × 15 320 cells = 1.42 G multiply-adds (2.85 GFLOP,
// float64), the block scores 11 × 300 × 15 320 × B·L/Y ≈ 0.05 G; G is
// 36.8 MB, read once per iteration from memory (a window's 123 KB stays
// in cache over its 31 shifts): 0.37 GB. H200: ≈ 45 µs of FP64
// arithmetic, 77 µs of memory; one CPU core at ≈ 2 GFLOP/s: ≈ 1.4 s.
func benchRegistration(b *testing.B, dev *compute.Device, nb int) {
	_, yc := testProbe(384)
	rng := rand.New(rand.NewPCG(2, 2))
	win := randomWindows(rng, nb, 500, yc[0], yc[len(yc)-1])
	e, err := NewEstimator(dev, yc, nb, DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for w, s := range win {
		if err := e.Add(w, s.y, s.amp); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := e.Estimate(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRegistration is benchRegistration on the CPU with 60 windows
// (a fifth of NP1's 300, to keep runs short: the cost is linear in the
// windows).
func BenchmarkRegistration(b *testing.B) { benchRegistration(b, nil, 60) }

// BenchmarkGPURegistration is benchRegistration on the GPU with NP1's 300
// windows.
func BenchmarkGPURegistration(b *testing.B) { benchRegistration(b, gputest.Device(b), 300) }

// BenchmarkCorrection applies a 10-µm shift to an NP1 window on the CPU
// (Apply, banded). Floor: about 50 of 384 entries per row are kept
// (TestBandNP1), 2 · 384 · 50 · 60 122 = 2.3 GFLOP; 185 MB read and
// written (src and dst, float32). One core at 32 FLOP/cycle (AVX-512
// FMA) and 3 GHz: 24 ms; the loop is memory-bound per row at ≈ 10 GB/s:
// ≈ 20 ms per core.
func BenchmarkCorrection(b *testing.B) {
	x, y := testProbe(384)
	est := &Estimate{Windows: 1, Blocks: 1, Dshift: []float64{10}, Yblk: []float64{1929}, Spikes: []int{1}}
	k, err := NewCorrector(nil, x, y, DefaultParams(), est)
	if err != nil {
		b.Fatal(err)
	}
	src := make([]float32, 384*benchT)
	for i := range src {
		src[i] = float32(i%97) - 48
	}
	dst := make([]float32, len(src))
	k.Apply(dst, src, 0)
	b.SetBytes(int64(8 * len(src)))
	for b.Loop() {
		k.Apply(dst, src, 0)
	}
}

// BenchmarkCorrectionMatrix computes one window's M (the kriging product
// of the rows' ≈ 24 kernel entries above 10⁻¹² with (Kxx + 0.01 I)⁻¹:
// 384 · 24 · 384 = 3.5 M multiply-adds, ≈ 2 ms of one core) and its band.
func BenchmarkCorrectionMatrix(b *testing.B) {
	x, y := testProbe(384)
	est := &Estimate{Windows: 2, Blocks: 1, Dshift: []float64{10, 10.5}, Yblk: []float64{1929}, Spikes: []int{1, 1}}
	k, err := NewCorrector(nil, x, y, DefaultParams(), est)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		k.Kept(i % 2)
		i++
	}
}

// BenchmarkGPUCorrection applies a 10-µm shift to an NP1 window on the
// GPU (Window: dense SGEMM and a buffer swap). Floor: 2 · 384² · 60 122 =
// 17.7 GFLOP at 60 TFLOP/s = 0.30 ms; 185 MB at 4.8 TB/s = 0.04 ms.
func BenchmarkGPUCorrection(b *testing.B) {
	dev := gputest.Device(b)
	x, y := testProbe(384)
	est := &Estimate{Windows: 1, Blocks: 1, Dshift: []float64{10}, Yblk: []float64{1929}, Spikes: []int{1}}
	k, err := NewCorrector(dev, x, y, DefaultParams(), est)
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	win, err := dev.NewWindow(384, benchT, 385)
	if err != nil {
		b.Fatal(err)
	}
	defer win.Close()
	if err := dev.Do(func(c *compute.Ctx) error { return c.Memset32(win.DataMem().Ptr, 0x3f800000, 384*benchT) }); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(8 * 384 * benchT))
	for b.Loop() {
		if err := k.Window(win, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := dev.Do(func(c *compute.Ctx) error { return c.Sync() }); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGPUHistogram bins one window's 2000 detections from device
// arrays (AddDevice) and waits. Floor: one launch (≈ 5 µs); 16 KB read,
// 2000 atomic increments.
func BenchmarkGPUHistogram(b *testing.B) {
	dev := gputest.Device(b)
	_, yc := testProbe(384)
	e, err := NewEstimator(dev, yc, 1, DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	w := randomWindows(rng, 1, 2000, yc[0], yc[len(yc)-1])[0]
	n := len(w.y)
	err = dev.Do(func(c *compute.Ctx) error {
		m, err := c.Alloc(8*n + 4)
		if err != nil {
			return err
		}
		defer c.Free(m)
		if err := compute.Upload(c, m.Ptr, w.y); err != nil {
			return err
		}
		if err := compute.Upload(c, m.Ptr.Add(4*n), w.amp); err != nil {
			return err
		}
		if err := compute.Upload(c, m.Ptr.Add(8*n), []int32{int32(n)}); err != nil {
			return err
		}
		b.SetBytes(int64(8 * n))
		for b.Loop() {
			if err := e.AddDevice(c, 0, m.Ptr, m.Ptr.Add(4*n), m.Ptr.Add(8*n), n); err != nil {
				return err
			}
			if err := c.Sync(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
