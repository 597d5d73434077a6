package ops

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// nvrtcBuilds are the option sets TestTrailingMeanNVRTC compiles: the
// default build and every knob the tests and benchmarks pass (memory-access
// variants, groups, persistence, samples per thread, ablations, the trace
// build).
var nvrtcBuilds = []struct{ name, flags string }{
	{"default", ""},
	{"access", "-DCTM_LAG_AFTER=1 -DCTM_XLOAD_WARP=1 -DCTM_STORE_WARP=1 -DCTM_ST_CS=1 -DCTM_LDX_HINT=1 -DCTM_SIN64_16=1 -DCTM_LOAD_SEQ=1"},
	{"groups", "-DCTM_GROUP_F32=3 -DCTM_GROUP_16=3 -DCTM_PERSIST=1 -DCTM_ITEMS_F32=16 -DCTM_ITEMS_16=8 -DCTM_MIN_BLOCKS=4"},
	{"warp32", "-DCTM_WARP_ITEMS_16=32 -DCTM_WARP_MIN_BLOCKS_16=4 -DCTM_LDX_HINT=2"},
	{"ablations", "-DCTM_ABL_COMPUTE=1 -DCTM_ABL_XALIGNED=1 -DCTM_ABL_LAGMIS=4"},
	{"trace", "-DCTM_TRACE"},
}

// TestTrailingMeanNVRTC compiles the CUDA source for sm_90 with the NVRTC
// library of this machine, if it has one (kernels/nvrtc_check.cc, built
// with g++; no GPU needed), in every option set of nvrtcBuilds, and logs
// each fused kernel's registers and spills as that compiler reports them
// (an older NVRTC than the device's may allocate differently). It catches
// a source that does not compile before the GPU machine does.
// CTM_NVRTC_DEFINES adds one more option set ("-DNAME=V ..."), to read a
// variant's registers with -v.
func TestTrailingMeanNVRTC(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++: the NVRTC check is not built")
	}
	exe := filepath.Join(t.TempDir(), "nvrtc_check")
	cmd := exec.Command(gxx, "-std=c++20", "-O1", "-o", exe, "nvrtc_check.cc", "-ldl")
	cmd.Dir = "kernels"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building nvrtc_check: %v\n%s", err, out)
	}
	builds := nvrtcBuilds
	if extra := os.Getenv("CTM_NVRTC_DEFINES"); extra != "" {
		builds = append(builds[:len(builds):len(builds)], struct{ name, flags string }{"CTM_NVRTC_DEFINES", extra})
	}
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"trailing_mean.cu", "--gpu-architecture=sm_90", "-std=c++17", "-Xptxas=-v"}, strings.Fields(b.flags)...)
			cmd := exec.Command(exe, args...)
			cmd.Dir = "kernels"
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 3 {
				t.Skip("no NVRTC library on this machine")
			}
			if err != nil {
				t.Fatalf("%s: %v\n%s", b.flags, err, out)
			}
			for _, r := range ptxasReport(string(out)) {
				t.Log(r)
			}
		})
	}
}

// ptxasReport returns one line per fused kernel (ctm_direct_*, ctm_warp_*,
// ctm_lookback_*) of a -Xptxas=-v log: its registers and spill stores.
func ptxasReport(log string) []string {
	entry := regexp.MustCompile(`Compiling entry function '(\w+)'`)
	spill := regexp.MustCompile(`(\d+) bytes spill stores`)
	regs := regexp.MustCompile(`Used (\d+) registers`)
	var out []string
	name, spilled := "", ""
	for _, line := range strings.Split(log, "\n") {
		if m := entry.FindStringSubmatch(line); m != nil {
			name, spilled = m[1], ""
		} else if m := spill.FindStringSubmatch(line); m != nil {
			spilled = m[1]
		} else if m := regs.FindStringSubmatch(line); m != nil && regexp.MustCompile(`^ctm_(direct|warp|lookback)_`).MatchString(name) {
			out = append(out, name+": "+m[1]+" registers, "+spilled+" bytes spilled")
		}
	}
	return out
}
