package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDemoTemporaryFolder checks that a demo without -o writes nothing
// into the working folder: its raster is in its temporary folder, which
// the output names and which is gone when the demo ends.
func TestDemoTemporaryFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("a demo: skipped in -short mode")
	}
	work, tmp := t.TempDir(), t.TempDir()
	t.Chdir(work)
	t.Setenv("TMPDIR", tmp)
	code, out, stderr := dspk(t, "demo", "-device", "cpu", "-duration", "2.5s")
	if code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`Drift raster: (\S+) \(in the temporary folder, removed at exit`).FindStringSubmatch(out)
	if m == nil || filepath.Dir(filepath.Dir(m[1])) != tmp || filepath.Base(m[1]) != "drift_raster.png" {
		t.Fatalf("the output does not name the raster in a folder of %s:\n%s", tmp, out)
	}
	for _, d := range []string{work, tmp} {
		if es, _ := os.ReadDir(d); len(es) != 0 {
			t.Errorf("%s holds %v after the demo", d, es)
		}
	}
}
