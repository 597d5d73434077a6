package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
	"dspk/sim"
)

// TestCompareUnits scores constructed sort folders against a simulated
// truth: the truth itself relabelled (every unit well detected, found
// without -units through cluster_KSLabel.tsv), one unit split, and a
// folder without the marker, which needs -units.
func TestCompareUnits(t *testing.T) {
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
	write := func(name string, labels []int32, marker bool) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := export.WriteNPYFile(filepath.Join(d, "spike_times.npy"), []int{len(tr.SpikeTimes)}, tr.SpikeTimes); err != nil {
			t.Fatal(err)
		}
		if err := export.WriteNPYFile(filepath.Join(d, "spike_clusters.npy"), []int{len(labels)}, labels); err != nil {
			t.Fatal(err)
		}
		if name == "perfect" {
			if err := os.WriteFile(filepath.Join(d, "params.py"), []byte("dat_path = 'x.bin'\nsample_rate = 30000.0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if marker {
			if err := os.WriteFile(filepath.Join(d, sortMarker), []byte("cluster_id\tKSLabel\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	relabel := make([]int32, len(tr.SpikeClusters))
	split := make([]int32, len(tr.SpikeClusters))
	n0 := 0
	for i, c := range tr.SpikeClusters {
		relabel[i] = 7 - c
		split[i] = c
		if c == 0 {
			if n0%4 == 3 {
				split[i] = 9
			}
			n0++
		}
	}
	type report struct {
		NTruth       int      `json:"n_truth_units"`
		NSorted      int      `json:"n_sorted_units"`
		WellDetected int      `json:"well_detected"`
		Redundant    int      `json:"redundant"`
		Warnings     []string `json:"warnings"`
		Truth        []struct {
			Matched  int32   `json:"matched"`
			Accuracy float64 `json:"accuracy"`
		} `json:"truth_units"`
	}
	score := func(args ...string) report {
		t.Helper()
		code, stdout, stderr := dspk(t, append([]string{"compare", "-json", "-truth", truthDir}, args...)...)
		if code != 0 {
			t.Fatalf("compare %v: exit %d, %s", args, code, stderr)
		}
		var r report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		return r
	}
	perfect := write("perfect", relabel, true)
	if r := score(perfect); r.NTruth != 4 || r.NSorted != 4 || r.WellDetected != 4 || r.Truth[0].Matched != 7 || r.Truth[0].Accuracy != 1 {
		t.Errorf("perfect: %+v", r)
	}
	if r := score(write("split", split, true)); r.WellDetected != 3 || r.Redundant != 1 || r.Truth[0].Accuracy != float64(n0-n0/4)/float64(n0) {
		t.Errorf("split (%d spikes of unit 0): %+v", n0, r)
	}
	// Two sorts: the perfect one as the reference of the split one.
	code, stdout, stderr := dspk(t, "compare", "-json", "-truth", perfect, filepath.Join(dir, "split"))
	var two struct {
		NTruth    int     `json:"n_truth_units"`
		Redundant int     `json:"redundant"`
		Agreement float64 `json:"spike_agreement"`
	}
	if err := json.Unmarshal([]byte(stdout), &two); code != 0 || err != nil {
		t.Fatalf("two sorts: exit %d, %v, %s", code, err, stderr)
	}
	if want := float64(len(split)-n0/4) / float64(len(split)); two.NTruth != 4 || two.Redundant != 1 || two.Agreement != want {
		t.Errorf("two sorts: %+v, want agreement %v", two, want)
	}
	if code, stdout, _ := dspk(t, "compare", "-truth", perfect, perfect); code != 0 || !strings.Contains(stdout, "1.0000 of the reference sort's spikes") {
		t.Errorf("a sort against itself: exit %d\n%s", code, stdout)
	}
	// A reference sort without params.py is refused by name.
	if code, _, stderr := dspk(t, "compare", "-truth", filepath.Join(dir, "split"), perfect); code != 1 || !strings.Contains(stderr, "params.py") {
		t.Errorf("reference without params.py: exit %d, %s", code, stderr)
	}
	// Without the marker: -units turns unit scoring on; without it the
	// spike comparison runs and wants spike_positions.npy.
	plain := write("plain", relabel, false)
	if r := score("-units", plain); r.WellDetected != 4 {
		t.Errorf("-units: %+v", r)
	}
	if code, _, stderr := dspk(t, "compare", "-truth", truthDir, plain); code != 1 || !strings.Contains(stderr, "spike_positions.npy") {
		t.Errorf("spike mode on a folder without positions: exit %d, %s", code, stderr)
	}
	// -units=false on a sort folder: spike mode.
	if code, _, stderr := dspk(t, "compare", "-units=false", "-truth", truthDir, perfect); code != 1 || !strings.Contains(stderr, "spike_positions.npy") {
		t.Errorf("-units=false: exit %d, %s", code, stderr)
	}
	// The text report lists every truth unit.
	code, stdout, _ = dspk(t, "compare", "-truth", truthDir, perfect)
	if code != 0 || !strings.Contains(stdout, "well detected    4") || strings.Count(stdout, "\n") < 14 {
		t.Errorf("text report: exit %d\n%s", code, stdout)
	}
	// Bad input: label and time counts differ; bad flags.
	bad := write("bad", relabel[:len(relabel)-1], true)
	if code, _, stderr := dspk(t, "compare", "-truth", truthDir, bad); code != 1 || !strings.Contains(stderr, "spike_clusters.npy") {
		t.Errorf("short spike_clusters: exit %d, %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "compare", "-delta-time", "-1", "-truth", truthDir, perfect); code != 1 || !strings.Contains(stderr, "delta-time") {
		t.Errorf("negative -delta-time: exit %d, %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "compare", "-well-detected", "1.5", "-truth", truthDir, perfect); code != 1 || !strings.Contains(stderr, "well-detected") {
		t.Errorf("-well-detected 1.5: exit %d, %s", code, stderr)
	}
}
