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

// TestTrailingMeanNVRTC compiles TrailingMeanCUDA, the source the product
// compiles, for sm_90 with the NVRTC library of this machine, if it has one
// (testdata/nvrtc_check.cc, built with g++; no GPU needed), and logs each
// kernel's registers and spills as that compiler reports them (an older
// NVRTC than the device's may allocate differently). It catches a source
// that does not compile before the GPU machine does.
func TestTrailingMeanNVRTC(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++: the NVRTC check is not built")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "nvrtc_check")
	cmd := exec.Command(gxx, "-std=c++20", "-O1", "-o", exe, "nvrtc_check.cc", "-ldl")
	cmd.Dir = "testdata"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building nvrtc_check: %v\n%s", err, out)
	}
	src := filepath.Join(dir, "trailing_mean.cu")
	if err := os.WriteFile(src, []byte(TrailingMeanCUDA), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, src, "--gpu-architecture=sm_90", "-std=c++17", "-Xptxas=-v").CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skip("no NVRTC library on this machine")
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, r := range ptxasReport(string(out)) {
		t.Log(r)
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
