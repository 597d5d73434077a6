package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
)

// dspk runs the command in-process and returns its exit status and output.
func dspk(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageContract(t *testing.T) {
	if code, _, _ := dspk(t); code != 2 {
		t.Errorf("no arguments: exit %d, want 2", code)
	}
	if code, _, stderr := dspk(t, "frobnicate"); code != 2 || !strings.Contains(stderr, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, stderr)
	}
	for _, c := range commands {
		code, stdout, stderr := dspk(t, c.name, "-h")
		if code != 0 || stdout != "" || !strings.Contains(stderr, "Example:") || !strings.Contains(stderr, "dspk "+c.name) {
			t.Errorf("%s -h: exit %d, stdout %q, stderr %q", c.name, code, stdout, stderr)
		}
		if code, _, _ := dspk(t, c.name, "-no-such-flag"); code != 2 {
			t.Errorf("%s with an unknown flag: exit %d, want 2", c.name, code)
		}
	}
	if code, _, stderr := dspk(t, "info"); code != 2 || !strings.Contains(stderr, "usage") && !strings.Contains(stderr, "Run 'dspk info -h'") {
		t.Errorf("info without a path: exit %d, %q", code, stderr)
	}
	code, _, stderr := dspk(t, "info", filepath.Join(t.TempDir(), "missing.ap.bin"))
	if code != 1 || !strings.Contains(stderr, "missing.ap.bin") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("info on a missing file: exit %d, stderr %q (want 1 and one line naming the file)", code, stderr)
	}
	if code, out, _ := dspk(t, "version"); code != 0 || !strings.HasPrefix(out, "dspk ") {
		t.Errorf("version: %d %q", code, out)
	}
}

// TestSimulateDeterministicAndInfo is the foundation's contract: the same
// seed gives byte-identical files, and info reads them back.
func TestSimulateDeterministicAndInfo(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if code, _, stderr := dspk(t, "simulate", "-o", d, "-duration", "3s", "-seed", "7"); code != 0 {
			t.Fatalf("simulate: exit %d: %s", code, stderr)
		}
	}
	var files []string
	filepath.WalkDir(a, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() != export.ManifestName { // the manifest holds file times
			rel, _ := filepath.Rel(a, p)
			files = append(files, rel)
		}
		return nil
	})
	if len(files) < 4 {
		t.Fatalf("simulate wrote only %v", files)
	}
	for _, f := range files {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed (%v, %v)", f, err1, err2)
		}
	}
	// Refuses to overwrite.
	if code, _, stderr := dspk(t, "simulate", "-o", a, "-duration", "3s"); code != 1 || !strings.Contains(stderr, "overwrite") {
		t.Errorf("simulate into an existing folder: exit %d, %q", code, stderr)
	}
	code, out, stderr := dspk(t, "info", filepath.Join(a, simBase+".imec0.ap.bin"))
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"format:      spikeglx", "channels:    385", "sample rate: 30000 Hz", "duration:    3 s", "384 sites"} {
		if !strings.Contains(out, want) {
			t.Errorf("info output lacks %q:\n%s", want, out)
		}
	}
}
