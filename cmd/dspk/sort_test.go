package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"dspk/export"
	"dspk/phy"
	"dspk/probe"
	"dspk/sim"
)

// sortRecording writes a 10-s SpikeGLX simulation of 8 units on the
// first 32 NP1 sites into dir and returns the .bin path.
func sortRecording(t *testing.T, dir string) string {
	t.Helper()
	return sortRecordingOf(t, dir, "s_g0_t0", 5)
}

// sortRecordingOf is sortRecording with the file's base name and the
// simulation's seed.
func sortRecordingOf(t *testing.T, dir, base string, seed uint64) string {
	t.Helper()
	p := probe.NP1()
	const n = 32
	p.Name = "np1-" + strconv.Itoa(n)
	p.X, p.Y, p.Shank, p.ChanMap = p.X[:n], p.Y[:n], p.Shank[:n], p.ChanMap[:n]
	p.NChanFile = n + 1
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Units, cfg.Seed, cfg.Probe = 10, 8, seed, p
	cfg.RateMin, cfg.RateMax = 20, 40
	bin, _, err := sim.WriteSpikeGLX(dir, base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestSortFolder runs dspk sort twice on the same recording: the folder
// holds every file of a Kilosort4 sort, readable and consistent, and
// every file but dspk.json and the manifest (times) has the same bytes.
// -overwrite replaces a sort folder; an existing folder is refused.
func TestSortFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("two sorts: skipped in -short mode")
	}
	dir := t.TempDir()
	bin := sortRecording(t, dir)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		code, out, stderr := dspk(t, "sort", "-device", "cpu", "-o", d, bin)
		if code != 0 {
			t.Fatalf("sort: exit %d: %s", code, stderr)
		}
		if !strings.Contains(out, "Sorted ") || !strings.Contains(out, "real time") {
			t.Errorf("closing line %q", out)
		}
		for _, s := range []string{"detection", "clustering spikes", "matching", "curation"} {
			if !strings.Contains(stderr, s) {
				t.Errorf("progress lacks %q:\n%s", s, stderr)
			}
		}
	}
	read := func(name string) *export.NPY {
		f, err := os.Open(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		x, err := export.ReadNPY(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return x
	}
	times, err := read("spike_times.npy").Int64()
	if err != nil {
		t.Fatal(err)
	}
	n := len(times)
	clu, _ := read("spike_clusters.npy").Int64()
	tpl, _ := read("spike_templates.npy").Int64()
	js, _ := os.ReadFile(filepath.Join(a, "dspk.json"))
	tm := read("templates.npy")
	N := tm.Shape[0]
	if n == 0 || N == 0 || len(clu) != n || len(tpl) != n || tm.Shape[1] != 61 || tm.Shape[2] != 32 {
		t.Fatalf("%d spikes, %d clusters, %d templates of shape %v", n, len(clu), len(tpl), tm.Shape)
	}
	t.Logf("%d spikes in %d units", n, N)
	if N < 4 {
		t.Errorf("%d units of 8", N)
	}
	for i := range n {
		if clu[i] != tpl[i] || clu[i] < 0 || int(clu[i]) >= N || times[i] < 0 || (i > 0 && times[i] < times[i-1]) {
			t.Fatalf("spike %d: time %d cluster %d template %d of %d", i, times[i], clu[i], tpl[i], N)
		}
	}
	for name, shape := range map[string][]int{
		"amplitudes.npy": {n}, "spike_positions.npy": {n, 2}, "pc_features.npy": {n, 6, 10},
		"spike_detection_templates.npy": {n}, "similar_templates.npy": {N, N}, "templates_ind.npy": {N, 32},
		"pc_feature_ind.npy": {N, 10}, "channel_map.npy": {32}, "channel_positions.npy": {32, 2},
		"whitening_mat.npy": {32, 32}, "whitening_mat_inv.npy": {32, 32},
	} {
		if got := read(name).Shape; !equalInts(got, shape) {
			t.Errorf("%s: shape %v, want %v", name, got, shape)
		}
	}
	for _, name := range []string{"cluster_KSLabel.tsv", "cluster_group.tsv", "cluster_ContamPct.tsv", "cluster_Amplitude.tsv"} {
		x, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(x), "\n"); lines != N+1 {
			t.Errorf("%s: %d lines for %d clusters", name, lines, N)
		}
	}
	for _, name := range []string{"params.py", "ops.npy", "dspk.json", "sort_summary.png", "probe.json", phy.DriftFile} {
		if st, err := os.Stat(filepath.Join(a, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, key := range []string{`"stages"`, `"clustering templates"`, `"motion"`, `"seconds"`, `"kind": "sort"`} {
		if !bytes.Contains(js, []byte(key)) {
			t.Errorf("dspk.json lacks %s", key)
		}
	}
	// Determinism.
	entries, _ := os.ReadDir(a)
	for _, e := range entries {
		if e.Name() == "dspk.json" || e.Name() == export.ManifestName {
			continue
		}
		x, err1 := os.ReadFile(filepath.Join(a, e.Name()))
		y, err2 := os.ReadFile(filepath.Join(b, e.Name()))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs (%v, %v)", e.Name(), err1, err2)
		}
	}
	// Existing folder refused; -overwrite replaces it.
	if code, _, stderr := dspk(t, "sort", "-device", "cpu", "-o", a, bin); code == 0 || !strings.Contains(stderr, "overwrite") {
		t.Errorf("sort into an existing folder: exit %d: %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "sort", "-device", "cpu", "-overwrite", "-o", a, bin); code != 0 {
		t.Errorf("sort -overwrite of a sort folder: exit %d: %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "sort", "-device", "cpu", "-nblocks", "-1", "-o", filepath.Join(dir, "c"), bin); code != 2 {
		t.Errorf("-nblocks -1: exit %d: %s", code, stderr)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
