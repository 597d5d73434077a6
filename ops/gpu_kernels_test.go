package ops

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTrailingMeanCUDASource keeps the Go launch constants and kernel names
// in step with the embedded CUDA source, and checks that the source is one
// file (its include expanded) with no switches left to the compiler's
// command line.
func TestTrailingMeanCUDASource(t *testing.T) {
	src := TrailingMeanCUDA
	if strings.Contains(src, "#include") || !strings.Contains(src, "ctm_ldn_u16") {
		t.Fatalf("the include of trailing_mean_io.cuh is not expanded")
	}
	if m := regexp.MustCompile(`(?m)^#(ifdef|ifndef|if) (\w+)`).FindAllStringSubmatch(src, -1); len(m) != 1 || m[0][2] != "CTM_EMULATE" {
		t.Errorf("conditional compilation other than CTM_EMULATE (the emulator's build): %q", m)
	}
	define := func(name string) int {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)\b`).FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("#define %s not found", name)
		}
		v, _ := strconv.Atoi(m[1])
		return v
	}
	for _, c := range []struct {
		name string
		goV  int
	}{{"CTM_CHUNK", gpuChunk}, {"CTM_ITEMS_F32", gpuItems32}, {"CTM_ITEMS_16", gpuItems16}} {
		if got := define(c.name); got != c.goV {
			t.Errorf("%s = %d, the Go side has %d", c.name, got, c.goV)
		}
	}
	// Every kernel the host launches, with its samples per thread.
	for _, s := range []struct{ sfx, items string }{{"f32", "CTM_ITEMS_F32"}, {"f16", "CTM_ITEMS_16"}, {"bf16", "CTM_ITEMS_16"}} {
		sz := strings.TrimPrefix(s.items, "CTM_ITEMS_")
		for _, want := range []string{
			"CTM_DIRECT(ctm_warp_" + s.sfx + ", %s, true, " + s.items + ", CTM_THREADS_" + sz + ", CTM_WARP_MINB_" + sz + ")",
			"CTM_DIRECT(ctm_direct_" + s.sfx + ", %s, false, " + s.items + ", CTM_THREADS_" + sz + ", CTM_MINB_" + sz + ")",
			"CTM_LOOKBACK(ctm_lookback_" + s.sfx + ", %s, CTM_THREADS_" + sz + ", CTM_MINB_" + sz + ")",
		} {
			storage := map[string]string{"f32": "CtmF32", "f16": "CtmF16", "bf16": "CtmBF16"}[s.sfx]
			if w := strings.Replace(want, "%s", storage, 1); !strings.Contains(src, "\n"+w+"\n") {
				t.Errorf("entry point %s not found in the CUDA source", w)
			}
		}
	}
	if !strings.Contains(src, "s.agg = (double*)(base + 16);") ||
		!strings.Contains(src, "s.flags = (unsigned*)(s.incl + blocks);") ||
		gpuStateBytes(1) != 16+8+8+4 {
		t.Errorf("look-back state layout of the CUDA source and gpuStateBytes disagree")
	}
}
