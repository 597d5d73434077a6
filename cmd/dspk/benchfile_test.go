package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchWholeFile runs dspk bench -ops file on a short simulation: every
// pass, the whole run, the detection pass's waits and the loader alone
// (before and after the passes) get a line, and the ratio of the
// detection pass to the loader is stated; without -file it is a usage error.
func TestBenchWholeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole pipeline")
	}
	dir := filepath.Join(t.TempDir(), "sim")
	if code, _, stderr := dspk(t, "simulate", "-o", dir, "-duration", "4.5s", "-units", "30"); code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	rec := filepath.Join(dir, "sim_g0_t0.imec0.ap.bin")
	code, out, stderr := dspk(t, "bench", "-device", "cpu", "-ops", "file", "-file", rec)
	if code != 0 {
		t.Fatalf("bench -ops file: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"pipeline set-up", "whitening pass, 1 windows", "templates pass", "detection pass, 3 windows",
		"whole run,", "loader alone, 3 windows, before", "loader alone, 3 windows, after", "detection pass: waiting, results"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code, _, stderr := dspk(t, "bench", "-device", "cpu", "-ops", "file"); code != 2 || !strings.Contains(stderr, "-ops file needs -file") {
		t.Errorf("without -file: exit %d, %q", code, stderr)
	}
}
