package ops

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestTrailingMeanCUDAEmulated runs the CUDA kernels of
// kernels/trailing_mean.cu on the CPU, compiled as C++ with
// kernels/emulate.h (a block's threads as OS threads, warp shuffles through
// barriers, blocks one after another), and checks them against the float64
// reference like the GPU tests do. It needs g++ (C++20) and skips without
// it; it checks indexing, unaligned paths, chunk groups, rounding and the
// look-back protocol on every machine, not concurrency or speed.
func TestTrailingMeanCUDAEmulated(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++: the CUDA kernels are not emulated")
	}
	dir := t.TempDir()
	defWarpItems := [2]int{trailingMeanWarpItems32, trailingMeanWarpItems16}
	// The default build, one with three chunks per block (groups that
	// straddle rows, a partial last group), and one with the other number
	// of samples per thread for each type (16 for float32, 8 for the 16-bit
	// types), persistent direct kernels (3 blocks taking every third
	// group), and the memory-access variants of the direct kernels.
	for _, build := range []struct {
		name, flags string
		witems      [2]int // the warp kernels' samples per thread, float32 and 16-bit
	}{
		{"default", "", defWarpItems},
		{"group3", "-DCTM_GROUP_F32=3 -DCTM_GROUP_16=3", defWarpItems},
		{"items", "-DCTM_ITEMS_F32=16 -DCTM_ITEMS_16=8 -DCTM_GROUP_F32=2 -DCTM_GROUP_16=1 " +
			"-DCTM_WARP_ITEMS_F32=16 -DCTM_WARP_ITEMS_16=8", [2]int{16, 8}},
		{"persist", "-DCTM_PERSIST=1 -DCTM_GROUP_F32=2", defWarpItems},
		{"access", "-DCTM_LAG_AFTER=1 -DCTM_XLOAD_WARP=1 -DCTM_STORE_WARP=1 -DCTM_SIN64_16=1 -DCTM_LOAD_SEQ=1", defWarpItems},
		{"warp32", "-DCTM_WARP_ITEMS_F32=8 -DCTM_WARP_ITEMS_16=32", [2]int{8, 32}},
	} {
		exe := filepath.Join(dir, "emulate-"+build.name)
		args := []string{"-std=c++20", "-O1", "-o", exe}
		args = append(args, strings.Fields(build.flags)...)
		cmd := exec.Command(gxx, append(args, "emulate.cc")...)
		cmd.Dir = "kernels"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building the emulator %s: %v\n%s", build.name, err, out)
		}
		t.Run(build.name, func(t *testing.T) {
			t.Run("float32", func(t *testing.T) { testEmulated[float32](t, exe, 32*build.witems[0]) })
			t.Run("Float16", func(t *testing.T) { testEmulated[Float16](t, exe, 32*build.witems[1]) })
			t.Run("BFloat16", func(t *testing.T) { testEmulated[BFloat16](t, exe, 32*build.witems[1]) })
			if build.name == "default" {
				t.Run("nonfinite", func(t *testing.T) {
					testEmulatedNonFinite[float32](t, exe, 32*build.witems[0])
					testEmulatedNonFinite[Float16](t, exe, 32*build.witems[1])
					testEmulatedNonFinite[BFloat16](t, exe, 32*build.witems[1])
				})
			}
		})
	}
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

// testEmulated runs the emulator's kernels on emuShapes: the look-back
// kernel on all, the direct kernel on windows up to TrailingMeanDirectMax,
// the warp kernel on windows up to warpMax.
func testEmulated[T Storage](t *testing.T, exe string, warpMax int) {
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
		modes := []string{"lookback"}
		if sh.cf <= TrailingMeanDirectMax {
			modes = append(modes, "direct")
		}
		if sh.cf <= warpMax {
			modes = append(modes, "warp")
		}
		for _, mode := range modes {
			name := fmt.Sprintf("%dx%d/cf%d/%s/x+%d/y+%d", sh.rows, sh.n, sh.cf, mode, m[0], m[1])
			got := runEmulator(t, exe, mode, x, sh.rows, sh.n, sh.cf, m[0], m[1], 2)
			t.Run(name, func(t *testing.T) {
				checkMeansFP32(t, got, src, sh.rows, sh.n, sh.cf)
				checkAgreeCPU(t, got, cpu, src, sh.rows, sh.n, sh.cf)
			})
		}
		if si%3 == 0 {
			x := toStorage[T](gen(rng, "normal", sh.rows*sh.n))
			got := runEmulator(t, exe, "eager", x, sh.rows, sh.n, sh.cf, 0, 0, 1)
			checkEager(t, fmt.Sprintf("eager %dx%d cf %d", sh.rows, sh.n, sh.cf), got, fromStorage(x), sh.rows, sh.n, sh.cf)
		}
	}
}

// runEmulator runs one kernel of the emulator on x and returns its output.
// testEmulatedNonFinite runs the non-finite cases (nonFiniteCases) in every
// kernel that takes them.
func testEmulatedNonFinite[T Storage](t *testing.T, exe string, warpMax int) {
	for i, c := range nonFiniteCases {
		x := nonFiniteInput[T](i)
		modes := []string{"lookback", "direct"}
		if c.cf <= warpMax {
			modes = append(modes, "warp")
		}
		for _, mode := range modes {
			got := runEmulator(t, exe, mode, x, 1, c.n, c.cf, 0, 0, 1)
			t.Run(fmt.Sprintf("%s/%d/%s", storageSuffix[T](), i, mode), func(t *testing.T) { checkNonFinite(t, got, x, i) })
		}
	}
}

func runEmulator[T Storage](t *testing.T, exe, mode string, x []T, rows, n, cf, xmis, ymis, reps int) []T {
	t.Helper()
	sfx := storageSuffix[T]()
	es := elemSize[T]()
	in := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x)*es)
	args := []string{sfx, mode}
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
