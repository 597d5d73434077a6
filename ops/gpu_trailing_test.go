package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
)

// GPU tests run the CUDA kernels on the first GPU and skip, saying so, where
// there is none. They compare with the float64 reference (every output
// within the float32 bound fp32Tolerance of the exact mean, then rounded to
// the storage type; NaN-poisoned outputs) and with the CPU implementation.

// gpuDevice returns the test GPU (internal/gputest), skipping where there
// is none.
func gpuDevice(t testing.TB) *compute.Device { return gputest.Device(t) }

// gpuDo runs f in the test GPU's Do, failing t on its error.
func gpuDo(t testing.TB, f func(c *compute.Ctx) error) {
	t.Helper()
	if err := gpuDevice(t).Do(f); err != nil {
		t.Fatal(err)
	}
}

// gpuShapes are the GPU test shapes: the CPU tests' edge cases plus shapes
// around the 2048-sample chunk, odd row lengths (so that rows start
// unaligned), windows of every residue modulo the vector width, windows
// longer than a chunk (look-back) and longer than the row.
var gpuShapes = []struct{ rows, n, cf int }{
	{1, 1, 1}, {1, 1, 5}, {3, 1, 1}, {1, 7, 1}, {1, 7, 3}, {1, 7, 7}, {1, 7, 8}, {1, 7, 100},
	{2, 9, 4}, {5, 33, 8}, {3, 1001, 17}, {2, 15, 16}, {2, 17, 16},
	{2, 2048, 2048}, {1, 2048, 1}, {2, 2049, 100}, {3, 3*2048 + 5, 100}, {2, 4 * 2048, 2048},
	{3, 4*2048 + 3, 1}, {2, 5*2048 - 1, 2047}, {3, 3*2048 + 1, 2046}, {2, 6*2048 + 6, 5},
	{1, 9*2048 + 77, 3*2048 + 5}, {2, 4 * 2048, 10 * 2048}, {1, 20000, 20000}, {4, 4096, 100},
	{5, 12345, 3}, {3, 70001, 1000}, {2, 50000, 9000}, {16, 5000, 100}, {1, 100003, 7},
	{1, 40000, 40001}, {7, 20000, 2049},
	// Whole 16-byte vectors per row (aligned loads and stores throughout):
	// full first chunks with wide-range data, the longest direct window, a
	// row shorter than its window.
	// (Data kinds cycle normal, offset, int16, wide: both wide shapes
	// below get wide data.)
	{5, 8200, 333}, {9, 4096, 2048}, {3, 70000, 1000}, {6, 3*2048 + 8, 2000}, {2, 16, 100},
	{4, 2048, 1}, {2, 10240, 2047},
}

// gpuModes lists the kernels that take windows of cf samples of T: the one
// NewTrailingMean launches and those after it (the look-back kernel
// always).
func gpuModes[T Storage](cf int) []gpuKernel {
	var ks []gpuKernel
	for k := gpuKernelFor[T](cf); k <= gpuLookback; k++ {
		ks = append(ks, k)
	}
	return ks
}

func TestGPUTrailingMean(t *testing.T) {
	gpuDevice(t)
	t.Run("float32", testGPUTrailing[float32])
	t.Run("Float16", testGPUTrailing[Float16])
	t.Run("BFloat16", testGPUTrailing[BFloat16])
}

func testGPUTrailing[T Storage](t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(len(typeName[T]())), 17))
	kinds := []string{"normal", "offset", "int16", "wide"}
	for si, sh := range gpuShapes {
		kind := kinds[si%len(kinds)]
		x := toStorage[T](gen(rng, kind, sh.rows*sh.n))
		src := fromStorage(x)
		cpu := make([]T, len(x))
		CausalTrailingMean(cpu, x, sh.rows, sh.n, sh.cf)
		for _, k := range gpuModes[T](sh.cf) {
			name := fmt.Sprintf("%dx%d/cf%d/%s", sh.rows, sh.n, sh.cf, kind)
			g, err := newTrailingMean[T](gpuDevice(t), sh.rows, sh.n, sh.cf, k)
			if err != nil {
				t.Fatal(err)
			}
			name += "/" + g.kernelName()
			dst := make([]T, len(x))
			nanFill(dst)
			if err := g.Apply(dst, x); err != nil {
				t.Fatal(err)
			}
			t.Run(name, func(t *testing.T) {
				checkMeansFP32(t, dst, src, sh.rows, sh.n, sh.cf)
				checkAgreeCPU(t, dst, cpu, src, sh.rows, sh.n, sh.cf)
			})
			// In place, through the scratch copy; a second launch of the
			// same op (a new look-back epoch).
			in := append([]T(nil), x...)
			if err := g.Apply(in, in); err != nil {
				t.Fatal(err)
			}
			t.Run(name+"/inplace", func(t *testing.T) {
				checkMeansFP32(t, in, src, sh.rows, sh.n, sh.cf)
				if k != gpuLookback {
					checkIdentical(t, in, dst)
				}
			})
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// fp32Tolerance returns, per element, the error bound of the kernels'
// float32 arithmetic (ctm_chunk32) against the exact mean: with u = 2⁻²⁴,
// k = min(t+1, cf) and t0 the start of t's 2048-sample chunk,
//
//	u·(28·D + c·P + 4u·A)/k + 3u·|ref|
//
// where D = Σ_{t0 ≤ i ≤ t} |x[i] − x[i−cf]| bounds the differences summed
// in plain float32 within the chunk (each difference rounded once, then a
// scan at most 27 additions deep: 16 in a thread, 5 in the warp, 3 across
// 4 warps (7 across 8 with 8 samples a thread), 3 to assemble the sum),
// P bounds the magnitudes in the carried-in sum of the direct and warp
// kernels (Σ_{s−cf ≤ j < s} |x[j]|, summed over the starts s ≤ t of the
// chunk and of the 256-, 512- and 1024-sample warp chunks holding t;
// c = 0.001 for float32, summed in float64: a second-order error only;
// c = 16 for the 16-bit types, whose warp kernels sum it in float32, at
// most ITEMS/4 + 6 roundings deep, 14 at 32 samples per thread) and
// A = Σ_{i < t} (|x[i]| + |x[i−cf]|) the compensated chunk sums the
// look-back kernels carry (a second-order error only), and 3u·|ref| the
// roundings of the window sum and of the corrected quotient.
func fp32Tolerance[T Storage](src, ref []float64, rows, n, cf int) []float64 {
	const u = 0x1p-24
	c := 16.0
	var z T
	if _, ok := any(z).(float32); ok {
		c = 0.001
	}
	tol := make([]float64, len(src))
	at := func(row []float64, i int) float64 {
		if i < 0 {
			return 0
		}
		return row[i]
	}
	abs := make([]float64, n+1) // abs[t] = Σ_{j < t} |x[j]|
	for r := range rows {
		x := src[r*n : (r+1)*n]
		for t, v := range x {
			abs[t+1] = abs[t] + math.Abs(v)
		}
		var D, P, A float64
		for t := range n {
			if t%gpuChunk == 0 {
				D = 0
			}
			if t%256 == 0 {
				P = 0
				for _, w := range []int{256, 512, 1024, gpuChunk} {
					s := t / w * w
					P += abs[s] - abs[max(0, s-cf)]
				}
			}
			D += math.Abs(at(x, t) - at(x, t-cf))
			k := float64(min(t+1, cf))
			tol[r*n+t] = u*(28*D+c*P+4*u*A)/k + 3*u*math.Abs(ref[r*n+t])
			A += math.Abs(at(x, t)) + math.Abs(at(x, t-cf))
		}
	}
	return tol
}

// checkMeansFP32 fails t unless every element of got is a rounding to T of
// a value within fp32Tolerance of the reference mean: the check of the
// direct kernels, which sum in float32.
func checkMeansFP32[T Storage](t *testing.T, got []T, src []float64, rows, n, cf int) []float64 {
	t.Helper()
	ref := make([]float64, len(src))
	CausalTrailingMeanRef(ref, src, rows, n, cf)
	tol := fp32Tolerance[T](src, ref, rows, n, cf)
	g := fromStorage(got)
	for i := range g {
		lo, hi := roundTo[T](ref[i]-tol[i]), roundTo[T](ref[i]+tol[i])
		if !(g[i] >= lo && g[i] <= hi) {
			t.Fatalf("[%d, %d] (rows %d, n %d, cf %d): got %v, want %v (float32 bound ±%.3g: %v…%v)",
				i/n, i%n, rows, n, cf, g[i], ref[i], tol[i], lo, hi)
		}
	}
	return tol
}

// checkAgreeCPU fails t unless the GPU result is within
// its float32 bound (plus one unit of T) of the CPU's correctly rounded
// result, and logs how many elements are identical.
func checkAgreeCPU[T Storage](t *testing.T, gpu, cpu []T, src []float64, rows, n, cf int) {
	t.Helper()
	ref := make([]float64, len(src))
	CausalTrailingMeanRef(ref, src, rows, n, cf)
	tol := fp32Tolerance[T](src, ref, rows, n, cf)
	g, c := fromStorage(gpu), fromStorage(cpu)
	same := 0
	for i := range g {
		if g[i] == c[i] {
			same++
			continue
		}
		// Both round (nearly) the same mean: one unit of T apart at most,
		// plus the float32 bound.
		if !(math.Abs(g[i]-c[i]) <= 2*tol[i]+ulpOf[T](max(math.Abs(g[i]), math.Abs(c[i])))) {
			t.Fatalf("[%d]: GPU %v, CPU %v: further apart than the float32 bound %.3g", i, g[i], c[i], tol[i])
		}
	}
	t.Logf("%d of %d elements identical to the CPU's", same, len(g))
}

// ulpOf returns the spacing of T's values just above |v| (v rounded to T).
func ulpOf[T Storage](v float64) float64 {
	a := toStorage[T]([]float64{math.Abs(v)})
	lo := fromStorage(a)[0]
	switch p := any(&a[0]).(type) {
	case *float32:
		*p = math.Nextafter32(*p, float32(math.Inf(1)))
	case *Float16:
		*p++
	case *BFloat16:
		*p++
	}
	return fromStorage(a)[0] - lo
}

// checkIdentical fails t unless a and b hold the same values (NaN equal to
// NaN).
func checkIdentical[T Storage](t *testing.T, a, b []T) {
	t.Helper()
	fa, fb := fromStorage(a), fromStorage(b)
	for i := range fa {
		if fa[i] != fb[i] && !(math.IsNaN(fa[i]) && math.IsNaN(fb[i])) {
			t.Fatalf("[%d] = %v, want %v", i, fa[i], fb[i])
		}
	}
}

// TestGPUTrailingMeanUnaligned applies the op to device arrays that start
// 1 … 7 elements past a 16-byte boundary, so that loads, lagged loads and
// stores all take their unaligned paths.
func TestGPUTrailingMeanUnaligned(t *testing.T) {
	gpuDevice(t)
	t.Run("float32", testGPUUnaligned[float32])
	t.Run("Float16", testGPUUnaligned[Float16])
	t.Run("BFloat16", testGPUUnaligned[BFloat16])
}

func testGPUUnaligned[T Storage](t *testing.T) {
	rng := rand.New(rand.NewPCG(3, uint64(len(typeName[T]()))))
	vec := 16 / elemSize[T]()
	const rows, n = 3, 3*2048 + 8
	x := toStorage[T](gen(rng, "offset", rows*n))
	src := fromStorage(x)
	es := elemSize[T]()
	for _, cf := range []int{1, 7, 100, 2048, 5000} {
		for _, mis := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {vec - 1, 2}, {3 % vec, vec - 1}, {2, 3 % vec}} {
			g, err := NewTrailingMean[T](gpuDevice(t), rows, n, cf)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]T, len(x))
			gpuDo(t, func(c *compute.Ctx) error {
				bx, err := c.Alloc((rows*n + 16) * es)
				if err != nil {
					return err
				}
				defer c.Free(bx)
				by, err := c.Alloc((rows*n + 16) * es)
				if err != nil {
					return err
				}
				defer c.Free(by)
				if err := c.Memset8(by.Ptr, 0xff, by.Bytes); err != nil {
					return err
				}
				px, py := bx.Ptr.Add(mis[0]*es), by.Ptr.Add(mis[1]*es)
				if err := compute.Upload(c, px, x); err != nil {
					return err
				}
				if err := g.ApplyDevice(c, py, px); err != nil {
					return err
				}
				return compute.Download(c, dst, py)
			})
			t.Run(fmt.Sprintf("cf%d/x+%d/y+%d/%s", cf, mis[0], mis[1], g.kernelName()), func(t *testing.T) {
				checkMeansFP32(t, dst, src, rows, n, cf)
			})
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestGPUTrailingMeanLongRow is the accuracy requirement on the GPU:
// one row of 10 000 000 float32 samples with mean 1000 and SD 1 (1 000 000
// with -short), windows of 100 (direct and look-back) and of the whole row
// (look-back); every output within 4 float32 ulps of 1000 of the float64
// reference (and within the kernels' float32 bound).
func TestGPUTrailingMeanLongRow(t *testing.T) {
	gpuDevice(t)
	n := 10_000_000
	if testing.Short() {
		n = 1_000_000
	}
	rng := rand.New(rand.NewPCG(1000, 1))
	x := toStorage[float32](gen(rng, "offset", n))
	src := fromStorage(x)
	bound := 4 * float64(math.Nextafter32(1000, 2000)-1000)
	maxErr := func(got []float32, ref []float64) (e float64, at int) {
		for i, v := range got {
			if d := math.Abs(float64(v) - ref[i]); !(d <= e) {
				e, at = d, i
			}
		}
		return e, at
	}
	for _, cf := range []int{100, n} {
		ref := make([]float64, n)
		CausalTrailingMeanRef(ref, src, 1, n, cf)
		for _, k := range gpuModes[float32](cf) {
			g, err := newTrailingMean[float32](gpuDevice(t), 1, n, cf, k)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]float32, n)
			if err := g.Apply(dst, x); err != nil {
				t.Fatal(err)
			}
			mode := g.kernelName()
			if e, at := maxErr(dst, ref); !(e <= bound) {
				t.Errorf("%s cf %d: max error %g at %d, bound %g", mode, cf, e, at, bound)
			} else {
				t.Logf("%s cf %d: max error %.3g (bound %.3g)", mode, cf, e, bound)
			}
			checkMeansFP32(t, dst, src, 1, n, cf)
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestGPUTrailingMeanError measures, per storage type, the largest error of
// the GPU result against the float64 reference, relative to the largest
// |mean|, on N(0, 1) data with cf = 100 (direct kernel, float32 sums), and
// checks it is the storage type's rounding (half a unit in the last place
// of that scale) plus at most a few float32 units.
func TestGPUTrailingMeanError(t *testing.T) {
	gpuDevice(t)
	t.Run("float32", testGPUError[float32])
	t.Run("Float16", testGPUError[Float16])
	t.Run("BFloat16", testGPUError[BFloat16])
}

func testGPUError[T Storage](t *testing.T) {
	const rows, n, cf = 64, 8192, 100
	rng := rand.New(rand.NewPCG(9, 9))
	x := toStorage[T](gen(rng, "normal", rows*n))
	src := fromStorage(x)
	ref := make([]float64, len(src))
	CausalTrailingMeanRef(ref, src, rows, n, cf)
	dst := make([]T, len(x))
	g, err := NewTrailingMean[T](gpuDevice(t), rows, n, cf)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Apply(dst, x); err != nil {
		t.Fatal(err)
	}
	got := fromStorage(dst)
	var maxErr, scale float64
	for i := range got {
		maxErr = max(maxErr, math.Abs(got[i]-ref[i]))
		scale = max(scale, math.Abs(ref[i]))
	}
	rel := maxErr / scale
	// Half an ulp at the largest magnitude (2^-24, 2^-11, 2^-8 relative)
	// plus a few float32 units of the direct kernel's sums.
	bits := map[string]int{"float32": 24, "ops.Float16": 11, "ops.BFloat16": 8}[typeName[T]()]
	limit := math.Ldexp(1, -bits) + 8*0x1p-24
	t.Logf("%s: max |error| %.3g, relative to max |mean| %.3g: %.3g (limit %.3g)", typeName[T](), maxErr, scale, rel, limit)
	if !(rel <= limit) {
		t.Errorf("relative error %.3g above %.3g", rel, limit)
	}
}

// TestGPUTrailingMeanPanics checks the shape and pointer misuse panics,
// which happen before any device call.
func TestGPUTrailingMeanPanics(t *testing.T) {
	g := &TrailingMean[float32]{dev: &compute.Device{}, rows: 2, n: 8, cf: 3, gpu: &cudaTrailing{}}
	cases := []struct {
		name string
		f    func()
	}{
		{"cf 0", func() { NewTrailingMean[float32](nil, 2, 3, 0) }},
		{"negative rows", func() { NewTrailingMean[Float16](nil, -1, 3, 1) }},
		{"too many blocks", func() { checkCUDA[BFloat16](1<<21, 1<<21, 1, gpuWarp) }},
		{"null pointer", func() { g.ApplyDevice(nil, 0, 64) }},
		{"misaligned", func() { g.ApplyDevice(nil, 64, 66) }},
		{"overlap", func() { g.ApplyDevice(nil, 64, 64+4*15) }},
		{"kernel too short", func() { checkCUDA[float32](2, 3, 257, gpuWarp) }},
		{"host length", func() { g.Apply(make([]float32, 15), make([]float32, 16)) }},
		{"device memory on the CPU", func() { (&TrailingMean[float32]{rows: 2, n: 8, cf: 3}).ApplyDevice(nil, 64, 128) }},
		{"after Close", func() { (&TrailingMean[float32]{dev: g.dev, rows: 2, n: 8, cf: 3}).ApplyDevice(nil, 64, 128) }},
	}
	for _, c := range cases {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", c.name)
				} else if s, ok := r.(string); !ok || len(s) < 5 || s[:5] != "ops: " {
					t.Errorf("%s: panic %v without the ops: prefix", c.name, r)
				}
			}()
			c.f()
		}()
	}
}

// nonFiniteCases are rows with one non-finite sample, for the GPU and
// emulator tests of non-finite input: the sample sits past the first cf
// positions of a warp's chunk, where the kernels multiply the lagged
// samples they leave out of the carried-in sum by zero (0 × Inf and 0 × NaN
// are NaN), and in a row's first chunk.
var nonFiniteCases = []struct {
	n, cf, at int
	v         float64
}{
	{3 * 2048, 100, 2048 + 300, math.NaN()},
	{3 * 2048, 100, 2048 + 700, math.Inf(1)},
	{2 * 2048, 33, 40, math.Inf(-1)},
	{2 * 2048, 500, 2048 + 513, math.NaN()},
}

// nonFiniteInput returns the row of case i: normal samples with the
// non-finite one at its position.
func nonFiniteInput[T Storage](i int) []T {
	c := nonFiniteCases[i]
	x := gen(rand.New(rand.NewPCG(5, uint64(i))), "normal", c.n)
	x[c.at] = c.v
	return toStorage[T](x)
}

// checkNonFinite fails t unless the outputs before the non-finite sample of
// case i are the means of the samples before it (within fp32Tolerance) and
// those whose window holds it are not finite (later ones may be either, as
// on the CPU).
func checkNonFinite[T Storage](t *testing.T, got, x []T, i int) {
	t.Helper()
	c := nonFiniteCases[i]
	g, src := fromStorage(got), fromStorage(x)
	ref := make([]float64, c.at)
	CausalTrailingMeanRef(ref, src[:c.at], 1, c.at, c.cf)
	tol := fp32Tolerance[T](src[:c.at], ref, 1, c.at, c.cf)
	for tt, v := range g {
		finite := !math.IsNaN(v) && !math.IsInf(v, 0)
		if tt < c.at {
			if lo, hi := roundTo[T](ref[tt]-tol[tt]), roundTo[T](ref[tt]+tol[tt]); !(v >= lo && v <= hi) {
				t.Fatalf("case %d: [%d] = %v, want %v (±%.3g), before the %v at %d", i, tt, v, ref[tt], tol[tt], c.v, c.at)
			}
		} else if tt < c.at+c.cf && finite {
			t.Fatalf("case %d: [%d] = %v, finite with the %v at %d in its window", i, tt, v, c.v, c.at)
		}
	}
}

// TestGPUTrailingMeanNonFinite: a non-finite sample makes the outputs whose
// window holds it non-finite and leaves those before it as they are, in
// every kernel.
func TestGPUTrailingMeanNonFinite(t *testing.T) {
	gpuDevice(t)
	t.Run("float32", testGPUNonFinite[float32])
	t.Run("Float16", testGPUNonFinite[Float16])
	t.Run("BFloat16", testGPUNonFinite[BFloat16])
}

func testGPUNonFinite[T Storage](t *testing.T) {
	for i, c := range nonFiniteCases {
		x := nonFiniteInput[T](i)
		for _, k := range gpuModes[T](c.cf) {
			g, err := newTrailingMean[T](gpuDevice(t), 1, c.n, c.cf, k)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]T, c.n)
			if err := g.Apply(dst, x); err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("%d/%s", i, g.kernelName()), func(t *testing.T) { checkNonFinite(t, dst, x, i) })
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
