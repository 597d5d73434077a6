package batch

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testPlan is a plan of a detection split in time: a global row, two
// shards and their merge.
func testPlan(t *testing.T) *Plan {
	t.Helper()
	o := DefaultOptions(KindDetect)
	o.Config.ThUniversal = 8
	pl := &Plan{Kind: KindDetect, OutRoot: "/out", Inputs: []string{"/in"}, Options: o, ShardSeconds: 60}
	row := Row{Recording: "run", Probe: "imec0", Files: []string{"/in/run_g0_t0.imec0.ap.bin"}, Shards: 1, Total: 10,
		Windows: [2]int{0, 10}, Seconds: 20, Channels: 385, Bytes: 1000, Out: "/out/imec0"}
	appendSplit(pl, row, shardRanges(10, 5), "/out/.dspk-batch/imec0", "", [3]string{StepGlobal, StepShard, StepMerge},
		func(wr [2]int) float64 { return float64(wr[1]-wr[0]) * 2 }, func(r *Row) { r.EstSeconds = 1 })
	return pl
}

// TestPlanFile checks that a plan written and read back is the same plan
// and writes the same bytes, with its options as flags.
func TestPlanFile(t *testing.T) {
	pl := testPlan(t)
	if got := []string{pl.Rows[0].Step, pl.Rows[1].Step, pl.Rows[2].Step, pl.Rows[3].Step}; !slices.Equal(got, []string{"global", "shard", "shard", "merge"}) ||
		!slices.Equal(pl.Rows[3].Needs, []int{0, 1, 2}) || pl.Rows[2].Windows != [2]int{5, 10} || pl.Rows[1].Bytes != 500 {
		t.Fatalf("rows %+v", pl.Rows)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	if err := pl.Write(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "{\n  \"format\": \"dspk-batch-plan/1\",\n  \"kind\": \"detect\",\n  \"out_root\": \"/out\",\n  \"inputs\": [\n    \"/in\"\n  ],\n  \"args\": [\n    \"-threshold=8\"\n  ],\n  \"shard_seconds\": 60,\n  \"rows\": [") {
		t.Errorf("plan.json:\n%.400s", b)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Options.Config != pl.Options.Config || back.Path() != path {
		t.Errorf("options %+v, want %+v", back.Options.Config, pl.Options.Config)
	}
	again := filepath.Join(dir, "again.json")
	if err := back.Write(again); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(again); !bytes.Equal(b, b2) {
		t.Errorf("written again:\n%s\nwant\n%s", b2, b)
	}
	// A plan of no flags stores null, as dspk batch plan always did.
	pl.Options = DefaultOptions(KindDetect)
	pl.Write(path)
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"args": null,`) {
		t.Errorf("plan of no flags:\n%.300s", b)
	}
}

// TestPlanRefused checks that Read refuses a plan file of another format
// or kind, rows out of order and needs of a phase not below.
func TestPlanRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	if err := testPlan(t).Write(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, c := range []struct {
		edit func(m map[string]any)
		want string
	}{
		{func(m map[string]any) { m["format"] = "x" }, `format "x"`},
		{func(m map[string]any) { m["kind"] = "drift" }, `kind "drift" is not supported`},
		{func(m map[string]any) { m["kind"] = "sort" }, `row 0 has step "global", not one of a sort plan`},
		{func(m map[string]any) { m["rows"].([]any)[1].(map[string]any)["id"] = 7 }, "row 1 has id 7"},
		{func(m map[string]any) { m["rows"].([]any)[1].(map[string]any)["needs"] = []int{2} }, "row 1 needs row 2"},
		{func(m map[string]any) { m["args"] = []string{"-Th_learned=7"} }, "the plan's flags"},
	} {
		var m map[string]any
		json.Unmarshal(b, &m)
		c.edit(m)
		e, _ := json.Marshal(m)
		os.WriteFile(path, e, 0o644)
		if _, err := Read(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}

// TestShardRanges checks that windows split into shards as evenly as
// possible, covering all once.
func TestShardRanges(t *testing.T) {
	for _, c := range []struct {
		n, per int
		want   [][2]int
	}{
		{10, 5, [][2]int{{0, 5}, {5, 10}}},
		{10, 4, [][2]int{{0, 3}, {3, 6}, {6, 10}}},
		{3, 10, [][2]int{{0, 3}}},
		{5, 0, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}},
	} {
		if got := shardRanges(c.n, c.per); !slices.Equal(got, c.want) {
			t.Errorf("shardRanges(%d, %d) = %v, want %v", c.n, c.per, got, c.want)
		}
	}
}

// TestEstimates checks the rules of docs/cluster-running.md: detection
// at 1× real time on the CPU and 100× on a GPU after 30 s; a sort at
// 0.5× and 10× after 60 s, with 2 GiB and 2 MB per second more memory.
func TestEstimates(t *testing.T) {
	cs, cm := Estimate(100, 385, 30000, 60000, 61, false)
	gs, gm := Estimate(100, 385, 30000, 60000, 61, true)
	if cs != 130 || gs != 31 || cm != gm || cm <= 1<<30 {
		t.Errorf("detect: %g s %d B on the CPU, %g s %d B on a GPU", cs, cm, gs, gm)
	}
	ss, sm := EstimateSort(100, 385, 30000, 60000, 61, false)
	if ss != 260 || sm != cm+2<<30+2e8 {
		t.Errorf("sort: %g s %d B", ss, sm)
	}
}

// TestSlurmLimits checks a phase's limits: 4× the longest estimate (at
// least 10 minutes) and 1.5× the largest memory (at least 2 GiB).
func TestSlurmLimits(t *testing.T) {
	tm, mib := slurmLimits([]*Row{{EstSeconds: 10, EstMemBytes: 1 << 20}})
	if tm != "0:10:00" || mib != 2048 {
		t.Errorf("small rows: %s %d MiB", tm, mib)
	}
	tm, mib = slurmLimits([]*Row{{EstSeconds: 3600, EstMemBytes: 4 << 30}, {EstSeconds: 60}})
	if tm != "4:00:00" || mib != 6144 {
		t.Errorf("large rows: %s %d MiB", tm, mib)
	}
	if id, st, ok := parseTaskState("123_4|RUNNING", "123"); !ok || id != 4 || st != "RUNNING" {
		t.Errorf("parseTaskState: %d %q %v", id, st, ok)
	}
	if _, _, ok := parseTaskState("124_4|RUNNING", "123"); ok {
		t.Error("another job's task parsed")
	}
}

// TestParseDevices checks the device lists of batch run.
func TestParseDevices(t *testing.T) {
	if d, err := ParseDevices("cpu, cuda:1"); err != nil || !slices.Equal(d, []string{"cpu", "cuda:1"}) {
		t.Errorf("%v %v", d, err)
	}
	for _, bad := range []string{"gpu", "cuda:x", ""} {
		if _, err := ParseDevices(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestServeNoSuchRow checks the worker protocol's answer to a row id the
// plan does not have.
func TestServeNoSuchRow(t *testing.T) {
	pl := testPlan(t)
	pl.OutRoot = t.TempDir()
	var out bytes.Buffer
	w := &Worker{}
	defer w.Close()
	if err := w.Serve(t.Context(), pl, "cpu", strings.NewReader("9\nx\n\n"), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "fail 9 no such row\nfail x no such row\n" {
		t.Errorf("answers %q", out.String())
	}
}

// TestFindRecordings checks that a raw file without a probe is refused
// naming it, and that an output root holding an input is refused.
func TestFindRecordings(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.bin"), make([]byte, 64), 0o644)
	if _, err := findRecordings([]string{dir}, false); err == nil || !strings.Contains(err.Error(), "a.bin: a raw data file whose probe") {
		t.Errorf("raw file without a probe: %v", err)
	}
	if f, err := findRecordings([]string{dir}, true); err != nil || len(f) != 1 || f[0].probe != "a" || f[0].rel != "." {
		t.Errorf("raw file with a probe: %+v %v", f, err)
	}
	empty := t.TempDir()
	if _, err := findRecordings([]string{empty}, false); err == nil || !strings.Contains(err.Error(), "nothing to sort") {
		t.Errorf("empty folder: %v", err)
	}
	if err := checkOutRoot(dir, []string{filepath.Join(dir, "sub")}); err == nil {
		t.Error("an output root holding an input was accepted")
	}
	if got := runFolder("/d/run_g0/run_g0_imec0", "run"); got != "/d" {
		t.Errorf("runFolder: %s", got)
	}
}
