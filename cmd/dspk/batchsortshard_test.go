package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dspk/batch"
	"dspk/internal/gputest"
	"dspk/phy"
)

// TestBatchSortShards plans -kind sort -shard-length 4s over a 10-s
// recording (five 2-s windows: a global row, shards of windows 0-1, 1-3
// and 3-5, a merge), runs the plan over two CPU processes and checks that
// the merged folder equals dspk sort's byte for byte (every file but
// dspk.json, the manifest and batch.json), with motion correction
// (nblocks 1, the default) and without (nblocks 0).
func TestBatchSortShards(t *testing.T) {
	for _, nb := range []string{"1", "0"} {
		t.Run("nblocks"+nb, func(t *testing.T) { sortShardsExact(t, "cpu", "cpu,cpu", nb) })
	}
}

// TestBatchSortShardsGPU is TestBatchSortShards on cuda:0 (the plan's
// workers and dspk sort both on the GPU); it skips without one.
func TestBatchSortShardsGPU(t *testing.T) {
	gputest.Device(t)
	for _, nb := range []string{"1", "0"} {
		t.Run("nblocks"+nb, func(t *testing.T) { sortShardsExact(t, "cuda:0", "cuda:0,cuda:0", nb) })
	}
}

// sortShardsExact runs the check of TestBatchSortShards with dspk sort on
// device and the plan's workers on devices.
func sortShardsExact(t *testing.T, device, devices, nblocks string) {
	useTestBinaryForTasks(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := sortRecordingOf(t, in, "rec_g0_t0", 11)
	flags := []string{"-Th_learned", "7", "-nblocks", nblocks}
	out := filepath.Join(dir, "out")
	plan, pl, stdout := planBatch(t, out, append(append([]string{"-kind", "sort", "-shard-length", "4s", "-estimate-for", "cpu"}, flags...), in)...)
	steps := rowSteps(pl)
	want := []string{batch.StepSortGlobal, batch.StepSortShard, batch.StepSortShard, batch.StepSortShard, batch.StepSortMerge}
	if !slices.Equal(steps, want) || pl.ShardSeconds != 4 {
		t.Fatalf("steps %v, shard_seconds %g; want %v, 4:\n%s", steps, pl.ShardSeconds, want, stdout)
	}
	g, merge := pl.Rows[0], pl.Rows[4]
	if g.Phase != 0 || len(g.Needs) != 0 || merge.Phase != 2 || !slices.Equal(merge.Needs, []int{0, 1, 2, 3}) ||
		len(merge.Parts) != 3 || merge.Global != g.Out || !strings.Contains(g.Out, ".dspk-batch") ||
		merge.Out != filepath.Join(out, "rec_imec0") {
		t.Errorf("global %+v\nmerge %+v", g, merge)
	}
	full, _ := batch.EstimateSort(10, 33, 30000, 60000, 61, false)
	for k, wr := range [][2]int{{0, 1}, {1, 3}, {3, 5}} {
		s := pl.Rows[1+k]
		if s.Phase != 1 || s.Windows != wr || s.Total != 5 || !slices.Equal(s.Needs, []int{0}) || s.Global != g.Out ||
			merge.Parts[k] != s.Out || s.Seconds != float64(2*(wr[1]-wr[0])) {
			t.Errorf("shard %d: %+v", k, s)
		}
		if !(s.EstSeconds > 60 && s.EstSeconds < g.EstSeconds && g.EstSeconds < full) {
			t.Errorf("shard %d estimated %g s, the global step %g s, the whole sort %g s", k, s.EstSeconds, g.EstSeconds, full)
		}
	}

	code, stdout, stderr := dspk(t, "batch", "run", "-devices", devices, plan)
	if code != 0 || !strings.Contains(stdout, "5 rows ran, 0 were done already") {
		t.Fatalf("batch run: %d\n%s\n%s", code, stdout, stderr)
	}
	single := filepath.Join(dir, "single")
	if code, _, stderr := dspk(t, append(append([]string{"sort", "-device", device, "-o", single}, flags...), bin)...); code != 0 {
		t.Fatalf("sort: %d %s", code, stderr)
	}
	names := sameFolders(t, merge.Out, single)
	wantFiles := []string{"spike_times.npy", "spike_clusters.npy", "templates.npy", "pc_features.npy", "amplitudes.npy",
		"similar_templates.npy", "U.npy", "whitening_mat.npy", "wTEMP.npy", "cluster_KSLabel.tsv", "cluster_group.tsv",
		"params.py", "ops.npy", "sort_summary.png"}
	if nblocks != "0" {
		wantFiles = append(wantFiles, phy.DriftFile)
	}
	for _, n := range wantFiles {
		if !slices.Contains(names, n) {
			t.Errorf("%s was not compared (the folder has %v)", n, names)
		}
	}
	js, err := os.ReadFile(filepath.Join(merge.Out, "dspk.json"))
	if err != nil || !strings.Contains(string(js), `"kind": "sort"`) || !strings.Contains(string(js), `"matching"`) {
		t.Errorf("%s/dspk.json: %v %.300s", merge.Out, err, js)
	}
	for _, r := range pl.Rows {
		if !pl.Done(&r) {
			t.Errorf("row %d (%s) is not done after the run", r.ID, r.Step)
		}
	}
	code, stdout, stderr = dspk(t, "batch", "run", "-devices", devices, plan)
	if code != 0 || !strings.Contains(stdout, "0 rows ran, 5 were done already") {
		t.Errorf("second run: %d %q %q, want nothing to do", code, stdout, stderr)
	}
}
