package cuda

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	testOnce sync.Once
	testDev  *Device
	testErr  error
)

// device returns the process's test GPU, skipping the test where there is
// none (no driver, no device, or a missing NVRTC or cuBLAS).
func device(t testing.TB) *Device {
	t.Helper()
	testOnce.Do(func() {
		testDev, testErr = Open(0)
		if testErr == nil {
			testErr = LoadLibraries()
		}
	})
	if errors.Is(testErr, ErrNotFound) {
		t.Skipf("no CUDA GPU: %v", testErr)
	}
	if testErr != nil {
		t.Fatalf("opening cuda:0: %v", testErr)
	}
	return testDev
}

// do runs f inside the test device's Do and fails the test on error.
func do(t testing.TB, f func(c *Ctx) error) {
	t.Helper()
	if err := device(t).Do(f); err != nil {
		t.Fatal(err)
	}
}

func TestBadPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/usr/local/cuda-13.0/compat/libcuda.so.580.95.05": true,
		"/usr/local/cuda/lib64/stubs/libcuda.so":           true,
		"/usr/local/nvidia/lib64/libcuda.so.580.159.04":    false,
		"libcuda.so.1": false,
		"/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so": false,
	} {
		if got := badPath(p); got != want {
			t.Errorf("badPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestTarget(t *testing.T) {
	archs := []int{75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121}
	for _, tc := range []struct {
		cc   int
		want string
		ptx  bool
		err  bool
	}{
		{90, "sm_90", false, false},
		{75, "sm_75", false, false},
		{91, "compute_90", true, false},   // unknown to NVRTC: newest older arch as PTX
		{130, "compute_121", true, false}, // NVRTC older than the device
		{70, "", false, true},             // older than anything NVRTC supports
	} {
		got, ptx, err := target(tc.cc, archs)
		if (err != nil) != tc.err || got != tc.want || ptx != tc.ptx {
			t.Errorf("target(%d) = %q, %v, %v; want %q, %v, error %v", tc.cc, got, ptx, err, tc.want, tc.ptx, tc.err)
		}
	}
}

// TestLibraryNotFound checks that a library named by a missing or stub path
// is refused with an error wrapping ErrNotFound that names the variable.
func TestLibraryNotFound(t *testing.T) {
	for _, p := range []string{"/nonexistent/libnvrtc.so.13", "/usr/local/cuda/lib64/stubs/libnvrtc.so"} {
		t.Setenv("DSPK_TEST_LIB", p)
		l := &library{what: "test library", env: "DSPK_TEST_LIB", stem: "libnvrtc.so"}
		err := l.load()
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "DSPK_TEST_LIB="+p) {
			t.Errorf("%s: err = %v, want ErrNotFound naming the variable", p, err)
		}
	}
	// Nothing to find at all.
	l := &library{what: "missing library", env: "DSPK_TEST_NONE", stem: "libdspk-none.so",
		sonames: []string{"libdspk-none.so.1"}, dirs: func() []string { return []string{t.TempDir()} }}
	if err := l.load(); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing library: err = %v, want ErrNotFound", err)
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{Lib: LibDriver, Func: "cuLaunchKernel", Op: "empty", Code: 1, Name: "CUDA_ERROR_INVALID_VALUE", Msg: "invalid argument"}
	if got, want := e.Error(), "cuda: cuLaunchKernel(empty): CUDA_ERROR_INVALID_VALUE (1): invalid argument"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if errors.Is(e, ErrDeviceLost) {
		t.Error("non-sticky error wraps ErrDeviceLost")
	}
	e.Lost = true
	if !errors.Is(e, ErrDeviceLost) {
		t.Error("sticky error does not wrap ErrDeviceLost")
	}
	for code, want := range map[int]bool{700: true, 719: true, 999: true, 1: false, 2: false, 201: false} {
		if IsSticky(code) != want {
			t.Errorf("IsSticky(%d) = %v", code, !want)
		}
	}
}

// TestNoGPU runs only where no driver is present: every entry point must
// report ErrNotFound, not crash.
func TestNoGPU(t *testing.T) {
	if _, err := DeviceCount(); !errors.Is(err, ErrNotFound) {
		t.Skip("a CUDA driver is present")
	}
	if _, err := Open(0); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open(0) = %v, want ErrNotFound", err)
	}
	if _, err := Devices(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Devices() = %v, want ErrNotFound", err)
	}
	if _, err := DriverVersion(); !errors.Is(err, ErrNotFound) {
		t.Errorf("DriverVersion() = %v, want ErrNotFound", err)
	}
}

func TestDevices(t *testing.T) {
	d := device(t)
	list, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range list {
		t.Logf("%s: %s %s, %d SMs, %.1f GiB, L2 %d KiB, smem/block %d KiB, bus %s, driver %d",
			fmt.Sprint("cuda:", i.Ordinal), i.Name, i.Arch(), i.SMs, float64(i.Memory)/(1<<30), i.L2>>10, i.MaxSharedPerBlock>>10, i.PCIBusID, i.DriverVersion)
		if i.Name == "" || i.Major < 3 || i.SMs < 1 || i.Memory == 0 || i.DriverVersion < 10000 {
			t.Errorf("implausible device info %+v", i)
		}
	}
	if d.Info().Name != list[0].Name {
		t.Errorf("Open(0).Info() = %+v, Devices()[0] = %+v", d.Info(), list[0])
	}
	v, err := DriverVersion()
	if err != nil || v != list[0].DriverVersion {
		t.Errorf("DriverVersion() = %d, %v; want %d", v, err, list[0].DriverVersion)
	}
	ma, mi, err := NVRTCVersion()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NVRTC %d.%d", ma, mi)
	libs := LoadedLibraries()
	t.Logf("libraries: %s", strings.Join(libs, ", "))
	for _, stem := range []string{"libcuda.so", "libnvrtc.so", "libcublas.so"} {
		found := false
		for _, l := range libs {
			if strings.HasPrefix(filepath.Base(l), stem) {
				found = true
			}
			if badPath(l) {
				t.Errorf("loaded %s", l)
			}
		}
		if !found {
			t.Errorf("no %s among the mapped libraries", stem)
		}
	}
	do(t, func(c *Ctx) error {
		free, total, err := c.MemInfo()
		t.Logf("memory: %.1f GiB free of %.1f GiB", float64(free)/(1<<30), float64(total)/(1<<30))
		if err == nil && (free == 0 || free > total) {
			t.Errorf("MemInfo = %d, %d", free, total)
		}
		v, err2 := c.BLASVersion()
		t.Logf("cuBLAS %d", v)
		if err == nil {
			err = err2
		}
		return err
	})
}

// TestOpenBadOrdinal checks that a missing device is ErrNotFound.
func TestOpenBadOrdinal(t *testing.T) {
	device(t)
	n, err := DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(n); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open(%d) = %v, want ErrNotFound", n, err)
	}
}

// TestCopyRoundTrip moves odd sizes through pinned and pageable host
// memory and device-to-device copies, and checks memsets.
func TestCopyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 3, 4097, 1<<20 + 5} {
		src := make([]int16, n)
		for i := range src {
			src[i] = int16(rng.Uint32())
		}
		src[0] = math.MinInt16
		do(t, func(c *Ctx) error {
			a, err := c.Alloc(2 * n)
			if err != nil {
				return err
			}
			defer c.Free(a)
			b, err := c.Alloc(2 * n)
			if err != nil {
				return err
			}
			defer c.Free(b)
			// pageable up, device copy, pageable down
			if err := Upload(c, a.Ptr, src); err != nil {
				return err
			}
			if err := c.CopyDtoD(b.Ptr, a.Ptr, 2*n); err != nil {
				return err
			}
			got := make([]int16, n)
			for i := range got {
				got[i] = 12345
			}
			if err := Download(c, got, b.Ptr); err != nil {
				return err
			}
			if i := firstDiff(got, src); i >= 0 {
				t.Errorf("n=%d pageable: element %d = %d, want %d", n, i, got[i], src[i])
			}
			// pinned up and down, at an odd offset
			h, err := c.AllocHost(2*n + 2)
			if err != nil {
				return err
			}
			defer c.FreeHost(h)
			copy(h.Int16()[1:], src)
			if err := c.Memset8(a.Ptr, 0xff, 2*n); err != nil {
				return err
			}
			if err := c.CopyHtoD(a.Ptr, h, 2, 2*n); err != nil {
				return err
			}
			if err := c.Sync(); err != nil { // the copy reads h asynchronously
				return err
			}
			clear(h.Bytes())
			if err := c.CopyDtoH(h, 2, a.Ptr, 2*n); err != nil {
				return err
			}
			if err := c.Sync(); err != nil {
				return err
			}
			if i := firstDiff(h.Int16()[1:], src); i >= 0 {
				t.Errorf("n=%d pinned: element %d = %d, want %d", n, i, h.Int16()[1+i], src[i])
			}
			// memsets
			if n%2 == 1 {
				return nil
			}
			if err := c.Memset32(a.Ptr, math.Float32bits(-2.5), n/2); err != nil {
				return err
			}
			f := make([]float32, n/2)
			if err := Download(c, f, a.Ptr); err != nil {
				return err
			}
			for i, v := range f {
				if v != -2.5 {
					t.Fatalf("Memset32: element %d = %v", i, v)
				}
			}
			return nil
		})
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

const testKernels = `
extern "C" __global__ void scale(float* y, const float* x, float a, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i];
}
extern "C" __global__ void args(double* out, int a, unsigned int b, long long c,
                                unsigned long long d, float e, double f) {
	out[0] = a; out[1] = b; out[2] = (double)c; out[3] = (double)d; out[4] = e; out[5] = f;
}
extern "C" __global__ void add_one(float* y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] += 1.0f;
}
extern "C" __global__ void empty() {}
extern "C" __global__ void big_shared(float* y, int n) {
	extern __shared__ float sh[];
	for (int i = threadIdx.x; i < n; i += blockDim.x) sh[i] = (float)i;
	__syncthreads();
	if (threadIdx.x == 0) y[0] = sh[n - 1];
}
`

// TestLaunch compiles kernels and checks them against the CPU: a scaling
// over an odd length into NaN-poisoned output, every argument type, a
// Prepared launch with a changed argument, and the launch's allocations.
func TestLaunch(t *testing.T) {
	const n = 1000003
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	do(t, func(c *Ctx) error {
		m, err := c.Compile("test.cu", testKernels)
		if err != nil {
			return err
		}
		m2, err := c.Compile("test.cu", testKernels)
		if err != nil {
			return err
		}
		if m2 != m {
			t.Error("second Compile of the same source did not hit the cache")
		}
		scale, err := m.Function("scale")
		if err != nil {
			return err
		}
		dx, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(dx)
		dy, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(dy)
		if err := Upload(c, dx.Ptr, x); err != nil {
			return err
		}
		if err := c.Memset32(dy.Ptr, 0x7fc00000, n); err != nil {
			return err
		}
		const a = float32(-1.7)
		if err := c.Launch(scale, D1((n+255)/256), D1(256), 0, dy, dx.Ptr, a, int32(n)); err != nil {
			return err
		}
		y := make([]float32, n)
		if err := Download(c, y, dy.Ptr); err != nil {
			return err
		}
		for i := range y {
			if y[i] != a*x[i] {
				t.Fatalf("scale: y[%d] = %v, want %v", i, y[i], a*x[i])
			}
		}
		// Prepared, with the length changed to n-1: the last element keeps its
		// poison.
		if err := c.Memset32(dy.Ptr, 0x7fc00000, n); err != nil {
			return err
		}
		p := scale.Prepare(D1((n+255)/256), D1(256), 0, dy, dx, float32(2), int32(n))
		defer p.Free()
		p.Set(3, int32(n-1))
		if err := p.Launch(c); err != nil {
			return err
		}
		if err := Download(c, y, dy.Ptr); err != nil {
			return err
		}
		for i := 0; i < n-1; i++ {
			if y[i] != 2*x[i] {
				t.Fatalf("prepared: y[%d] = %v, want %v", i, y[i], 2*x[i])
			}
		}
		if !math.IsNaN(float64(y[n-1])) {
			t.Errorf("prepared: y[n-1] = %v, want the NaN poison", y[n-1])
		}
		allocs := testing.AllocsPerRun(100, func() {
			if err := p.Launch(c); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("Prepared.Launch allocates %v times", allocs)
		}
		// argument types
		args, err := m.Function("args")
		if err != nil {
			return err
		}
		out, err := c.Alloc(6 * 8)
		if err != nil {
			return err
		}
		defer c.Free(out)
		if err := c.Launch(args, D1(1), D1(1), 0, out, int32(-7), uint32(3e9), int64(-1<<40), uint64(1<<50), float32(0.25), math.Pi); err != nil {
			return err
		}
		got := make([]float64, 6)
		if err := Download(c, got, out.Ptr); err != nil {
			return err
		}
		want := []float64{-7, 3e9, -1 << 40, 1 << 50, 0.25, math.Pi}
		if i := firstDiff(got, want); i >= 0 {
			t.Errorf("argument %d arrived as %v, want %v", i, got[i], want[i])
		}
		return nil
	})
}

// TestDynamicShared checks that a launch with 64 KiB of dynamic shared
// memory is refused until SetMaxDynamicShared allows it, and then runs.
func TestDynamicShared(t *testing.T) {
	const bytes = 64 << 10
	do(t, func(c *Ctx) error {
		m, err := c.Compile("test.cu", testKernels)
		if err != nil {
			return err
		}
		f, err := m.Function("big_shared")
		if err != nil {
			return err
		}
		y, err := c.Alloc(4)
		if err != nil {
			return err
		}
		defer c.Free(y)
		if err := c.Launch(f, D1(1), D1(256), bytes, y, int32(bytes/4)); err == nil {
			t.Error("a launch with 64 KiB of dynamic shared memory was accepted without SetMaxDynamicShared")
		}
		if err := f.SetMaxDynamicShared(bytes); err != nil {
			return err
		}
		if err := c.Launch(f, D1(1), D1(256), bytes, y, int32(bytes/4)); err != nil {
			return err
		}
		if err := c.SyncDevice(); err != nil {
			return err
		}
		got := make([]float32, 1)
		if err := Download(c, got, y.Ptr); err != nil {
			return err
		}
		if got[0] != bytes/4-1 {
			t.Errorf("y[0] = %v, want %d", got[0], bytes/4-1)
		}
		a, err := f.Attributes()
		if err != nil {
			return err
		}
		t.Logf("big_shared: %+v", a)
		// 64 KiB per block: at most 3 fit in the 228 KiB of an H100/H200
		// multiprocessor; without dynamic shared memory, more.
		nb64, err := f.MaxActiveBlocks(256, bytes)
		if err != nil {
			return err
		}
		nb0, err := f.MaxActiveBlocks(256, 0)
		if err != nil {
			return err
		}
		t.Logf("big_shared: %d blocks of 256 threads per multiprocessor with 64 KiB each, %d without", nb64, nb0)
		if nb64 < 0 || nb64 > 3 || nb0 <= nb64 {
			t.Errorf("MaxActiveBlocks(256, 64 KiB) = %d, MaxActiveBlocks(256, 0) = %d", nb64, nb0)
		}
		if a.Registers < 1 || a.Registers > 255 || a.MaxThreads < 256 || a.LocalBytes < 0 || a.SharedBytes < 0 {
			t.Errorf("attributes %+v", a)
		}
		return nil
	})
}

// TestClose opens a second Device on the same GPU, gives it a module and a
// cuBLAS handle, and closes it; the first device keeps working.
func TestClose(t *testing.T) {
	device(t)
	d2, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	err = d2.Do(func(c *Ctx) error {
		if _, err := c.Compile("test.cu", testKernels); err != nil {
			return err
		}
		_, err := c.BLASVersion()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := d2.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	mustPanic(t, "Do after Close", func() { d2.Do(func(*Ctx) error { return nil }) })
	do(t, func(c *Ctx) error { // the first device is unaffected
		b, err := c.Alloc(16)
		if err != nil {
			return err
		}
		return c.Free(b)
	})
}

// TestLaunchPanics checks that Go's int is refused as a kernel argument
// and that Set refuses a change of type.
func TestLaunchPanics(t *testing.T) {
	mustPanic(t, "int argument", func() { argBits(3) })
	mustPanic(t, "Set type change", func() {
		p := &Prepared{f: &Function{name: "k"}, kinds: []string{"int32"}, slots: []uint64{0}}
		p.Set(0, float32(1))
	})
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

// TestCompileError checks that an NVRTC error carries the program log.
func TestCompileError(t *testing.T) {
	err := device(t).Do(func(c *Ctx) error {
		_, err := c.Compile("bad.cu", `extern "C" __global__ void k(float* y) { y[0] = undefined_name; }`)
		return err
	})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	t.Logf("%v", err)
	if e.Lib != LibNVRTC || e.Func != "nvrtcCompileProgram" || e.Code != 6 || e.Name != "NVRTC_ERROR_COMPILATION" ||
		!strings.Contains(e.Msg, "undefined_name") || !strings.Contains(e.Msg, "bad.cu") {
		t.Errorf("error = %+v", e)
	}
	if device(t).Err() != nil {
		t.Error("a compilation error marked the device lost")
	}
}

// TestLaunchError checks that a bad launch configuration is reported at
// once, names the kernel, and leaves the device usable.
func TestLaunchError(t *testing.T) {
	err := device(t).Do(func(c *Ctx) error {
		m, err := c.Compile("test.cu", testKernels)
		if err != nil {
			t.Fatal(err)
		}
		f, err := m.Function("empty")
		if err != nil {
			t.Fatal(err)
		}
		return c.Launch(f, D1(1), D1(2048), 0)
	})
	var e *Error
	if !errors.As(err, &e) || e.Func != "cuLaunchKernel" || e.Op != "empty" || e.Code != 1 || e.Name != "CUDA_ERROR_INVALID_VALUE" || e.Lost {
		t.Fatalf("err = %v, want CUDA_ERROR_INVALID_VALUE from cuLaunchKernel(empty)", err)
	}
	t.Logf("%v", err)
	do(t, func(c *Ctx) error { // still usable
		b, err := c.Alloc(64)
		if err != nil {
			return err
		}
		return c.Free(b)
	})
	// A missing function.
	err = device(t).Do(func(c *Ctx) error {
		m, err := c.Compile("test.cu", testKernels)
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Function("nope")
		return err
	})
	if !errors.As(err, &e) || e.Func != "cuModuleGetFunction" || e.Lost {
		t.Errorf("missing function: err = %v", err)
	}
}

// TestEventsStreamsGraph times a kernel with events, orders two streams
// with an event, and replays a captured graph.
func TestEventsStreamsGraph(t *testing.T) {
	const n = 4099
	do(t, func(c *Ctx) error {
		m, err := c.Compile("test.cu", testKernels)
		if err != nil {
			return err
		}
		add, err := m.Function("add_one")
		if err != nil {
			return err
		}
		y, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(y)
		if err := c.Memset32(y.Ptr, 0, n); err != nil {
			return err
		}
		e0, err := c.NewEvent()
		if err != nil {
			return err
		}
		defer c.DestroyEvent(e0)
		e1, err := c.NewEvent()
		if err != nil {
			return err
		}
		defer c.DestroyEvent(e1)
		p := add.Prepare(D1((n+127)/128), D1(128), 0, y, int32(n))
		defer p.Free()
		if err := c.Record(e0); err != nil {
			return err
		}
		for range 3 {
			if err := p.Launch(c); err != nil {
				return err
			}
		}
		if err := c.Record(e1); err != nil {
			return err
		}
		// A second stream, of the highest priority, waits for e1, then
		// adds once more.
		s, err := c.NewStreamPriority(-100)
		if err != nil {
			return err
		}
		defer c.DestroyStream(s)
		c2 := c.WithStream(s)
		if err := c2.Wait(e1); err != nil {
			return err
		}
		if err := p.Launch(c2); err != nil {
			return err
		}
		if err := c2.Sync(); err != nil {
			return err
		}
		if err := c.EventSync(e1); err != nil {
			return err
		}
		ms, err := c.Elapsed(e0, e1)
		if err != nil {
			return err
		}
		t.Logf("3 launches: %.3f ms", ms)
		if !(ms > 0) {
			t.Errorf("elapsed %v ms", ms)
		}
		// A graph of 5 launches, replayed twice: 4 + 10.
		g, err := c.Capture(func(c *Ctx) error {
			for range 5 {
				if err := p.Launch(c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		defer c.DestroyGraph(g)
		for range 2 {
			if err := c.LaunchGraph(g); err != nil {
				return err
			}
		}
		got := make([]float32, n)
		if err := Download(c, got, y.Ptr); err != nil {
			return err
		}
		for i, v := range got {
			if v != 14 {
				t.Fatalf("y[%d] = %v, want 14", i, v)
			}
		}
		return nil
	})
}

// TestDoOutside checks that a Ctx kept past Do panics.
func TestDoOutside(t *testing.T) {
	var kept *Ctx
	do(t, func(c *Ctx) error { kept = c; return nil })
	mustPanic(t, "Ctx outside Do", func() { kept.Alloc(16) })
}

const faultKernel = `
extern "C" __global__ void oob_store(float* p) { p[threadIdx.x] = 1.0f; }
`

// TestStickyFault runs a kernel that stores to an illegal address in a
// child process (the fault kills the context for the whole process): the
// fault must surface at the next synchronisation (or at the launch's own
// synchronisation with DSPK_CUDA_SYNC=1, naming the kernel), mark the
// device lost, and make every later call fail with ErrDeviceLost.
func TestStickyFault(t *testing.T) {
	if os.Getenv("DSPK_CUDA_FAULT_CHILD") == "1" {
		faultChild(t)
		return
	}
	device(t)
	for _, sync := range []string{"0", "1"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStickyFault$", "-test.v")
		cmd.Env = append(os.Environ(), "DSPK_CUDA_FAULT_CHILD=1", "DSPK_CUDA_SYNC="+sync)
		out, err := cmd.CombinedOutput()
		t.Logf("child (DSPK_CUDA_SYNC=%s):\n%s", sync, out)
		if err != nil || !strings.Contains(string(out), "sticky fault checked") {
			t.Errorf("child with DSPK_CUDA_SYNC=%s failed: %v", sync, err)
		}
	}
}

func faultChild(t *testing.T) {
	d := device(t)
	debug := os.Getenv("DSPK_CUDA_SYNC") == "1"
	var f *Function
	do(t, func(c *Ctx) error {
		m, err := c.Compile("fault.cu", faultKernel)
		if err != nil {
			return err
		}
		f, err = m.Function("oob_store")
		return err
	})
	var fault error
	err := d.Do(func(c *Ctx) error {
		if err := c.Launch(f, D1(1), D1(32), 0, DevicePtr(8)); err != nil {
			fault = err
			return err
		}
		if debug {
			t.Error("with DSPK_CUDA_SYNC=1 the launch did not report the fault")
		}
		fault = c.Sync()
		if fault == nil {
			t.Fatal("the illegal store was not reported")
		}
		// Later calls fail with the same error, without reaching the driver.
		if _, err := c.Alloc(16); !errors.Is(err, ErrDeviceLost) {
			t.Errorf("Alloc after the fault: %v, want ErrDeviceLost", err)
		}
		if _, err := c.Compile("test.cu", testKernels); !errors.Is(err, ErrDeviceLost) {
			t.Errorf("Compile after the fault: %v, want ErrDeviceLost", err)
		}
		if err := c.Sgemm(NoTrans, NoTrans, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 1); !errors.Is(err, ErrDeviceLost) {
			t.Errorf("Sgemm after the fault: %v, want ErrDeviceLost", err)
		}
		return fault
	})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrDeviceLost) || !e.Lost || !IsSticky(e.Code) {
		t.Fatalf("fault = %v, want a sticky *Error wrapping ErrDeviceLost", err)
	}
	if debug && e.Op != "oob_store" {
		t.Errorf("with DSPK_CUDA_SYNC=1 the fault names %q, want oob_store", e.Op)
	}
	t.Logf("fault: %v", err)
	ran := false
	if err := d.Do(func(*Ctx) error { ran = true; return nil }); !errors.Is(err, ErrDeviceLost) || ran {
		t.Errorf("Do after the fault: ran=%v err=%v", ran, err)
	}
	if d.Err() == nil {
		t.Error("Device.Err() is nil after the fault")
	}
	if !t.Failed() {
		fmt.Println("sticky fault checked")
	}
}
