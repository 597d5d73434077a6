package preprocess

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
	"dspk/linalg"
	"dspk/recording"
)

// testGPU returns the test GPU, skipping the test where there is none.
func testGPU(t testing.TB) *compute.Device { return gputest.Device(t) }

// gpuTol bounds both the relative error ‖Δ‖/‖ref‖ of a window and its
// largest absolute error relative to the reference's RMS.
const gpuTol = 1e-5

// extremeWindow returns a padded window of T samples of cf interleaved
// channels: per-channel offsets and noise, common-mode noise, and about
// one sample in 64 at an int16 extreme (−32768, −32767 or 32767).
func extremeWindow(rng *rand.Rand, T, cf int) []int16 {
	src := make([]int16, T*cf)
	off := make([]float64, cf)
	for c := range off {
		off[c] = 500 * rng.NormFloat64()
	}
	for t := range T {
		common := 50 * rng.NormFloat64()
		for c := range cf {
			var v int16
			switch rng.IntN(64) {
			case 0:
				v = -32768
			case 1:
				v = -32767
			case 2:
				v = 32767
			default:
				v = int16(math.Round(off[c] + common + 30*rng.NormFloat64()))
			}
			src[t*cf+c] = v
		}
	}
	return src
}

// gpuParams returns parameters for C channels chosen at random from cf
// file rows, windows of T samples (nt 61 unless T is shorter).
func gpuParams(rng *rand.Rand, C, cf, T int, invert, car bool) Params {
	p := DefaultParams()
	p.NT = min(61, (T-1)/2)
	p.BatchSize = T - 2*p.NT
	p.ChanMap = rng.Perm(cf)[:C]
	p.NChanFile = cf
	p.InvertSign, p.DoCAR = invert, car
	return p
}

// compareGPU fails t unless got matches want within gpuTol (both the
// norm-relative error and the largest error relative to want's RMS) and
// got holds no NaN. An all-zero want needs an all-zero got.
func compareGPU(t *testing.T, name string, got, want []float32) {
	t.Helper()
	var d2, r2, dmax float64
	for i, w := range want {
		g := got[i]
		if math.IsNaN(float64(g)) {
			t.Fatalf("%s: element %d not written (NaN)", name, i)
		}
		d := float64(g) - float64(w)
		d2 += d * d
		r2 += float64(w) * float64(w)
		dmax = max(dmax, math.Abs(d))
	}
	if r2 == 0 {
		if dmax != 0 {
			t.Errorf("%s: reference is zero, GPU differs by up to %g", name, dmax)
		}
		return
	}
	rel := math.Sqrt(d2 / r2)
	rms := math.Sqrt(r2 / float64(len(want)))
	if rel > gpuTol || dmax/rms > gpuTol {
		t.Errorf("%s: ‖Δ‖/‖ref‖ = %.3g, max|Δ|/rms = %.3g, want both ≤ %g", name, rel, dmax/rms, gpuTol)
	}
}

func nanSlice(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.NaN())
	}
	return x
}

// TestGPUMatchesCPU runs the GPU and the CPU cpuPreprocessor on the same
// random windows (with int16 extremes) for odd and even channel counts,
// short windows (direct high-pass) and long ones up to Kilosort4's 60122
// samples (chunked high-pass, one to thirty chunks), with and without
// inversion, CAR and whitening, into NaN-poisoned outputs and device
// buffers. The reference stage must match bit for bit; the output within
// gpuTol.
func TestGPUMatchesCPU(t *testing.T) {
	dev := testGPU(t)
	sizes := []struct{ C, cf, T int }{
		{1, 1, 157}, {1, 2, 2500}, {4, 5, 1000}, {7, 9, 3001}, {33, 40, 777},
		{64, 65, 5003}, {100, 120, 4100}, {384, 385, 2200}, {513, 520, 2500}, {384, 385, 60122},
	}
	for i, sz := range sizes {
		for _, inv := range []bool{false, true} {
			for _, car := range []bool{true, false} {
				full := sz.T == 60122
				if full && inv && car {
					continue // three of the four settings at full size
				}
				name := fmt.Sprintf("C%d_cf%d_T%d_inv%v_car%v", sz.C, sz.cf, sz.T, inv, car)
				t.Run(name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(i), uint64(btoi(inv)+2*btoi(car))))
					p := gpuParams(rng, sz.C, sz.cf, sz.T, inv, car)
					pp, err := newCPU(p)
					if err != nil {
						t.Fatal(err)
					}
					g, err := newCUDA(dev, p, defaultGPUConfig)
					if err != nil {
						t.Fatal(err)
					}
					defer g.Close()
					T := g.Len()
					src := extremeWindow(rng, T, sz.cf)
					ws := []*linalg.Whitening{nil, randWhiteningK(rng, sz.C, min(32, sz.C))}
					for k, w := range ws {
						// Pinned host buffers on the second pass.
						in, dst := src, nanSlice(sz.C*T)
						if k == 1 {
							alloc, err := g.PinnedWindows(1)
							if err != nil {
								t.Fatal(err)
							}
							in = alloc(T * sz.cf)
							copy(in, src)
							if dst, err = g.PinnedOutput(); err != nil {
								t.Fatal(err)
							}
							for j := range dst {
								dst[j] = float32(math.NaN())
							}
						}
						if err := dev.Do(g.poison); err != nil {
							t.Fatal(err)
						}
						if err := g.Run(dst, in, w); err != nil {
							t.Fatal(err)
						}
						want := make([]float32, sz.C*T)
						pp.Run(want, src, w)
						compareGPU(t, fmt.Sprintf("whitening %v", w != nil), dst, want)
						if w == nil {
							checkReferenceStage(t, dev, g, pp, src)
						}
					}
				})
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// randWhiteningK returns a sparse whitening of C channels with K entries
// per row (the diagonal first, then distinct random columns).
func randWhiteningK(rng *rand.Rand, C, K int) *linalg.Whitening {
	w := &linalg.Whitening{C: C, K: K, Index: make([]int32, C*K), Value: make([]float32, C*K)}
	for c := range C {
		cols := []int{c}
		for _, j := range rng.Perm(C) {
			if len(cols) == K {
				break
			}
			if j != c {
				cols = append(cols, j)
			}
		}
		for k, j := range cols {
			w.Index[c*K+k] = int32(j)
			w.Value[c*K+k] = float32(0.1 * rng.NormFloat64())
		}
		w.Value[c*K] = 1 + float32(rng.Float64())
	}
	return w
}

// checkReferenceStage downloads the GPU's reference-stage buffer (after
// selection, sign, mean and CAR) of the last Run and compares it with the
// CPU's bit for bit (+0 and −0 count as equal).
func checkReferenceStage(t *testing.T, dev *compute.Device, g *cudaPreprocessor, pp *cpuPreprocessor, src []int16) {
	t.Helper()
	C, T := g.c, g.t
	got := nanSlice(C * T)
	if err := dev.Do(func(c *compute.Ctx) error { return compute.Download(c, got, g.x.Ptr) }); err != nil {
		t.Fatal(err)
	}
	want := make([]float32, C*T)
	pp.reference(want, src)
	for i, w := range want {
		if got[i] != w {
			t.Fatalf("reference stage: channel %d, sample %d: GPU %v, CPU %v", i/T, i%T, got[i], w)
		}
	}
}

// TestGPUChunks checks the chunked high-pass with chunk lengths from 32
// samples (many chunks, warm-up longer than a chunk) to longer than the
// window (one chunk), against the CPU.
func TestGPUChunks(t *testing.T) {
	dev := testGPU(t)
	rng := rand.New(rand.NewPCG(21, 22))
	p := gpuParams(rng, 37, 41, 3001, false, true)
	pp, err := newCPU(p)
	if err != nil {
		t.Fatal(err)
	}
	g, err := newCUDA(dev, p, defaultGPUConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if !g.fast {
		t.Fatal("3001-sample window not on the chunked high-pass")
	}
	src := extremeWindow(rng, g.t, g.cf)
	want := make([]float32, g.c*g.t)
	pp.Run(want, src, nil)
	for _, L := range []int{32, 96, 512, 2048, 4096} {
		g.setChunk(L)
		dst := nanSlice(g.c * g.t)
		if err := dev.Do(g.poison); err != nil {
			t.Fatal(err)
		}
		if err := g.Run(dst, src, nil); err != nil {
			t.Fatal(err)
		}
		compareGPU(t, fmt.Sprintf("chunk %d", L), dst, want)
	}
}

// TestGPUVariants checks every combination of the CAR and whitening
// kernel variants, with automatic and fixed chunk lengths, against the CPU, on odd channel
// counts (7, 513: fewer whitening columns per lane fit in shared memory)
// and 384.
func TestGPUVariants(t *testing.T) {
	dev := testGPU(t)
	var cfgs []gpuConfig
	chunks := []int{0, 512, 96, 2048}
	for _, cpw := range []int{1, 2} {
		for _, bits := range []int{1, 2} {
			for _, cols := range []int{1, 2, 4} {
				cfgs = append(cfgs, gpuConfig{carCPW: cpw, carBits: bits, whiteCols: cols, chunk: chunks[len(cfgs)%len(chunks)]})
			}
		}
	}
	for k, cfg := range cfgs {
		for i, sz := range []struct{ C, cf, T int }{{7, 9, 3001}, {384, 385, 2200}, {513, 520, 2500}, {64, 64, 777}} {
			t.Run(fmt.Sprintf("%+v/C%d_T%d", cfg, sz.C, sz.T), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(k), uint64(i)))
				p := gpuParams(rng, sz.C, sz.cf, sz.T, i%2 == 1, true)
				pp, err := newCPU(p)
				if err != nil {
					t.Fatal(err)
				}
				g, err := newCUDA(dev, p, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				src := extremeWindow(rng, g.t, g.cf)
				w := randWhiteningK(rng, sz.C, min(32, sz.C))
				dst := nanSlice(g.c * g.t)
				if err := dev.Do(g.poison); err != nil {
					t.Fatal(err)
				}
				if err := g.Run(dst, src, w); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, g.c*g.t)
				pp.Run(want, src, w)
				compareGPU(t, "output", dst, want)
				checkReferenceStage(t, dev, g, pp, src)
			})
		}
	}
}

// fullNP1Window returns the parameters of a full NP1 window (384 of 385
// channels in a random order, T = 60122), an extreme raw window, a
// whitening of 32 entries per row made by white and the CPU's result.
func fullNP1Window(t *testing.T, rng *rand.Rand, white func(*rand.Rand, int, int) *linalg.Whitening) (Params, []int16, *linalg.Whitening, []float32) {
	t.Helper()
	p := DefaultParams()
	p.ChanMap, p.NChanFile = rng.Perm(385)[:384], 385
	pp, err := newCPU(p)
	if err != nil {
		t.Fatal(err)
	}
	src := extremeWindow(rng, p.T(), 385)
	w := white(rng, 384, 32)
	want := make([]float32, 384*p.T())
	pp.Run(want, src, w)
	return p, src, w, want
}

// TestGPUVariantsFull runs every variant combination on one full NP1
// window (384 of 385 channels, T = 60122) with whitening against the CPU.
func TestGPUVariantsFull(t *testing.T) {
	dev := testGPU(t)
	p, src, w, want := fullNP1Window(t, rand.New(rand.NewPCG(81, 82)), randWhiteningK)
	T := p.T()
	for _, cpw := range []int{1, 2} {
		for _, bits := range []int{1, 2} {
			for _, cols := range []int{1, 2, 4} {
				cfg := gpuConfig{carCPW: cpw, carBits: bits, whiteCols: cols}
				g, err := newCUDA(dev, p, cfg)
				if err != nil {
					t.Fatal(err)
				}
				dst := nanSlice(384 * T)
				if err := dev.Do(g.poison); err != nil {
					t.Fatal(err)
				}
				if err := g.Run(dst, src, w); err != nil {
					t.Fatal(err)
				}
				compareGPU(t, fmt.Sprintf("%+v", cfg), dst, want)
				if err := g.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestGPUDenseWhitening checks the cuBLAS SGEMM whitening against the CPU.
func TestGPUDenseWhitening(t *testing.T) {
	dev := testGPU(t)
	rng := rand.New(rand.NewPCG(31, 32))
	for _, sz := range []struct{ C, T int }{{7, 1000}, {64, 5003}} {
		p := gpuParams(rng, sz.C, sz.C+1, sz.T, false, true)
		pp, err := newCPU(p)
		if err != nil {
			t.Fatal(err)
		}
		g, err := newCUDA(dev, p, gpuConfig{carCPW: 1, carBits: 1, whiteCols: 1, dense: true})
		if err != nil {
			t.Fatal(err)
		}
		src := extremeWindow(rng, g.t, g.cf)
		w := randWhiteningK(rng, sz.C, min(32, sz.C))
		dst := nanSlice(g.c * g.t)
		if err := dev.Do(g.poison); err != nil {
			t.Fatal(err)
		}
		if err := g.Run(dst, src, w); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, g.c*g.t)
		pp.Run(want, src, w)
		compareGPU(t, fmt.Sprintf("dense C=%d T=%d", sz.C, sz.T), dst, want)
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGPUPipelineLoader runs the read-ahead loader into pinned buffers and
// the GPU pipeline with the upload of window i+1 enqueued before the
// processing of window i, and compares every window with the CPU.
func TestGPUPipelineLoader(t *testing.T) {
	dev := testGPU(t)
	rng := rand.New(rand.NewPCG(41, 42))
	const C, cf, nt, pad, windows = 64, 66, 3000, 61, 5
	samples := nt*windows - 700
	data := extremeWindow(rng, samples, cf)
	rec := recording.NewMemory("test.bin", data, cf, 30000, nil)
	sched, err := recording.NewSchedule(0, int64(samples), nt, pad)
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultParams()
	p.BatchSize, p.NT, p.ChanMap, p.NChanFile = nt, pad, rng.Perm(cf)[:C], cf
	pp, err := newCPU(p)
	if err != nil {
		t.Fatal(err)
	}
	g, err := newCUDA(dev, p, defaultGPUConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	alloc, err := g.PinnedWindows(3)
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.PinnedOutput()
	if err != nil {
		t.Fatal(err)
	}
	w := randWhiteningK(rng, C, 32)
	l := recording.NewLoader(rec, sched, recording.LoaderOptions{InFlight: 2, Alloc: alloc})
	defer l.Close()
	ctx := context.Background()
	want := make([]float32, C*g.t)
	n := 0
	err = dev.Do(func(c *compute.Ctx) error {
		if err := g.SetWhitening(c, w); err != nil {
			return err
		}
		cur, err := l.Next(ctx)
		if err != nil {
			return err
		}
		if err := g.Upload(c, cur.Data); err != nil {
			return err
		}
		for cur != nil {
			next, err := l.Next(ctx)
			switch {
			case errors.Is(err, io.EOF):
				next = nil
			case err != nil:
				return err
			default:
				if err := g.Upload(c, next.Data); err != nil {
					return err
				}
			}
			pp.Run(want, cur.Data, w)
			for i := range out {
				out[i] = float32(math.NaN())
			}
			if _, err := g.Process(c); err != nil {
				return err
			}
			l.Release(cur)
			if err := g.Download(c, out); err != nil {
				return err
			}
			compareGPU(t, fmt.Sprintf("window %d", n), out, want)
			n++
			cur = next
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != sched.Windows {
		t.Errorf("processed %d windows, want %d", n, sched.Windows)
	}
}

// TestGPUPanics checks the programmer errors of the GPU path.
func TestGPUPanics(t *testing.T) {
	dev := testGPU(t)
	rng := rand.New(rand.NewPCG(51, 52))
	p := gpuParams(rng, 4, 5, 1000, false, true)
	g, err := newCUDA(dev, p, defaultGPUConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	T := g.Len()
	src := make([]int16, T*5)
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			r := recover()
			if r == nil {
				t.Errorf("%s did not panic", name)
			} else if !strings.HasPrefix(fmt.Sprint(r), "preprocess: ") {
				t.Errorf("%s panicked with %q, want a preprocess: message", name, r)
			}
		}()
		f()
	}
	mustPanic("Run short src", func() { g.Run(make([]float32, 4*T), src[1:], nil) })
	mustPanic("Run short dst", func() { g.Run(make([]float32, 4*T-1), src, nil) })
	mustPanic("Run whitening size", func() { g.Run(make([]float32, 4*T), src, randWhiteningK(rng, 5, 2)) })
	dev.Do(func(c *compute.Ctx) error {
		mustPanic("Process with nothing uploaded", func() { g.Process(c) })
		mustPanic("Upload short", func() { g.Upload(c, src[1:]) })
		if err := g.Upload(c, src); err != nil {
			t.Fatal(err)
		}
		if err := g.Upload(c, src); err != nil {
			t.Fatal(err)
		}
		mustPanic("third Upload", func() { g.Upload(c, src) })
		for range 2 {
			if _, err := g.Process(c); err != nil {
				t.Fatal(err)
			}
		}
		mustPanic("Download short", func() { g.Download(c, make([]float32, 3)) })
		return nil
	})
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	mustPanic("Run after Close", func() { g.Run(make([]float32, 4*T), src, nil) })
}

// TestNewGPUErrors needs no GPU: a CPU device or bad parameters are
// errors.
func TestNewGPUErrors(t *testing.T) {
	cpu, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultParams()
	p.ChanMap, p.NChanFile = []int{0, 1, 2}, 4
	for _, d := range []*compute.Device{nil, cpu} {
		if _, err := newCUDA(d, p, defaultGPUConfig); err == nil || !strings.Contains(err.Error(), "not a CUDA GPU") {
			t.Errorf("NewGPU(%v): error %v, want one saying it is not a CUDA GPU", d, err)
		}
	}
	bad := p
	bad.ChanMap = []int{0, 4}
	if _, err := newCUDA(cpu, bad, defaultGPUConfig); err == nil || !strings.Contains(err.Error(), "channel map") {
		t.Errorf("NewGPU with a bad channel map: error %v", err)
	}
}

// chunkedHighpass is a float64 model of the GPU's chunked high-pass: the
// cascade of f run forward, then backward, over each chunk of L samples of
// the periodic row x from zero state after W samples of warm-up, the
// forward result rounded to float32 in between as the GPU stores it.
func chunkedHighpass(f *Filter, x []float32, L, W int) []float64 {
	n := len(x)
	pass := func(src []float32, backward bool) []float64 {
		out := make([]float64, n)
		for a := 0; a < n; a += L {
			m := min(L, n-a)
			seq := make([]float64, W+m)
			for s := range seq {
				p := a - W + s
				if backward {
					p = a + m - 1 + W - s
				}
				seq[s] = float64(src[((p%n)+n)%n])
			}
			for _, sec := range f.secs {
				sec.forward(seq)
			}
			for s := W; s < W+m; s++ {
				p := a - W + s
				if backward {
					p = a + m - 1 + W - s
				}
				out[p] = seq[s]
			}
		}
		return out
	}
	fw := pass(x, false)
	f32 := make([]float32, n)
	for i, v := range fw {
		f32[i] = float32(v)
	}
	y := pass(f32, true)
	for i := range y {
		y[i] *= f.g2
	}
	return y
}

// TestChunkedHighpassModel checks, without a GPU, that the chunked
// formulation with the warm-up NewGPU picks reproduces Filter.Apply: the
// neglected start-up transient and the float32 intermediate stay far
// below gpuTol.
func TestChunkedHighpassModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{2000, 3001, 60122} {
		f, err := NewFilter(30000, 300, 3, n)
		if err != nil {
			t.Fatal(err)
		}
		if f.Context() == 0 {
			t.Fatalf("n %d: filter not on the fast path", n)
		}
		W := min(roundUp(tailLength(f.secs, gpuTailTol), 32), n)
		if W >= f.Context()+32 || W < 32 {
			t.Fatalf("n %d: warm-up %d for a CPU context of %d", n, W, f.Context())
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(100 * rng.NormFloat64())
			if rng.IntN(200) == 0 {
				x[i] += 30000
			}
		}
		want := make([]float32, n)
		f.Apply(want, x)
		for _, L := range []int{32, 736, 2048, n + 5} {
			got := chunkedHighpass(f, x, L, W)
			var d2, r2, dmax float64
			for i, w := range want {
				d := got[i] - float64(w)
				d2 += d * d
				r2 += float64(w) * float64(w)
				dmax = max(dmax, math.Abs(d))
			}
			rel, mr := math.Sqrt(d2/r2), dmax/math.Sqrt(r2/float64(n))
			if rel > 1e-6 || mr > 1e-5 {
				t.Errorf("n %d, L %d: ‖Δ‖/‖ref‖ = %.3g, max|Δ|/rms = %.3g", n, L, rel, mr)
			}
		}
	}
}

// TestTailLength checks the warm-up against the impulse response computed
// independently from the transfer function b/a.
func TestTailLength(t *testing.T) {
	for _, tc := range []struct {
		fs, fc float64
		order  int
	}{{30000, 300, 3}, {30000, 150, 4}, {25000, 500, 1}} {
		b, a := ButterHighpass(tc.order, tc.fc, tc.fs)
		h := make([]float64, maxImpulse)
		for i := range h {
			var v float64
			if i < len(b) {
				v = b[i]
			}
			for k := 1; k < len(a) && k <= i; k++ {
				v -= a[k] * h[i-k]
			}
			h[i] = v
		}
		var total float64
		for _, v := range h {
			total += math.Abs(v)
		}
		tail := func(w int) float64 {
			var s float64
			for _, v := range h[w:] {
				s += math.Abs(v)
			}
			return s / total
		}
		d := designButterHP(tc.order, tc.fc, tc.fs)
		W := tailLength(d.sections(), gpuTailTol)
		if tail(W) > 1.01*gpuTailTol || tail(W-1) < 0.99*gpuTailTol {
			t.Errorf("%v Hz order %d: W = %d, tail from W %.3g, from W−1 %.3g, want them around %g",
				tc.fc, tc.order, W, tail(W), tail(W-1), gpuTailTol)
		}
	}
}

// TestPreprocessorGPU runs the window path on the GPU (whitening uploaded
// once, windows loaded from pinned and from pageable memory, a host Run
// between windows) against the CPU back end.
func TestPreprocessorGPU(t *testing.T) {
	dev := testGPU(t)
	rng := rand.New(rand.NewPCG(15, 2))
	for _, T := range []int{999, 60122} {
		p := gpuParams(rng, 37, 41, T, false, true)
		srcs, w := testWindows(p)
		pin, err := dev.AllocHost(len(srcs[0]) * 2)
		if err != nil {
			t.Fatal(err)
		}
		copy(pin.Int16(), srcs[1])
		srcs[1] = pin.Int16()
		pp, err := New(dev, p)
		if err != nil {
			t.Fatal(err)
		}
		got := runWindows(t, dev, pp, w, srcs)
		ref, _ := newCPU(p)
		for i, src := range srcs {
			want := make([]float32, len(got[i]))
			ref.Run(want, src, w)
			compareGPU(t, fmt.Sprintf("T %d window %d", T, i), got[i], want)
		}
		if err := pp.Close(); err != nil {
			t.Error(err)
		}
		if err := dev.FreeHost(pin); err != nil {
			t.Error(err)
		}
	}
}

// bandWhiteningK returns a sparse whitening of C channels with K entries
// per row, each row against the K channels nearest to it in index (a
// local whitening of a single-column probe): the diagonal first, then the
// others in a random order.
func bandWhiteningK(rng *rand.Rand, C, K int) *linalg.Whitening {
	w := &linalg.Whitening{C: C, K: K, Index: make([]int32, C*K), Value: make([]float32, C*K)}
	for c := range C {
		lo := min(max(0, c-K/2), C-K)
		cols := []int{c}
		for _, j := range rng.Perm(K) {
			if lo+j != c {
				cols = append(cols, lo+j)
			}
		}
		for k, j := range cols {
			w.Index[c*K+k] = int32(j)
			w.Value[c*K+k] = float32(0.1 * rng.NormFloat64())
		}
		w.Value[c*K] = 1 + float32(rng.Float64())
	}
	return w
}

// TestWhiteGroups checks how the whitening's rows are cut into groups.
func TestWhiteGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	band := bandWhiteningK(rng, 100, 8)
	rg, groups := whiteGroups(band, 0, 64)
	if rg != whiteGroupRows || len(groups) != 2*4 {
		t.Fatalf("band: %d rows per group, groups %v", rg, groups)
	}
	for g := range 4 {
		lo, hi := 100, -1
		for i := g * rg * 8; i < min(100, (g+1)*rg)*8; i++ {
			lo, hi = min(lo, int(band.Index[i])), max(hi, int(band.Index[i]))
		}
		if int(groups[2*g]) != lo || int(groups[2*g+1]) != hi-lo+1 {
			t.Errorf("group %d: (lo, span) = (%d, %d), want (%d, %d)", g, groups[2*g], groups[2*g+1], lo, hi-lo+1)
		}
	}
	for _, c := range []struct {
		name    string
		w       *linalg.Whitening
		rows, n int
	}{
		{"random", randWhiteningK(rng, 100, 8), 0, 64},
		{"one group asked", band, -1, 64},
		{"band too wide", band, 0, 30},
		{"rows ≥ C", band, 100, 64},
	} {
		if rg, groups := whiteGroups(c.w, c.rows, c.n); rg != 100 || len(groups) != 2 || groups[0] != 0 || groups[1] != 100 {
			t.Errorf("%s: %d rows per group, groups %v; want one group of all 100", c.name, rg, groups)
		}
	}
}

// TestGPUBandWhitening checks the grouped whitening of a local (banded)
// operator on a full NP1 window against the CPU and bit for bit against
// the same window whitened in one group.
func TestGPUBandWhitening(t *testing.T) {
	dev := testGPU(t)
	p, src, w, want := fullNP1Window(t, rand.New(rand.NewPCG(83, 84)), bandWhiteningK)
	T := p.T()
	var outs [2][]float32
	for i, rows := range []int{0, -1} {
		cfg := defaultGPUConfig
		cfg.whiteRows = rows
		g, err := newCUDA(dev, p, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := dev.Do(g.poison); err != nil {
			t.Fatal(err)
		}
		outs[i] = nanSlice(384 * T)
		if err := g.Run(outs[i], src, w); err != nil {
			t.Fatal(err)
		}
		compareGPU(t, fmt.Sprintf("rows %d", rows), outs[i], want)
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range outs[0] {
		if math.Float32bits(outs[0][i]) != math.Float32bits(outs[1][i]) {
			t.Fatalf("channel %d, sample %d: grouped %v, one group %v", i/T, i%T, outs[0][i], outs[1][i])
		}
	}
}
