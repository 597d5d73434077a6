package main

import (
	"dspk/batch"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// batchSortFlags are the sort flags of the batch sort test: not the
// defaults, so that the rows must get them from the plan to equal dspk
// sort.
var batchSortFlags = []string{"-Th_learned", "7", "-cluster_init_seed", "3", "-nblocks", "0"}

// TestBatchSort plans -kind sort over two small simulated recordings
// (one row each, no shards), runs the plan over two CPU processes and
// checks that each row's folder equals dspk sort with the same flags,
// every .npy and .tsv byte for byte (every file but dspk.json, the
// manifest and batch.json); a rerun runs nothing, batch status reports
// the rows, and a row whose worker is killed before it commits leaves no
// folder and is the only one a rerun sorts.
func TestBatchSort(t *testing.T) {
	useTestBinaryForTasks(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	var bins []string
	for i, name := range []string{"a", "b"} {
		d := filepath.Join(in, "day"+strconv.Itoa(i+1))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, sortRecordingOf(t, d, name+"_g0_t0", uint64(5+i)))
	}
	out := filepath.Join(dir, "out")
	plan, pl, stdout := planBatch(t, out, append(append([]string{"-kind", "sort", "-estimate-for", "cpu"}, batchSortFlags...), in)...)
	if pl.Kind != "sort" || pl.ShardSeconds != 0 || len(pl.Rows) != 2 {
		t.Fatalf("plan kind %q, shard_seconds %g, %d rows; want sort, 0, 2:\n%s", pl.Kind, pl.ShardSeconds, len(pl.Rows), stdout)
	}
	for _, a := range []string{"-Th_learned=7", "-cluster_init_seed=3", "-nblocks=0"} {
		if !slices.Contains(pl.Args(), a) {
			t.Errorf("plan args %q lack %s", pl.Args(), a)
		}
	}
	for i, r := range pl.Rows {
		// 32 sites and the sync channel; 2-s windows with 61-sample context.
		wantSecs, wantMem := batch.EstimateSort(10, 33, 30000, 60000, 61, false)
		if r.Step != batch.StepSort || r.Phase != 0 || r.Shards != 1 || len(r.Needs) != 0 || r.Windows != [2]int{0, r.Total} ||
			r.Total != 5 || r.Seconds != 10 || r.Channels != 33 || r.Files[0] != bins[i] {
			t.Errorf("row %d: %+v", i, r)
		}
		if r.EstSeconds != wantSecs || r.EstMemBytes != wantMem || r.EstSeconds != 60+10/0.5 { // sorts on the CPU at 0.5× real time
			t.Errorf("row %d: estimate %g s %d B, want %g s %d B", i, r.EstSeconds, r.EstMemBytes, wantSecs, wantMem)
		}
	}
	if !strings.Contains(stdout, "sort ") || !strings.Contains(stdout, "2 rows; plan written") {
		t.Errorf("printed plan:\n%s", stdout)
	}

	// SLURM: one array of both rows, its limits from the sort estimates.
	scripts, err := batch.WriteSlurm(pl, batch.SlurmOptions{GPUs: true, Executable: "/opt/dspk"})
	if err != nil {
		t.Fatal(err)
	}
	wantMiB := int64(math.Ceil(1.5 * float64(pl.Rows[0].EstMemBytes) / (1 << 20)))
	if len(scripts) != 1 || !slices.Equal(scripts[0].Rows, []int{0, 1}) || scripts[0].Time != "0:10:00" || scripts[0].MemMiB != wantMiB {
		t.Errorf("slurm scripts %+v, want one of rows 0,1, 0:10:00 and %d MiB", scripts, wantMiB)
	}

	code, stdout, stderr := dspk(t, "batch", "run", "-devices", "cpu,cpu", plan)
	if code != 0 || !strings.Contains(stdout, "2 rows ran, 0 were done already") {
		t.Fatalf("batch run: %d\n%s\n%s", code, stdout, stderr)
	}
	singles := make([]string, len(pl.Rows))
	for i, r := range pl.Rows {
		singles[i] = filepath.Join(dir, "single"+strconv.Itoa(i))
		args := append([]string{"sort", "-device", "cpu", "-o", singles[i]}, batchSortFlags...)
		if code, _, stderr := dspk(t, append(args, r.Files...)...); code != 0 {
			t.Fatalf("sort: %d %s", code, stderr)
		}
		names := sameFolders(t, r.Out, singles[i])
		for _, n := range []string{"spike_times.npy", "spike_clusters.npy", "templates.npy", "pc_features.npy", "amplitudes.npy",
			"cluster_KSLabel.tsv", "cluster_group.tsv", "params.py", "ops.npy", "sort_summary.png"} {
			if !slices.Contains(names, n) {
				t.Errorf("%s was not compared (the folder has %v)", n, names)
			}
		}
		js, err := os.ReadFile(filepath.Join(r.Out, "dspk.json"))
		if err != nil || !strings.Contains(string(js), `"kind": "sort"`) {
			t.Errorf("%s/dspk.json: %v %.200s", r.Out, err, js)
		}
		if !pl.Done(&pl.Rows[i]) {
			t.Errorf("row %d is not done after the run", i)
		}
	}
	// The flags reached the rows: a default sort of the first recording
	// differs.
	def := filepath.Join(dir, "default")
	if code, _, stderr := dspk(t, "sort", "-device", "cpu", "-o", def, bins[0]); code != 0 {
		t.Fatalf("sort: %d %s", code, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(def, "ops.npy"))
	b, _ := os.ReadFile(filepath.Join(pl.Rows[0].Out, "ops.npy"))
	if len(a) == 0 || string(a) == string(b) {
		t.Errorf("ops.npy of the default sort equals the row's: the plan's flags were not used")
	}

	code, stdout, stderr = dspk(t, "batch", "run", "-devices", "cpu", plan)
	if code != 0 || !strings.Contains(stdout, "0 rows ran, 2 were done already") {
		t.Errorf("second run: %d %q %q, want nothing to do", code, stdout, stderr)
	}
	code, stdout, _ = dspk(t, "batch", "task", "-device", "cpu", plan, "1")
	if code != 0 || !strings.Contains(stdout, "row 1 was done already") {
		t.Errorf("batch task of a done row: %d %q", code, stdout)
	}
	code, stdout, _ = dspk(t, "batch", "status", plan)
	if code != 0 || strings.Count(stdout, " sort ") != 2 || !strings.Contains(stdout, "2 rows: 2 done, 0 missing") {
		t.Errorf("status: %d\n%s", code, stdout)
	}

	// Kill the worker sorting row 1 after it has written every file but
	// before it commits: no folder, and a rerun sorts that row alone.
	victim := &pl.Rows[1]
	if err := os.RemoveAll(victim.Out); err != nil {
		t.Fatal(err)
	}
	kcode, kout, kerr := killRowMidWrite(t, plan, victim.Out, "1:60", "sort_summary.png")
	if kcode != 1 || !strings.Contains(kerr, "row 1 (sort") || !strings.Contains(kout, "0 rows ran, 1 were done already, 1 failed") {
		t.Errorf("killed run: exit %d\n%s\n%s", kcode, kout, kerr)
	}
	if _, err := os.Stat(victim.Out); err == nil {
		t.Errorf("%s exists after its row was killed", victim.Out)
	}
	code, stdout, _ = dspk(t, "batch", "status", plan)
	if code != 0 || !strings.Contains(stdout, "2 rows: 1 done, 0 missing, 1 writing") {
		t.Errorf("status after the kill: %d\n%s", code, stdout)
	}
	code, stdout, stderr = dspk(t, "batch", "run", "-devices", "cpu", plan)
	if code != 0 || !strings.Contains(stdout, "1 rows ran, 1 were done already") {
		t.Fatalf("rerun: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sameFolders(t, victim.Out, singles[1])
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(victim.Out), "."+filepath.Base(victim.Out)+".tmp-*")); len(left) != 0 {
		t.Errorf("the killed row's temporary folder is left after the rerun: %v", left)
	}
}

// TestBatchSortRefusals checks the flags a plan refuses for its kind,
// each with its reason and nothing written, and that a plan file of an
// unknown kind, or with a row of a step not of its kind, is refused.
func TestBatchSortRefusals(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	sortRecording(t, in)
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-kind", "sort", "-threshold", "8"}, "-threshold does not apply to -kind sort: sort's detection threshold is -Th_universal; use -Th_universal"},
		{[]string{"-kind", "sort", "-templates", in}, "-templates does not apply to -kind sort: sort learns its universal templates"},
		{[]string{"-kind", "sort", "-nblocks", "-1"}, "-nblocks -1: must be 0"},
		{[]string{"-Th_learned", "7"}, "-Th_learned does not apply to -kind detect: it is a flag of sort (plan with -kind sort)"},
		{[]string{"-kind", "detect", "-pc-overwrite"}, "-pc-overwrite does not apply to -kind detect"},
		{[]string{"-nblocks", "1"}, "-nblocks does not apply to -kind detect: a detect plan's rows do not correct motion"},
		{[]string{"-kind", "drift"}, `-kind "drift": detect or sort`},
	} {
		args := append(append([]string{"batch", "plan", "-o", out}, c.args...), in)
		code, _, stderr := dspk(t, args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: a refused plan wrote %s", c.args, out)
		}
	}
	// Sort's flags that are also detect's (the pipeline's) plan either kind.
	plan, pl, _ := planBatch(t, out, "-kind", "sort", "-Th_universal", "8", "-nskip", "5", "-tmax", "9", in)
	if !slices.Equal(pl.Args(), []string{"-Th_universal=8", "-nskip=5", "-tmax=9"}) {
		t.Errorf("args %q", pl.Args())
	}
	if r := pl.Rows[0]; len(pl.Rows) != 1 || r.Seconds != 9 || r.Step != batch.StepSort {
		t.Errorf("rows %+v", pl.Rows)
	}
	// Flags of the recording and the CAR reach the rows (in name order).
	out3 := filepath.Join(dir, "out3")
	if _, pl3, _ := planBatch(t, out3, "-kind", "sort", "-force-dtype", "-no-car", "-invert", in); !slices.Equal(pl3.Args(), []string{"-force-dtype=true", "-invert=true", "-no-car=true"}) {
		t.Errorf("args %v", pl3.Args())
	}
	// Flags the probe cannot honour are refused as sort refuses them.
	if code, _, stderr := dspk(t, "batch", "plan", "-o", filepath.Join(dir, "out4"), "-kind", "sort", "-groups", in); code == 0 || !strings.Contains(stderr, "-groups does not apply") {
		t.Errorf("-groups on a probe of one shank: exit %d %s", code, stderr)
	}
	b, _ := os.ReadFile(plan)
	for _, c := range []struct {
		edit func(m map[string]any)
		want string
	}{
		{func(m map[string]any) { m["kind"] = "drift" }, `kind "drift" is not supported (detect or sort)`},
		{func(m map[string]any) { m["rows"].([]any)[0].(map[string]any)["step"] = "shard" }, `row 0 has step "shard", not one of a sort plan`},
		{func(m map[string]any) { m["kind"] = "detect" }, `row 0 has step "sort", not one of a detect plan`},
	} {
		var m map[string]any
		json.Unmarshal(b, &m)
		c.edit(m)
		e, _ := json.Marshal(m)
		bad := filepath.Join(dir, "bad.json")
		os.WriteFile(bad, e, 0o644)
		if _, err := batch.Read(bad); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("readPlan: %v, want %q", err, c.want)
		}
		if code, _, stderr := dspk(t, "batch", "status", bad); code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("batch status: %d %q", code, stderr)
		}
	}
}
