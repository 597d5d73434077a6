package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/compare"
	"dspk/export"
	"dspk/sim"
)

// TestCompareUnits drives dspk compare's unit scoring on constructed sort
// folders against a simulated truth: a sort folder is scored unit by unit
// without -units (through its marker file), a folder without the marker
// needs -units, -units=false turns it off; the JSON and text reports, two
// sorts, and the flags' checks.
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
			if err := os.WriteFile(filepath.Join(d, compare.SortMarker), []byte("cluster_id\tKSLabel\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	relabel := make([]int32, len(tr.SpikeClusters))
	for i, c := range tr.SpikeClusters {
		relabel[i] = 7 - c
	}
	type report struct {
		NTruth       int      `json:"n_truth_units"`
		NSorted      int      `json:"n_sorted_units"`
		WellDetected int      `json:"well_detected"`
		Agreement    *float64 `json:"spike_agreement"`
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
	if r := score(perfect); r.NTruth != 4 || r.NSorted != 4 || r.WellDetected != 4 || r.Truth[0].Matched != 7 || r.Truth[0].Accuracy != 1 ||
		r.Agreement == nil || *r.Agreement != 1 || len(r.Warnings) != 0 {
		t.Errorf("perfect: %+v", r)
	}
	if code, stdout, _ := dspk(t, "compare", "-truth", perfect, perfect); code != 0 || !strings.Contains(stdout, "1.0000 of the reference sort's spikes") ||
		!strings.HasPrefix(stdout, "scored against a reference sort") {
		t.Errorf("a sort against itself: exit %d\n%s", code, stdout)
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
	// The text report lists every truth unit; the sort's spikes lie
	// inside the truth's recording, so there is no warning.
	code, stdout, stderr := dspk(t, "compare", "-truth", truthDir, perfect)
	if code != 0 || !strings.Contains(stdout, "well detected    4") || strings.Count(stdout, "\n") < 14 ||
		!strings.Contains(stdout, "1.0000 of the truth's spikes") || stderr != "" {
		t.Errorf("text report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A plain reference (spike_times.npy + spike_clusters.npy, no
	// params.py) is refused by name without -rate and scored with it;
	// bad flags.
	if code, _, stderr := dspk(t, "compare", "-truth", plain, perfect); code != 1 || !strings.Contains(stderr, "params.py") ||
		!strings.Contains(stderr, "-rate HZ") {
		t.Errorf("reference without params.py: exit %d, %s", code, stderr)
	}
	if code, stdout, stderr := dspk(t, "compare", "-rate", "30000", "-truth", plain, perfect); code != 0 ||
		!strings.Contains(stdout, "well detected    4") || stderr != "" {
		t.Errorf("reference without params.py, -rate 30000: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := dspk(t, "compare", "-delta-time", "-1", "-truth", truthDir, perfect); code != 1 || !strings.Contains(stderr, "delta-time") {
		t.Errorf("negative -delta-time: exit %d, %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "compare", "-well-detected", "1.5", "-truth", truthDir, perfect); code != 1 || !strings.Contains(stderr, "well-detected") {
		t.Errorf("-well-detected 1.5: exit %d, %s", code, stderr)
	}
}
