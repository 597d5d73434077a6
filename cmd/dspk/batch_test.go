package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dspk/export"
	"dspk/sim"
)

// useTestBinaryForTasks makes batch run start this test binary as dspk
// (TestMain's DSPK_TEST_MAIN) for its task processes.
func useTestBinaryForTasks(t *testing.T) {
	t.Helper()
	old := taskCommand
	t.Cleanup(func() { taskCommand = old })
	taskCommand = func(args []string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "DSPK_TEST_MAIN=1", "DSPK_TEST_ARGS="+strings.Join(args, " "))
		return cmd
	}
}

// writeBatchRec writes a SpikeGLX recording of the golden probe (32
// sites) at 10 kHz into dir/<run>_g0/<run>_g0_imec<probe>/.
func writeBatchRec(t *testing.T, dir, run string, probeIdx int, seconds float64, seed uint64) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seconds = seconds
	cfg.SampleRate = 10000
	cfg.Units = 20
	cfg.Seed = seed
	cfg.Probe = goldenProbe()
	folder := filepath.Join(dir, run+"_g0", run+"_g0_imec"+string(rune('0'+probeIdx)))
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	base := run + "_g0_t0"
	bin, _, err := sim.WriteSpikeGLX(folder, base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if probeIdx != 0 { // WriteSpikeGLX names the probe imec0
		for _, ext := range []string{".bin", ".meta"} {
			from := filepath.Join(folder, base+".imec0.ap"+ext)
			to := filepath.Join(folder, base+".imec"+string(rune('0'+probeIdx))+".ap"+ext)
			if err := os.Rename(from, to); err != nil {
				t.Fatal(err)
			}
		}
		bin = filepath.Join(folder, base+".imec"+string(rune('0'+probeIdx))+".ap.bin")
	}
	return bin
}

// batchFlags are the detection flags of the batch tests: 2-s windows at
// 10 kHz, so that a 60-s recording has 30 windows and the global passes
// read windows 0 and 25.
var batchFlags = []string{"-batch", "20000"}

// sameFolders compares every file of want with got byte for byte, but
// dspk.json, the manifest and batch.json; it returns the names compared.
func sameFolders(t *testing.T, got, want string) []string {
	t.Helper()
	skip := map[string]bool{"dspk.json": true, export.ManifestName: true, batchFile: true}
	ents, err := os.ReadDir(want)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if skip[e.Name()] || e.IsDir() {
			continue
		}
		names = append(names, e.Name())
		a, err := os.ReadFile(filepath.Join(want, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(got, e.Name()))
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between %s and %s (%d and %d bytes)", e.Name(), got, want, len(b), len(a))
		}
	}
	gotEnts, _ := os.ReadDir(got)
	for _, e := range gotEnts {
		if _, err := os.Stat(filepath.Join(want, e.Name())); err != nil && !skip[e.Name()] {
			t.Errorf("%s has %s, %s has not", got, e.Name(), want)
		}
	}
	return names
}

// TestBatchShardsExact splits a 60-s recording in 3 time shards, runs the
// plan over two CPU processes and checks that the merged folder equals a
// single detect run byte for byte (every file but dspk.json); a second
// run does nothing.
func TestBatchShardsExact(t *testing.T) {
	useTestBinaryForTasks(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	bin := writeBatchRec(t, in, "rec", 0, 60, 3)
	single := filepath.Join(dir, "single")
	if code, _, stderr := dspk(t, append(append([]string{"detect", "-device", "cpu", "-o", single}, batchFlags...), bin)...); code != 0 {
		t.Fatalf("detect: %d %s", code, stderr)
	}
	out := filepath.Join(dir, "out")
	args := append([]string{"batch", "plan", "-o", out, "-shard-length", "20s"}, batchFlags...)
	code, stdout, stderr := dspk(t, append(args, in)...)
	if code != 0 {
		t.Fatalf("batch plan: %d %s", code, stderr)
	}
	plan := filepath.Join(out, "plan.json")
	pl, err := readPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, r := range pl.Rows {
		steps = append(steps, r.Step)
	}
	if !slices.Equal(steps, []string{"global", "shard", "shard", "shard", "merge"}) {
		t.Fatalf("plan steps %v, want global, 3 shards, merge:\n%s", steps, stdout)
	}
	for k, r := range pl.Rows[1:4] {
		if r.Windows != [2]int{10 * k, 10 * (k + 1)} || r.Total != 30 {
			t.Errorf("shard %d: windows %v of %d, want [%d %d) of 30", k, r.Windows, r.Total, 10*k, 10*(k+1))
		}
	}
	merged := pl.Rows[4].Out
	if want := filepath.Join(out, "rec_imec0"); merged != want {
		t.Errorf("merged folder %s, want %s (mirroring the input)", merged, want)
	}
	code, stdout, stderr = dspk(t, "batch", "run", "-devices", "cpu,cpu", plan)
	if code != 0 {
		t.Fatalf("batch run: %d %s %s", code, stdout, stderr)
	}
	names := sameFolders(t, merged, single)
	for _, n := range []string{"spike_times.npy", "pc_features.npy", "templates.npy", "whitening_mat.npy", "spike_clusters.npy", "wTEMP.npy"} {
		if !slices.Contains(names, n) {
			t.Errorf("%s was not compared (the folder has %v)", n, names)
		}
	}
	// Every shard holds spikes (the split is not trivial).
	for _, r := range pl.Rows[1:4] {
		_, n, err := shardSummary(r.Out)
		if err != nil || n == 0 {
			t.Errorf("shard %s: %d spikes, %v", r.Out, n, err)
		}
	}
	code, stdout, _ = dspk(t, "batch", "run", "-devices", "cpu", plan)
	if code != 0 || !strings.Contains(stdout, "0 rows ran, 5 were done already") {
		t.Errorf("second run: %d %q, want nothing to do", code, stdout)
	}
}
