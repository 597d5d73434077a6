package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/compare"
	"dspk/export"
	"dspk/sim"
)

// TestCompareTruthFolder checks that -truth takes a simulation's own
// folder as well as its truth/ folder, with the same report, and that a
// compare without -truth or without a folder names what it needs.
func TestCompareTruthFolder(t *testing.T) {
	dir := t.TempDir()
	simDir := filepath.Join(dir, "sim")
	if code, _, stderr := dspk(t, "simulate", "-o", simDir, "-duration", "2s", "-units", "4"); code != 0 {
		t.Fatalf("simulate: %d %s", code, stderr)
	}
	truthDir := filepath.Join(simDir, "truth")
	tr, err := sim.ReadTruthDir(truthDir)
	if err != nil {
		t.Fatal(err)
	}
	// A sort folder whose units are the truth's.
	sorted := filepath.Join(dir, "sorted")
	os.Mkdir(sorted, 0o755)
	if err := export.WriteNPYFile(filepath.Join(sorted, "spike_times.npy"), []int{len(tr.SpikeTimes)}, tr.SpikeTimes); err != nil {
		t.Fatal(err)
	}
	if err := export.WriteNPYFile(filepath.Join(sorted, "spike_clusters.npy"), []int{len(tr.SpikeClusters)}, tr.SpikeClusters); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sorted, "params.py"), []byte("dat_path = 'x.bin'\nsample_rate = 30000.0\n"), 0o644)
	os.WriteFile(filepath.Join(sorted, compare.SortMarker), []byte("cluster_id\tKSLabel\n"), 0o644)

	code, want, stderr := dspk(t, "compare", "-truth", truthDir, sorted)
	if code != 0 || !strings.Contains(want, "well detected    4") {
		t.Fatalf("compare -truth sim/truth: exit %d\n%s\n%s", code, want, stderr)
	}
	for _, truth := range []string{simDir, simDir + string(filepath.Separator)} {
		code, got, stderr := dspk(t, "compare", "-truth", truth, sorted)
		if code != 0 || got != want {
			t.Errorf("compare -truth %s: exit %d, %s\n%s\nwant\n%s", truth, code, stderr, got, want)
		}
	}
	if got := compare.TruthDir(simDir); got != truthDir {
		t.Errorf("TruthDir(%s) = %s", simDir, got)
	}
	if got := compare.TruthDir(sorted); got != sorted {
		t.Errorf("TruthDir(%s) = %s: a sort folder is its own reference", sorted, got)
	}

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"compare", sorted}, []string{"-truth DIR", "simulate folder", "detect, sort or drift folder"}},
		{[]string{"compare", "-truth", simDir}, []string{"one detect, sort or drift folder", "got 0"}},
	} {
		code, _, stderr := dspk(t, c.args...)
		for _, w := range c.want {
			if code != 2 || !strings.Contains(stderr, w) {
				t.Errorf("%q: exit %d, %q lacks %q", c.args, code, stderr, w)
			}
		}
	}
}
