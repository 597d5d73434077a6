package main

import (
	"dspk/batch"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBatchSlurm runs a plan of seven rows — two probes of one SpikeGLX
// run, and a 60-s recording in three time shards (global, shards, merge)
// — on a real one-node SLURM started by scripts/slurm-local, and checks
// every output against the same plan run locally, byte for byte. One
// shard task is killed (SIGKILL) with its files written but not
// committed: no folder of it appears, the merge that depends on it is
// never run, and a second submission runs only those two rows. It needs
// root (the daemons) and DSPK_SLURM=1.
func TestBatchSlurm(t *testing.T) {
	if os.Getenv("DSPK_SLURM") == "" {
		t.Skip("set DSPK_SLURM=1 (as root) to start a one-node SLURM with scripts/slurm-local and submit a plan to it")
	}
	if out, err := exec.Command("../../scripts/slurm-local", "start").CombinedOutput(); err != nil {
		t.Fatalf("scripts/slurm-local start: %v\n%s", err, out)
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	exe := filepath.Join(dir, "dspk")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bin := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dspk %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	in := filepath.Join(dir, "in")
	writeBatchRec(t, filepath.Join(in, "day1"), "mouse", 0, 20, 5)
	writeBatchRec(t, filepath.Join(in, "day1"), "mouse", 1, 20, 6)
	writeBatchRec(t, filepath.Join(in, "day2"), "long", 0, 60, 7)
	plan := func(out string) *batch.Plan {
		bin(nil, append(append([]string{"batch", "plan", "-o", out, "-shard-length", "20s"}, batchFlags...), in)...)
		pl, err := batch.Read(filepath.Join(out, "plan.json"))
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	local, remote := plan(filepath.Join(dir, "local")), plan(filepath.Join(dir, "slurm"))
	if len(remote.Rows) != 7 {
		t.Fatalf("%d rows, want 7 (2 probes, global, 3 shards, merge)", len(remote.Rows))
	}
	bin(nil, "batch", "run", "-devices", "cpu", filepath.Join(local.OutRoot, "plan.json"))

	// A GPU asked of a node without one: sbatch's refusal, nothing queued.
	cmd := exec.Command(exe, "batch", "slurm", "-gpus", "-submit", filepath.Join(remote.OutRoot, "plan.json"))
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "sbatch") {
		t.Errorf("batch slurm -gpus on a node without GPUs: %v %s (want sbatch's error)", err, out)
	}
	os.Remove(filepath.Join(batch.SlurmDir(remote), "jobs.json"))

	victim := -1
	for _, r := range remote.Rows {
		if r.Step == batch.StepShard && r.Shard == 1 {
			victim = r.ID
		}
	}
	planFile := filepath.Join(remote.OutRoot, "plan.json")
	t0 := time.Now()
	bin([]string{fmt.Sprintf("DSPK_BATCH_TEST_PAUSE=%d:300", victim)}, "batch", "slurm", "-submit", planFile)
	// Wait for the victim to have written its files into its temporary
	// folder (it then pauses before committing), and kill it.
	vr := &remote.Rows[victim]
	deadline := time.Now().Add(90 * time.Second)
	for remote.State(vr) != "writing" || !tmpHas(vr.Out, "spike_times.npy") {
		if time.Now().After(deadline) {
			t.Fatalf("row %d never started writing:\n%s\n%s", victim, bin(nil, "batch", "status", planFile), slurmLogs(remote))
		}
		time.Sleep(200 * time.Millisecond)
	}
	jobs := readJobs(t, remote)
	task := ""
	for _, j := range jobs {
		for _, r := range j.Rows {
			if r == victim {
				task = fmt.Sprintf("%s_%d", j.Job, r)
			}
		}
	}
	if out, err := exec.Command("scancel", "--signal=KILL", task).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", task, err, out)
	}
	waitQueueEmpty(t, 120*time.Second)
	status := bin(nil, "batch", "status", planFile)
	t.Logf("after the kill (%.1f s):\n%s", time.Since(t0).Seconds(), status)
	for _, r := range remote.Rows {
		want := "done"
		if r.ID == victim || r.Step == batch.StepMerge {
			want = "missing"
		}
		if got := remote.State(&r); got != want && !(want == "missing" && got == "writing") {
			t.Errorf("row %d (%s) after the kill: %s, want %s", r.ID, r.Step, got, want)
		}
		if _, err := os.Stat(r.Out); want == "missing" && err == nil {
			t.Errorf("row %d: folder %s exists after its task was killed", r.ID, r.Out)
		}
	}
	// The rerun submits only the two missing rows.
	out := bin(nil, "batch", "slurm", "-submit", planFile)
	merge := len(remote.Rows) - 1
	if !strings.Contains(out, fmt.Sprintf("(rows %d)", victim)) || !strings.Contains(out, fmt.Sprintf("(rows %d)", merge)) || strings.Count(out, "phase ") != 4 {
		t.Errorf("rerun submitted:\n%s\nwant rows %d and %d only", out, victim, merge)
	}
	waitQueueEmpty(t, 120*time.Second)
	status = bin(nil, "batch", "status", planFile)
	t.Logf("after the rerun (%.1f s in all):\n%s", time.Since(t0).Seconds(), status)
	if !strings.Contains(status, "7 rows: 7 done") {
		t.Errorf("status after the rerun:\n%s", status)
	}
	for i, r := range remote.Rows {
		sameFolders(t, r.Out, local.Rows[i].Out)
	}
}

// tmpHas reports whether a temporary folder of out holds file.
func tmpHas(out, file string) bool {
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*", file))
	return len(m) > 0
}

func readJobs(t *testing.T, pl *batch.Plan) []batch.SlurmJob {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(batch.SlurmDir(pl), "jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var jobs []batch.SlurmJob
	if err := json.Unmarshal(b, &jobs); err != nil {
		t.Fatal(err)
	}
	return jobs
}

// waitQueueEmpty waits until squeue lists no job.
func waitQueueEmpty(t *testing.T, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		out, err := exec.Command("squeue", "-h").Output()
		if err == nil && strings.TrimSpace(string(out)) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still queued after %v:\n%s", limit, out)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// slurmLogs returns the SLURM logs of a plan's tasks, for a failure
// message.
func slurmLogs(pl *batch.Plan) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(pl.OutRoot, ".dspk-batch", "logs", "*.log"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		fmt.Fprintf(&b, "== %s\n%s\n", filepath.Base(f), data)
	}
	return b.String()
}
