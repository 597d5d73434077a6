package compute

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"dspk/internal/cuda"
)

// TestBLASLoadedOnFirstCall checks, in a fresh process, that opening a GPU
// does not load cuBLAS, and that the first cuBLAS call loads it and
// computes: a 2×3 · 3×2 SGEMM against its values by hand.
func TestBLASLoadedOnFirstCall(t *testing.T) {
	if os.Getenv("DSPK_BLASLOAD_CHILD") == "1" {
		blasLoadChild(t)
		return
	}
	if ok, err := haveGPU(); !ok {
		t.Skipf("no CUDA GPU: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBLASLoadedOnFirstCall$", "-test.v")
	cmd.Env = append(os.Environ(), "DSPK_BLASLOAD_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil || !strings.Contains(string(out), "cuBLAS loaded on its first call") {
		t.Errorf("child failed: %v", err)
	}
}

func blasLoadChild(t *testing.T) {
	mapped := func() bool {
		for _, p := range cuda.LoadedLibraries() {
			if strings.Contains(p, "libcublas") {
				return true
			}
		}
		return false
	}
	d, _, err := Open("cuda:0")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if mapped() {
		t.Fatalf("cuBLAS mapped after Open: %v", cuda.LoadedLibraries())
	}
	// Row-major A (2×3) and B (3×2); in cuBLAS's column-major terms
	// C_rm = A·B is C_cmᵀ = Bᵀ_cm·Aᵀ_cm: m = 2 (columns of C_rm), n = 2, k = 3.
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{7, 8, 9, 10, 11, 12}
	want := []float32{58, 64, 139, 154}
	got := make([]float32, 4)
	err = d.Do(func(c *Ctx) error {
		m, err := c.Alloc(4 * (6 + 6 + 4))
		if err != nil {
			return err
		}
		defer c.Free(m)
		pa, pb, pc := m.Ptr, m.Ptr+4*6, m.Ptr+4*12
		if err := Upload(c, pa, a); err != nil {
			return err
		}
		if err := Upload(c, pb, b); err != nil {
			return err
		}
		if err := c.Sgemm(NoTrans, NoTrans, 2, 2, 3, 1, pb, 2, pa, 3, 0, pc, 2); err != nil {
			return err
		}
		return Download(c, got, pc)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("A·B = %v, want %v", got, want)
		}
	}
	if !mapped() {
		t.Fatalf("cuBLAS not mapped after a GEMM: %v", cuda.LoadedLibraries())
	}
	t.Log("cuBLAS loaded on its first call")
}
