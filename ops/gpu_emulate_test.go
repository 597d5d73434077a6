package ops

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"unsafe"
)

// TestTrailingMeanCUDAEmulated runs the CUDA kernels on the CPU as the
// product builds and launches them: TrailingMeanCUDA, the one source NVRTC
// compiles, is compiled as C++ with testdata/emulate.h (a block's threads
// as fibers, warp shuffles through barriers, blocks one after another) and
// each kernel family is launched with the host's grid and block; the
// results are checked against the float64 reference like the GPU tests
// do. It needs g++ (C++20) and skips without it; it checks indexing,
// unaligned paths, rounding and the look-back protocol on every machine,
// not concurrency or speed.
func TestTrailingMeanCUDAEmulated(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++: the CUDA kernels are not emulated")
	}
	// dir/testdata/emulate.cc includes ../kernels/trailing_mean.cu: there,
	// the product's source string.
	dir := t.TempDir()
	files := map[string][]byte{"kernels/trailing_mean.cu": []byte(TrailingMeanCUDA)}
	for _, f := range []string{"emulate.cc", "emulate.h"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		files["testdata/"+f] = b
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "emulate")
	cmd := exec.Command(gxx, "-std=c++20", "-O1", "-o", exe, "emulate.cc")
	cmd.Dir = filepath.Join(dir, "testdata")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the emulator: %v\n%s", err, out)
	}
	t.Run("float32", func(t *testing.T) { testEmulated[float32](t, exe) })
	t.Run("Float16", func(t *testing.T) { testEmulated[Float16](t, exe) })
	t.Run("BFloat16", func(t *testing.T) { testEmulated[BFloat16](t, exe) })
	t.Run("nonfinite", func(t *testing.T) {
		testEmulatedNonFinite[float32](t, exe)
		testEmulatedNonFinite[Float16](t, exe)
		testEmulatedNonFinite[BFloat16](t, exe)
	})
}

// emuShapes are the emulated shapes: edge cases, partial and full chunks,
// windows of several residues, a window longer than a chunk and one longer
// than the row.
var emuShapes = []struct{ rows, n, cf int }{
	{1, 1, 1}, {1, 7, 3}, {2, 9, 4}, {1, 7, 100}, {3, 1001, 17}, {2, 2049, 100},
	{3, 3*2048 + 5, 100}, {1, 2 * 2048, 2048}, {2, 4*2048 - 1, 2047}, {3, 3*2048 + 3, 1},
	{1, 4*2048 + 77, 2*2048 + 5}, {2, 3 * 2048, 10 * 2048},
	// Whole 16-byte vectors per row: full first chunks with wide-range
	// data, a row shorter than its window, the longest direct window, a
	// window of one.
	{3, 4 * 2048, 1000}, {2, 2*2048 + 8, 100}, {3, 4096, 1000}, {5, 2048 + 16, 7},
	{2, 64, 100}, {3, 3*2048 + 8, 2048}, {1, 8, 1}, {4, 2048, 1}, {2, 8200, 333},
	// The warp kernels' longest windows (256 float32, 512 16-bit samples),
	// wide-range first chunks, short last chunks with warps past the row.
	{3, 4 * 2048, 256}, {2, 3*2048 + 8, 512}, {2, 2048 + 600, 255}, {1, 700, 511}, {2, 2*2048 + 520, 300},
	{2, 3 * 2048, 1024}, {2, 2048 + 1500, 1000},
}

// testEmulated runs every kernel that takes a window (gpuModes) on
// emuShapes.
func testEmulated[T Storage](t *testing.T, exe string) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(12, uint64(len(typeName[T]()))))
	vec := 16 / elemSize[T]()
	mis := [][2]int{{0, 0}, {1, 3 % vec}, {3 % vec, 1}, {2, 2}, {vec - 1, 0}, {0, vec - 1}}
	kinds := []string{"offset", "normal", "wide", "int16"}
	for si, sh := range emuShapes {
		x := toStorage[T](gen(rng, kinds[si%len(kinds)], sh.rows*sh.n))
		src := fromStorage(x)
		cpu := make([]T, len(x))
		CausalTrailingMean(cpu, x, sh.rows, sh.n, sh.cf)
		m := mis[si%len(mis)]
		for _, k := range gpuModes[T](sh.cf) {
			name := fmt.Sprintf("%dx%d/cf%d/%s/x+%d/y+%d", sh.rows, sh.n, sh.cf, gpuKernelNames[k], m[0], m[1])
			got := runEmulator(t, exe, gpuKernelNames[k], x, sh.rows, sh.n, sh.cf, m[0], m[1], 2)
			t.Run(name, func(t *testing.T) {
				checkMeansFP32(t, got, src, sh.rows, sh.n, sh.cf)
				checkAgreeCPU(t, got, cpu, src, sh.rows, sh.n, sh.cf)
			})
		}
	}
}

// testEmulatedNonFinite runs the non-finite cases (nonFiniteCases) in every
// kernel that takes them.
func testEmulatedNonFinite[T Storage](t *testing.T, exe string) {
	for i, c := range nonFiniteCases {
		x := nonFiniteInput[T](i)
		for _, k := range gpuModes[T](c.cf) {
			got := runEmulator(t, exe, gpuKernelNames[k], x, 1, c.n, c.cf, 0, 0, 1)
			t.Run(fmt.Sprintf("%s/%d/%s", storageSuffix[T](), i, gpuKernelNames[k]), func(t *testing.T) { checkNonFinite(t, got, x, i) })
		}
	}
}

// runEmulator runs one kernel of the emulator on x and returns its output.
func runEmulator[T Storage](t *testing.T, exe, kernel string, x []T, rows, n, cf, xmis, ymis, reps int) []T {
	t.Helper()
	sfx := storageSuffix[T]()
	es := elemSize[T]()
	in := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x)*es)
	args := []string{sfx, kernel}
	for _, v := range []int{rows, n, cf, xmis, ymis, reps} {
		args = append(args, strconv.Itoa(v))
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("emulate %v: %v\n%s", args, err, errb.String())
	}
	if out.Len() != len(in) {
		t.Fatalf("emulate %v: %d bytes out, want %d", args, out.Len(), len(in))
	}
	y := make([]T, len(x))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(y))), len(y)*es), out.Bytes())
	return y
}
