package ops

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTrailingMeanCUDASource keeps the Go launch constants and kernel names
// in step with the embedded CUDA source.
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
	if got := define("CTM_CHUNK"); got != TrailingMeanChunk {
		t.Errorf("CTM_CHUNK = %d, TrailingMeanChunk = %d", got, TrailingMeanChunk)
	}
	if got := define("CTM_THREADS") * define("CTM_ITEMS"); got != TrailingMeanChunk {
		t.Errorf("CTM_THREADS·CTM_ITEMS = %d, TrailingMeanChunk = %d", got, TrailingMeanChunk)
	}
	if got := define("CTM_ITEMS_F32"); got != trailingMeanItems32 {
		t.Errorf("CTM_ITEMS_F32 = %d, trailingMeanItems32 = %d", got, trailingMeanItems32)
	}
	if got := define("CTM_ITEMS_16"); got != trailingMeanItems16 {
		t.Errorf("CTM_ITEMS_16 = %d, trailingMeanItems16 = %d", got, trailingMeanItems16)
	}
	if got := define("CTM_GROUP_F32"); got != trailingMeanGroup32 {
		t.Errorf("CTM_GROUP_F32 = %d, trailingMeanGroup32 = %d", got, trailingMeanGroup32)
	}
	if got := define("CTM_GROUP_16"); got != trailingMeanGroup16 {
		t.Errorf("CTM_GROUP_16 = %d, trailingMeanGroup16 = %d", got, trailingMeanGroup16)
	}
	// The warp kernels' samples per thread default to the block kernels'.
	for _, c := range []struct {
		def, to         string
		goWarp, goItems int
	}{{"CTM_WARP_ITEMS_F32", "CTM_ITEMS_F32", trailingMeanWarpItems32, trailingMeanItems32},
		{"CTM_WARP_ITEMS_16", "CTM_ITEMS_16", trailingMeanWarpItems16, trailingMeanItems16}} {
		if !strings.Contains(TrailingMeanCUDA, "#define "+c.def+" "+c.to+"\n") || c.goWarp != c.goItems {
			t.Errorf("%s: the CUDA default is not %s, or the Go constant (%d) differs from it (%d)", c.def, c.to, c.goWarp, c.goItems)
		}
	}
	var names []string
	for _, s := range []string{"f32", "f16", "bf16"} {
		names = append(names, "ctm_direct_"+s, "ctm_warp_"+s, "ctm_lookback_"+s, "ctm_fill_"+s)
		if s != "f32" {
			names = append(names, "ctm_eager_widen_"+s, "ctm_eager_narrow_"+s)
		}
	}
	names = append(names, "ctm_eager_cumsum", "ctm_eager_pad", "ctm_eager_sub", "ctm_eager_count", "ctm_eager_div")
	for _, name := range names {
		bounds := `CTM_THREADS`
		if strings.HasPrefix(name, "ctm_direct_") || strings.HasPrefix(name, "ctm_lookback_") || strings.HasPrefix(name, "ctm_warp_") {
			// The fused kernels: blocks of TrailingMeanChunk/items threads.
			sz := "16"
			if strings.HasSuffix(name, "_f32") {
				sz = "F32"
			}
			bounds = `CTM_THREADS_` + sz + `, CTM_MINB_` + sz
			if strings.HasPrefix(name, "ctm_warp_") {
				bounds = `CTM_WARP_THREADS_` + sz + `, CTM_WARP_MINB_` + sz
			}
		}
		if !regexp.MustCompile(`__global__ void __launch_bounds__\(` + bounds + `\)\n` + name + `\(`).MatchString(TrailingMeanCUDA) {
			t.Errorf("entry point %s not found in the CUDA source", name)
		}
	}
	if !strings.Contains(TrailingMeanCUDA, "s.agg = (double*)(base + 16);") ||
		!strings.Contains(TrailingMeanCUDA, "s.flags = (unsigned*)(s.incl + blocks);") ||
		trailingMeanStateBytes(1) != 16+8+8+4 {
		t.Errorf("look-back state layout of the CUDA source and trailingMeanStateBytes disagree")
	}
}
