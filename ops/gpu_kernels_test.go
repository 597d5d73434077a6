package ops

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTrailingMeanCUDASource keeps the Go launch constants and names in step
// with the embedded CUDA source.
func TestTrailingMeanCUDASource(t *testing.T) {
	define := func(name string) int {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)$`).FindStringSubmatch(TrailingMeanCUDA)
		if m == nil {
			t.Fatalf("#define %s not found", name)
		}
		v, _ := strconv.Atoi(m[1])
		return v
	}
	if got := define("CTM_THREADS"); got != TrailingMeanThreads {
		t.Errorf("CTM_THREADS = %d, TrailingMeanThreads = %d", got, TrailingMeanThreads)
	}
	if got := define("CTM_THREADS") * define("CTM_ITEMS"); got != TrailingMeanChunk {
		t.Errorf("CTM_CHUNK = %d, TrailingMeanChunk = %d", got, TrailingMeanChunk)
	}
	names := []string{TrailingMeanCarryScan}
	for _, p := range []TrailingMeanPlan{
		PlanTrailingMean[float32](1, 1, 1), PlanTrailingMean[Float16](1, 1, 1), PlanTrailingMean[BFloat16](1, 1, 1),
	} {
		names = append(names, p.Main, p.Delta)
	}
	for _, name := range names {
		if !strings.Contains(TrailingMeanCUDA, "__global__ void __launch_bounds__(CTM_THREADS)\n"+name+"(") {
			t.Errorf("entry point %s not found in the CUDA source", name)
		}
	}
}

func TestPlanTrailingMean(t *testing.T) {
	cases := []struct {
		rows, n, cf int
		want        TrailingMeanPlan
	}{
		{4096, 8192, 100, TrailingMeanPlan{"ctm_f32", "ctm_delta_f32", 4, 16384, false, 0}},
		{16, 1_000_000, 2048, TrailingMeanPlan{"ctm_f32", "ctm_delta_f32", 489, 7824, false, 0}},
		{16, 1_000_000, 2049, TrailingMeanPlan{"ctm_f32", "ctm_delta_f32", 489, 7824, true, 7824}},
		{1, 1, 1, TrailingMeanPlan{"ctm_f32", "ctm_delta_f32", 1, 1, false, 0}},
	}
	for _, c := range cases {
		if got := PlanTrailingMean[float32](c.rows, c.n, c.cf); got != c.want {
			t.Errorf("%d×%d cf %d: got %+v, want %+v", c.rows, c.n, c.cf, got, c.want)
		}
	}
	if p := PlanTrailingMean[BFloat16](2, 3, 4); p.Main != "ctm_bf16" || p.Delta != "ctm_delta_bf16" {
		t.Errorf("bfloat16 names: %+v", p)
	}
}

// gpuModel computes what the CUDA kernels compute, block by block and
// thread by thread, on the CPU: the same chunking, the same carried-in sums
// (direct: the cf samples before the chunk; two-level: exclusive prefix sums
// of per-chunk sums of differences), per-thread running sums of eight
// samples and an exclusive scan over threads, all in float64, then one
// rounding. It checks the kernel's algorithm and indexing, not CUDA itself.
func gpuModel[T Storage](y, x []T, rows, n, cf int) {
	p := PlanTrailingMean[T](rows, n, cf)
	v := fromStorage(x)
	at := func(row []float64, i int) float64 {
		if i < 0 {
			return 0
		}
		return row[i]
	}
	var carry []float64
	if p.TwoLevel {
		carry = make([]float64, p.CarryLen)
		for b := range p.Blocks {
			r, c := b/p.Chunks, b%p.Chunks
			row := v[r*n : (r+1)*n]
			t0 := c * TrailingMeanChunk
			for t := t0; t < min(t0+TrailingMeanChunk, n); t++ {
				carry[b] += at(row, t) - at(row, t-cf)
			}
		}
		for r := range rows { // ctm_carry_scan
			var run float64
			for c := range p.Chunks {
				d := carry[r*p.Chunks+c]
				carry[r*p.Chunks+c] = run
				run += d
			}
		}
	}
	out := make([]float64, len(v))
	for b := range p.Blocks {
		r, c := b/p.Chunks, b%p.Chunks
		row := v[r*n : (r+1)*n]
		t0 := c * TrailingMeanChunk
		l := min(TrailingMeanChunk, n-t0)
		var sIn float64
		if p.TwoLevel {
			sIn = carry[b]
		} else {
			for i := range cf {
				sIn += at(row, t0-cf+i)
			}
		}
		const items = TrailingMeanChunk / TrailingMeanThreads
		var excl float64
		for th := range TrailingMeanThreads {
			var run float64
			var vs [items]float64
			for j := range items {
				if k := th*items + j; k < l {
					run += at(row, t0+k) - at(row, t0+k-cf)
				}
				vs[j] = run
			}
			base := sIn + excl
			for j := range items {
				if k := th*items + j; k < l {
					t := t0 + k
					s := base + vs[j]
					if t < cf {
						out[r*n+t] = s / float64(t+1)
					} else {
						out[r*n+t] = s * (1 / float64(cf))
					}
				}
			}
			excl += run
		}
	}
	copy(y, toStorage[T](out))
}

// TestGPUModel checks the kernel's algorithm against the reference, in
// direct and two-level mode, on shapes around the chunk length.
func TestGPUModel(t *testing.T) {
	t.Run("float32", testGPUModel[float32])
	t.Run("Float16", testGPUModel[Float16])
	t.Run("BFloat16", testGPUModel[BFloat16])
}

func testGPUModel[T Storage](t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(6, 6))
	C := TrailingMeanChunk
	for _, sh := range []struct{ rows, n, cf int }{
		{1, 1, 1}, {2, 7, 3}, {1, C, C}, {1, C + 1, C}, {3, 3*C + 5, 100}, {2, 5*C - 1, C + 1},
		{1, 9*C + 77, 3*C + 5}, {2, 4 * C, 10 * C}, {1, 20000, 20000}, {2, 6*C + 3, 1},
	} {
		for _, kind := range []string{"offset", "wide"} {
			x := toStorage[T](gen(rng, kind, sh.rows*sh.n))
			y := make([]T, len(x))
			nanFill(y)
			gpuModel(y, x, sh.rows, sh.n, sh.cf)
			t.Run(fmt.Sprintf("%dx%d/cf%d/%s", sh.rows, sh.n, sh.cf, kind), func(t *testing.T) {
				checkMeans(t, y, fromStorage(x), sh.rows, sh.n, sh.cf)
			})
		}
	}
}
