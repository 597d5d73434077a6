package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
)

// gpuDevice returns the test GPU, skipping where there is none.
func gpuDevice(t testing.TB) *compute.Device { return gputest.Device(t) }

func gpuDo(t testing.TB, f func(c *compute.Ctx) error) {
	t.Helper()
	if err := gpuDevice(t).Do(f); err != nil {
		t.Fatal(err)
	}
}

// gpuMethods are the formulations every GPU test runs.
// gpuConfigs are the configurations every GPU accuracy test runs: every
// method with float32 and float64 samples (GramSYRK float64 only),
// GramBlocked with 2 and 3 blocks, and the default.
func gpuConfigs() []GPUGramOptions {
	var out []GPUGramOptions
	for _, f64 := range []bool{false, true} {
		for _, o := range []GPUGramOptions{
			{Method: GramSplit}, {Method: GramGEMM}, {Method: GramBlocked}, {Method: GramBlocked, Blocks: 3},
			{Method: GramGEMMInPlace}, {Method: GramSYRK}, {Method: GramDGEMM}, {Method: GramTiles}, {},
		} {
			if o.Method == GramSYRK && !f64 {
				continue
			}
			o.Float64 = f64
			out = append(out, o)
		}
	}
	return out
}

// name describes a configuration in messages.
func (o GPUGramOptions) name() string {
	s := o.Method.String()
	if o.Blocks != 0 {
		s += fmt.Sprintf("%d", o.Blocks)
	}
	if o.TF32 {
		s += "-tf32"
	}
	if o.Float64 {
		return s + " float64"
	}
	return s + " float32"
}

// upload copies x to a new device buffer.
func upload[T compute.Number](c *compute.Ctx, x []T) (compute.Mem, error) {
	var z T
	size := 4
	if _, ok := any(z).(float64); ok {
		size = 8
	}
	b, err := c.Alloc(len(x) * size)
	if err != nil {
		return b, err
	}
	return b, compute.Upload(c, b.Ptr, x)
}

// gpuRun computes a covariance (or second moment) of columns [c0, c1) of
// the device window x with g, into a NaN-poisoned output, with g's
// buffers poisoned first, and returns it.
func gpuRun(c *compute.Ctx, g *GPUGram, dst compute.Mem, x compute.Ptr, ld, c0, c1 int, centred bool) ([]float64, error) {
	if err := g.poison(c); err != nil {
		return nil, err
	}
	if err := c.Memset8(dst.Ptr, 0xff, dst.Bytes); err != nil {
		return nil, err
	}
	var err error
	if centred {
		err = g.Covariance(c, dst.Ptr, x, ld, c0, c1)
	} else {
		err = g.SecondMoment(c, dst.Ptr, x, ld, c0, c1)
	}
	if err != nil {
		return nil, err
	}
	got := make([]float64, g.C()*g.C())
	return got, compute.Download(c, got, dst.Ptr)
}

// TestGPUGramAgainstReference runs the CPU table of
// TestGramAgainstReference on the GPU: every method, float32 and float64,
// centred and not, windows starting at an odd column of a wider row, all
// buffers and outputs NaN-poisoned; relative Frobenius error against the
// float64 reference ≤ 1e-6 (float32) and ≤ 1e-12 (float64), every output
// written and exactly symmetric.
func TestGPUGramAgainstReference(t *testing.T) {
	const tol32, tol64 = 1e-6, 1e-12
	gpuDevice(t)
	for _, C := range []int{1, 4, 64, 97, 384} {
		for _, n := range []int{1, 4095, 4096, 4097, 60122} {
			t.Run(fmt.Sprintf("C%d_n%d", C, n), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(C), uint64(n)))
				c0, ld := 3, n+7
				x := window(rng, C, ld, c0, n)
				x64 := to64(x)
				rows := testRows(rng, C, n)
				refs := map[bool][]float64{}
				for _, centred := range []bool{true, false} {
					refs[centred] = refGram(x64, C, ld, c0, c0+n, centred, rows)
				}
				gpuDo(t, func(c *compute.Ctx) error {
					dx, err := upload(c, x)
					if err != nil {
						return err
					}
					defer c.Free(dx)
					dx64, err := upload(c, x64)
					if err != nil {
						return err
					}
					defer c.Free(dx64)
					dst, err := c.Alloc(C * C * 8)
					if err != nil {
						return err
					}
					defer c.Free(dst)
					for _, o := range gpuConfigs() {
						g, err := NewGPUGram(c, C, n, o)
						if err != nil {
							return err
						}
						src, tol := dx.Ptr, tol32
						if o.Float64 {
							src, tol = dx64.Ptr, tol64
						} else if o.Method == GramDGEMM || o.Method == GramTiles || o.Method == GramDefault {
							tol = tol64 // float64 products of the float32 values
						}
						for _, centred := range []bool{true, false} {
							got, err := gpuRun(c, g, dst, src, ld, c0, c0+n, centred)
							if err != nil {
								g.Free(c)
								return err
							}
							checkSymmetric(t, got, C)
							e := relErr(got, C, rows, refs[centred])
							t.Logf("%s centred=%v: relative error %.3g", o.name(), centred, e)
							if !(e <= tol) {
								t.Errorf("%s centred=%v: relative error %.3g > %g", o.name(), centred, e, tol)
							}
						}
						if err := g.Free(c); err != nil {
							return err
						}
					}
					return nil
				})
			})
		}
	}
}

// TestGPUGramTF32 measures the opt-in TF32 error on a 384-channel window:
// it must stay below 1e-3 (TF32 keeps 10 mantissa bits) and is logged.
func TestGPUGramTF32(t *testing.T) {
	gpuDevice(t)
	const C, n, c0 = 384, 60122, 61
	ld := n + 2*c0
	rng := rand.New(rand.NewPCG(11, 12))
	x := window(rng, C, ld, c0, n)
	rows := testRows(rng, C, n)
	for _, centred := range []bool{true, false} {
		ref := refGram(to64(x), C, ld, c0, c0+n, centred, rows)
		for _, m := range []GramMethod{GramSplit, GramGEMM, GramBlocked, GramGEMMInPlace} {
			gpuDo(t, func(c *compute.Ctx) error {
				dx, err := upload(c, x)
				if err != nil {
					return err
				}
				defer c.Free(dx)
				dst, err := c.Alloc(C * C * 8)
				if err != nil {
					return err
				}
				defer c.Free(dst)
				g, err := NewGPUGram(c, C, n, GPUGramOptions{Method: m, TF32: true})
				if err != nil {
					return err
				}
				defer g.Free(c)
				got, err := gpuRun(c, g, dst, dx.Ptr, ld, c0, c0+n, centred)
				if err != nil {
					return err
				}
				checkSymmetric(t, got, C)
				e := relErr(got, C, rows, ref)
				t.Logf("TF32 %v centred=%v: relative error %.3g", m, centred, e)
				if !(e <= 1e-3) {
					t.Errorf("TF32 %v centred=%v: relative error %.3g > 1e-3", m, centred, e)
				}
				return nil
			})
		}
	}
}

// TestGPUGramInvariance checks that the packing methods give bit-identical
// results for the same values at any column offset and row stride, after
// a longer window left stale data in the buffers, and on a repeated run.
func TestGPUGramInvariance(t *testing.T) {
	gpuDevice(t)
	const C = 33
	for _, n := range []int{1, 17, 4097, 9000} {
		rng := rand.New(rand.NewPCG(uint64(n), 99))
		contig := window(rng, C, n, 0, n)
		long := window(rng, C, 12000, 0, 12000)
		for _, m := range []GramMethod{GramSplit, GramGEMM, GramBlocked, GramSYRK, GramDGEMM, GramTiles} {
			gpuDo(t, func(c *compute.Ctx) error {
				g, err := NewGPUGram(c, C, 12000, GPUGramOptions{Method: m, Float64: m == GramSYRK})
				if err != nil {
					return err
				}
				defer g.Free(c)
				dst, err := c.Alloc(C * C * 8)
				if err != nil {
					return err
				}
				defer c.Free(dst)
				run := func(x []float32, ld, c0, c1 int, centred bool, fresh bool) ([]float64, error) {
					var dx compute.Mem
					var err error
					if m == GramSYRK {
						dx, err = upload(c, to64(x))
					} else {
						dx, err = upload(c, x)
					}
					if err != nil {
						return nil, err
					}
					defer c.Free(dx)
					if fresh {
						return gpuRun(c, g, dst, dx.Ptr, ld, c0, c1, centred)
					}
					if centred {
						err = g.Covariance(c, dst.Ptr, dx.Ptr, ld, c0, c1)
					} else {
						err = g.SecondMoment(c, dst.Ptr, dx.Ptr, ld, c0, c1)
					}
					if err != nil {
						return nil, err
					}
					got := make([]float64, C*C)
					return got, compute.Download(c, got, dst.Ptr)
				}
				for _, centred := range []bool{true, false} {
					want, err := run(contig, n, 0, n, centred, true)
					if err != nil {
						return err
					}
					again, err := run(contig, n, 0, n, centred, false)
					if err != nil {
						return err
					}
					if i := firstDiff64(again, want); i >= 0 {
						t.Errorf("%v n=%d centred=%v: repeated run differs at %d", m, n, centred, i)
					}
					for _, c0 := range []int{1, 2, 3, 5, 4095} {
						ld := c0 + n + c0%3
						x := nan32((C-1)*ld + c0 + n)
						for ch := 0; ch < C; ch++ {
							copy(x[ch*ld+c0:], contig[ch*n:(ch+1)*n])
						}
						if _, err := run(long, 12000, 0, 12000, centred, false); err != nil { // stale buffers
							return err
						}
						got, err := run(x, ld, c0, c0+n, centred, false)
						if err != nil {
							return err
						}
						if i := firstDiff64(got, want); i >= 0 {
							t.Errorf("%v n=%d c0=%d centred=%v: element %d = %v, want %v", m, n, c0, centred, i, got[i], want[i])
						}
					}
				}
				return nil
			})
		}
	}
}

// firstDiff64 returns the first index where a and b differ in bits.
func firstDiff64(a, b []float64) int {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestGPUSecondMoment accumulates windows of different lengths on the GPU
// and compares the mean with the CPU SecondMoment (both within ~1e-7 of
// the float64 truth; they must agree to 1e-6), checks NaN with no windows,
// and Reset.
func TestGPUSecondMoment(t *testing.T) {
	gpuDevice(t)
	const C, maxN = 37, 9000
	rng := rand.New(rand.NewPCG(21, 22))
	type win struct {
		x          []float32
		ld, c0, c1 int
	}
	var wins []win
	for _, n := range []int{9000, 4096, 17, 1, 5001} {
		c0 := rng.IntN(50)
		ld := c0 + n + rng.IntN(5)
		wins = append(wins, win{window(rng, C, ld, c0, n), ld, c0, c0 + n})
	}
	cpu := NewSecondMoment(nil, C)
	for _, w := range wins {
		cpu.Add32(w.x, w.ld, w.c0, w.c1)
	}
	want := result(cpu)
	all := make([]int, C)
	for i := range all {
		all[i] = i
	}
	for _, o := range gpuConfigs() {
		m, f64 := o.name(), o.Float64
		gpuDo(t, func(c *compute.Ctx) error {
			acc, err := newCUDASecondMoment(c, C, maxN, o)
			if err != nil {
				return err
			}
			defer acc.Free(c)
			got := make([]float64, C*C)
			if err := acc.ResultTo(c, got); err != nil {
				return err
			}
			for i, v := range got {
				if !math.IsNaN(v) {
					t.Fatalf("no windows: element %d = %v, want NaN", i, v)
				}
			}
			for pass := range 2 {
				for _, w := range wins {
					var dx compute.Mem
					if f64 {
						dx, err = upload(c, to64(w.x))
					} else {
						dx, err = upload(c, w.x)
					}
					if err != nil {
						return err
					}
					err = acc.Add(c, dx.Ptr, w.ld, w.c0, w.c1)
					c.Sync()
					c.Free(dx)
					if err != nil {
						return err
					}
				}
				if acc.Windows() != len(wins) {
					t.Errorf("Windows() = %d, want %d", acc.Windows(), len(wins))
				}
				if err := acc.ResultTo(c, got); err != nil {
					return err
				}
				checkSymmetric(t, got, C)
				e := relErr(got, C, all, want)
				t.Logf("%s pass %d: relative difference from the CPU %.3g", m, pass, e)
				if !(e <= 1e-6) {
					t.Errorf("%s pass %d: relative difference from the CPU %.3g > 1e-6", m, pass, e)
				}
				if err := acc.Reset(c); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// TestGPUGramPanics checks the shape checks, which run before any device
// call (so they run without a GPU).
func TestGPUGramPanics(t *testing.T) {
	g := &GPUGram{c: 4, maxN: 100, fFinish: &compute.Prepared{}}
	for name, f := range map[string]func(){
		"C=0":          func() { NewGPUGram(nil, 0, 10, GPUGramOptions{}) },
		"maxN=0":       func() { NewGPUGram(nil, 4, 0, GPUGramOptions{}) },
		"TF32 float64": func() { NewGPUGram(nil, 4, 10, GPUGramOptions{TF32: true, Float64: true}) },
		"TF32 SYRK":    func() { NewGPUGram(nil, 4, 10, GPUGramOptions{TF32: true, Method: GramSYRK}) },
		"float32 SYRK": func() { NewGPUGram(nil, 4, 10, GPUGramOptions{Method: GramSYRK}) },
		"TF32 DGEMM":   func() { NewGPUGram(nil, 4, 10, GPUGramOptions{Method: GramDGEMM, TF32: true}) },
		"TF32 tiles":   func() { NewGPUGram(nil, 4, 10, GPUGramOptions{Method: GramTiles, TF32: true}) },
		"blocks < 0":   func() { NewGPUGram(nil, 4, 10, GPUGramOptions{Method: GramBlocked, Blocks: -1}) },
		"bad method":   func() { NewGPUGram(nil, 4, 10, GPUGramOptions{Method: 99}) },
		"c1 > ld":      func() { g.Covariance(nil, 1, 1, 10, 0, 11) },
		"c0 = c1":      func() { g.SecondMoment(nil, 1, 1, 10, 5, 5) },
		"c0 < 0":       func() { g.SecondMoment(nil, 1, 1, 10, -1, 5) },
		"n > maxN":     func() { g.Covariance(nil, 1, 1, 200, 0, 101) },
		"null x":       func() { g.Covariance(nil, 1, 0, 10, 0, 5) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", name)
				} else if s, ok := r.(string); !ok || s[:8] != "linalg: " {
					t.Errorf("%s: panic %v, want a linalg: message", name, r)
				}
			}()
			f()
		}()
	}
}

// TestDefaultGramMethod checks the device-dependent default (no GPU
// needed).
func TestDefaultGramMethod(t *testing.T) {
	for _, tc := range []struct {
		major, minor int
		f64          bool
		want, sm     GramMethod // the default, and SecondMoment's
	}{
		{9, 0, false, GramDGEMM, GramTiles}, {9, 0, true, GramBlocked, GramTiles}, {8, 0, false, GramDGEMM, GramTiles},
		{10, 0, false, GramDGEMM, GramTiles}, {8, 9, false, GramGEMM, GramGEMM}, {8, 6, true, GramGEMM, GramGEMM},
		{12, 0, false, GramGEMM, GramGEMM}, {7, 5, false, GramGEMM, GramGEMM},
	} {
		info := compute.GPUInfo{Major: tc.major, Minor: tc.minor}
		if got := defaultGramMethod(info, tc.f64); got != tc.want {
			t.Errorf("sm_%d%d float64=%v: %v, want %v", tc.major, tc.minor, tc.f64, got, tc.want)
		}
		if got := secondMomentMethod(info); got != tc.sm {
			t.Errorf("sm_%d%d: SecondMoment's accumulator by %v, want %v", tc.major, tc.minor, got, tc.sm)
		}
	}
}

// TestTilesSplits checks GramTiles' split of the samples: it covers n, its
// length is a multiple of the kernel's 16-sample step, and the slices stay
// within 256 MiB wherever more than one is needed.
func TestTilesSplits(t *testing.T) {
	for _, C := range []int{1, 4, 97, 384, 1024, 4096, 6000} {
		for _, n := range []int{1, 15, 16, 2047, 2048, 2049, 60122, 1 << 20} {
			S, K := tilesSplits(n, C)
			if S < 1 || K%16 != 0 || S*K < n || (S-1)*K >= n {
				t.Errorf("C=%d n=%d: %d splits of %d samples", C, n, S, K)
			}
			if S > 1 && S*C*C*8 > 256<<20 {
				t.Errorf("C=%d n=%d: %d slices of %d×%d float64 pass 256 MiB", C, n, S, C, C)
			}
		}
	}
}
