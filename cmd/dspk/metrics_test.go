package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"dspk/export"
	"dspk/quality"
)

// sortedFolder sorts the small simulation of sortRecording into
// dir/sort and returns the folder.
func sortedFolder(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "sort")
	if code, _, stderr := dspk(t, "sort", "-device", "cpu", "-o", out, sortRecording(t, dir)); code != 0 {
		t.Fatalf("sort: exit %d: %s", code, stderr)
	}
	return out
}

// readColumn reads a two-column cluster table as id → text.
func readColumn(t *testing.T, path string) map[int]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		id, v, _ := strings.Cut(line, "\t")
		n, err := strconv.Atoi(id)
		if err != nil {
			t.Fatalf("%s: %q", path, line)
		}
		out[n] = v
	}
	return out
}

// replaceable fails the test unless dspk sort -overwrite would replace
// the folder dir (its manifest lists every file as it is).
func replaceable(t *testing.T, dir, when string) {
	t.Helper()
	d, err := export.NewOutputDir(dir, "sort", true)
	if err != nil {
		t.Fatalf("%s: sort -overwrite would refuse the folder: %v", when, err)
	}
	d.Abort()
}

// TestMetricsCommand checks the metrics of a sort folder: dspk sort
// writes them (without the nearest-neighbour metrics) and lists them in
// the manifest; dspk metrics adds or removes the nearest-neighbour
// tables, applies its thresholds, follows a curation of
// spike_clusters.npy and keeps the folder replaceable; a table dspk did
// not write is replaced only with -overwrite; bad input is named.
func TestMetricsCommand(t *testing.T) {
	dir := t.TempDir()
	s := sortedFolder(t, dir)
	for _, name := range []string{quality.LabelFile, quality.WideFile, "cluster_snr.tsv", "cluster_silhouette.tsv", "cluster_KSLabel.tsv"} {
		if !export.Lists(s, name) {
			t.Errorf("the sort folder's manifest does not list %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(s, "cluster_nn_hit_rate.tsv")); err == nil {
		t.Error("dspk sort wrote cluster_nn_hit_rate.tsv")
	}
	labels := readColumn(t, filepath.Join(s, quality.LabelFile))
	ks := readColumn(t, filepath.Join(s, "cluster_KSLabel.tsv"))
	if len(labels) == 0 || len(labels) != len(ks) {
		t.Fatalf("%d labels for %d Kilosort labels", len(labels), len(ks))
	}

	code, out, stderr := dspk(t, "metrics", "-pc-metrics", s)
	if code != 0 || !strings.Contains(out, strconv.Itoa(len(labels))+" units: ") || !strings.Contains(out, " good") {
		t.Fatalf("metrics -pc-metrics: exit %d, %q %s", code, out, stderr)
	}
	if !export.Lists(s, "cluster_nn_hit_rate.tsv") || len(readColumn(t, filepath.Join(s, "cluster_nn_miss_rate.tsv"))) != len(labels) {
		t.Error("metrics -pc-metrics: no listed nn tables")
	}
	replaceable(t, s, "after metrics -pc-metrics")
	if code, _, stderr := dspk(t, "metrics", s); code != 0 {
		t.Fatalf("metrics: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(s, "cluster_nn_hit_rate.tsv")); err == nil || export.Lists(s, "cluster_nn_hit_rate.tsv") {
		t.Error("metrics without -pc-metrics left the nn tables of the run before")
	}
	replaceable(t, s, "after metrics")

	// A threshold no unit passes: every unit that is not noise or
	// non-somatic is mua.
	if code, out, _ := dspk(t, "metrics", "-min-spikes", "1e9", s); code != 0 || !strings.Contains(out, ": 0 good") {
		t.Errorf("metrics -min-spikes 1e9: exit %d, %q", code, out)
	}
	for _, bad := range [][]string{{"-min-snr", "-1"}, {"-max-drift", "NaN"}, {}, {s, s}} {
		if code, _, _ := dspk(t, append([]string{"metrics"}, bad...)...); code != 2 {
			t.Errorf("metrics %v: exit %d, want 2", bad, code)
		}
	}

	// Curation in Phy: unit b merged into unit a in spike_clusters.npy.
	a, b := 0, 1
	spikes := readColumn(t, filepath.Join(s, "cluster_num_spikes.tsv"))
	x, err := export.ReadNPYFile(filepath.Join(s, "spike_clusters.npy"))
	if err != nil {
		t.Fatal(err)
	}
	cl, _ := x.Int64()
	merged := make([]int32, len(cl))
	for i, c := range cl {
		merged[i] = int32(c)
		if int(c) == b {
			merged[i] = int32(a)
		}
	}
	if err := export.WriteNPYFile(filepath.Join(s, "spike_clusters.npy"), []int{len(cl)}, merged); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := dspk(t, "metrics", s); code != 0 {
		t.Fatalf("metrics after curation: exit %d: %s", code, stderr)
	}
	after := readColumn(t, filepath.Join(s, "cluster_num_spikes.tsv"))
	na, _ := strconv.Atoi(spikes[a])
	nb, _ := strconv.Atoi(spikes[b])
	if _, ok := after[b]; ok || after[a] != strconv.Itoa(na+nb) || len(after) != len(spikes)-1 {
		t.Errorf("after merging %d into %d: %v (before %v)", b, a, after, spikes)
	}

	// A folder dspk did not write (no manifest): its tables are replaced
	// only with -overwrite.
	if err := os.Remove(filepath.Join(s, export.ManifestName)); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = dspk(t, "metrics", s)
	if code != 1 || !strings.Contains(stderr, "did not write") || !strings.Contains(stderr, s) {
		t.Errorf("metrics on tables dspk did not write: exit %d, %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "metrics", "-overwrite", s); code != 0 {
		t.Errorf("metrics -overwrite: exit %d: %s", code, stderr)
	}

	// Bad input: the error names the folder's file.
	if err := os.Remove(filepath.Join(s, "spike_times.npy")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = dspk(t, "metrics", s)
	if code != 1 || !strings.Contains(stderr, filepath.Join(s, "spike_times.npy")) {
		t.Errorf("metrics without spike_times.npy: exit %d, %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "metrics", filepath.Join(s, "params.py")); code != 1 || !strings.Contains(stderr, "not a folder") {
		t.Errorf("metrics on a file: exit %d, %s", code, stderr)
	}
}
