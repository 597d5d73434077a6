package detect

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestKernelsNVRTC compiles kernels/detect.cu (the embedded copy) for sm_90 with the NVRTC
// library of this machine, if it has one (ops/kernels/nvrtc_check.cc,
// built with g++; no GPU needed), for the sizes the tests and the
// defaults use, and logs registers and spills. It catches a source that
// does not compile before the GPU machine does.
func TestKernelsNVRTC(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++: the NVRTC check is not built")
	}
	check := filepath.Join("..", "ops", "kernels", "nvrtc_check.cc")
	if _, err := os.Stat(check); err != nil {
		t.Skipf("no %s: %v", check, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "detect.cu"), []byte(gpuSource), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "nvrtc_check")
	cmd := exec.Command(gxx, "-std=c++20", "-O1", "-o", exe, check, "-ldl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building nvrtc_check: %v\n%s", err, out)
	}
	for _, b := range []string{
		"-DDK=6 -DDNT=61 -DDS=5 -DDNC=10 -DDNC2=100 -DDP=6 -DDR=20",
		"-DDK=3 -DDNT=61 -DDS=3 -DDNC=7 -DDNC2=20 -DDP=6 -DDR=20",
		"-DDK=4 -DDNT=61 -DDS=5 -DDNC=1 -DDNC2=1 -DDP=6 -DDR=20",
		"-DDK=6 -DDNT=31 -DDS=5 -DDNC=10 -DDNC2=100 -DDP=6 -DDR=10",
		"-DDK=5 -DDNT=61 -DDS=5 -DDNC=10 -DDNC2=100 -DDP=6 -DDR=20 -DTC_MMA=16",
		"-DDK=10 -DDNT=61 -DDS=5 -DDNC=10 -DDNC2=100 -DDP=6 -DDR=20 -DTC_MMA=8",
	} {
		args := append([]string{"detect.cu", "--gpu-architecture=sm_90", "-std=c++17", "-Xptxas=-v"}, strings.Fields(b)...)
		cmd := exec.Command(exe, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			t.Skip("no NVRTC library on this machine")
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", b, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "Compiling entry") || strings.Contains(line, "registers") || strings.Contains(line, "spill") {
				t.Log(strings.TrimSpace(line))
			}
		}
	}
}
