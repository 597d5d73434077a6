package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dspk/export"
)

// TestBatchPlanRefuses runs the batch plan commands that used to destroy
// data or plan what detect refuses: each must fail naming the path (or
// flag) and the way out, and leave every file as it was.
func TestBatchPlanRefuses(t *testing.T) {
	dir := t.TempDir()
	bin := copyRec(t, dir, nil)
	in := filepath.Dir(bin)
	meta := strings.TrimSuffix(bin, ".bin") + ".meta"
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("my notes\n"), 0o644)
	out := filepath.Join(dir, "out")
	before := files(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-plan", bin}, "an input of the plan"},
		{[]string{"-plan", meta}, "an input of the plan"},
		{[]string{"-plan", notes}, notes + " exists and is not a plan dspk wrote"},
		{[]string{"-nearest_chans", "500"}, "-nearest_chans 500"},
	} {
		code, _, stderr := dspk(t, append(append([]string{"batch", "plan", "-o", out}, c.args...), in)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("batch plan %q: exit %d, want a refusal with %q: %s", c.args, code, c.want, stderr)
		}
	}
	if after := files(t, dir); after != before {
		t.Fatalf("a refused plan changed files:\nbefore\n%s\nafter\n%s", before, after)
	}
	// Another plan over plan.json: refused without -overwrite.
	plan, _, _ := planBatch(t, out, in)
	first, _ := os.ReadFile(plan)
	if code, _, stderr := dspk(t, "batch", "plan", "-o", out, in); code != 0 {
		t.Errorf("the same plan again: exit %d: %s", code, stderr)
	}
	code, _, stderr := dspk(t, "batch", "plan", "-o", out, "-threshold", "8", in)
	if now, _ := os.ReadFile(plan); code == 0 || !strings.Contains(stderr, plan+" holds another plan; use -overwrite") || !bytes.Equal(now, first) {
		t.Errorf("another plan over %s: exit %d: %s", plan, code, stderr)
	}
	if code, _, stderr := dspk(t, "batch", "plan", "-o", out, "-threshold", "8", "-overwrite", in); code != 0 {
		t.Errorf("another plan with -overwrite: exit %d: %s", code, stderr)
	}
	// Planning into a detect folder.
	det := filepath.Join(dir, "det")
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-o", det, bin); code != 0 {
		t.Fatalf("detect: %d %s", code, stderr)
	}
	code, _, stderr = dspk(t, "batch", "plan", "-o", det, in)
	if _, err := os.Stat(filepath.Join(det, "plan.json")); code == 0 || err == nil || !strings.Contains(stderr, det+" is a dspk output folder") {
		t.Errorf("plan into a detect folder: exit %d: %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-overwrite", "-o", det, bin); code != 0 {
		t.Errorf("detect -overwrite after the refused plan: %d %s", code, stderr)
	}
}

// TestBatchRunKeepsHandMade makes a row's output folder by hand with
// dspk detect: batch run must refuse to replace it (naming it and
// -overwrite), leave it as it was, and replace it with -overwrite.
func TestBatchRunKeepsHandMade(t *testing.T) {
	useTestBinaryForTasks(t)
	dir := t.TempDir()
	bin := copyRec(t, dir, nil)
	out := filepath.Join(dir, "out")
	plan, pl, _ := planBatch(t, out, filepath.Dir(bin))
	row := pl.Rows[0].Out
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-threshold", "8", "-o", row, bin); code != 0 {
		t.Fatalf("detect: %d %s", code, stderr)
	}
	before := files(t, row)
	code, _, stderr := dspk(t, "batch", "run", "-devices", "cpu", plan)
	if code == 0 || !strings.Contains(stderr, row+" exists and was not written by a batch row") || !strings.Contains(stderr, "-overwrite") {
		t.Errorf("batch run over a hand-made folder: exit %d: %s", code, stderr)
	}
	if after := files(t, row); after != before {
		t.Fatalf("batch run changed %s:\nbefore\n%s\nafter\n%s", row, before, after)
	}
	if code, stdout, stderr := dspk(t, "batch", "run", "-devices", "cpu", "-overwrite", plan); code != 0 || !strings.Contains(stdout, "1 rows ran") {
		t.Errorf("batch run -overwrite: exit %d: %s %s", code, stdout, stderr)
	}
	if code, stdout, stderr := dspk(t, "batch", "run", "-devices", "cpu", plan); code != 0 || !strings.Contains(stdout, "1 were done already") {
		t.Errorf("batch run again: exit %d: %s %s", code, stdout, stderr)
	}
}

// TestSignalAfterCommit signals a dspk process after its command returned
// successfully and before it exits: it must exit with the signal's status
// and say that its output is complete and kept.
func TestSignalAfterCommit(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	bin := copyRec(t, dir, nil)
	out := filepath.Join(dir, "out")
	t.Setenv("DSPK_TEST_LATE", "1")
	ch := startChild(t, dir, tmp, "batch", "plan", "-o", out, filepath.Dir(bin))
	if !ch.waitLine("dspk-test: command returned", 60*time.Second) {
		code, stderr := ch.wait()
		t.Fatalf("the command did not return (exit %d): %s", code, stderr)
	}
	ch.cmd.Process.Signal(syscall.SIGTERM)
	code, stderr := ch.wait()
	plan := filepath.Join(out, "plan.json")
	if code != 143 || !strings.Contains(stderr, "interrupted by SIGTERM after the work was done; "+plan+" is complete and kept") {
		t.Errorf("exit %d, want 143 and the complete message: %s", code, stderr)
	}
	if _, err := os.Stat(plan); err != nil {
		t.Error(err)
	}
}

// TestBatchWorkerDiesWithRun SIGKILLs a batch run while its worker holds
// a row: the worker must be gone within two seconds, and its temporary
// folder removed.
func TestBatchWorkerDiesWithRun(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	bin := copyRec(t, dir, nil)
	out := filepath.Join(dir, "out")
	plan, pl, _ := planBatch(t, out, filepath.Dir(bin))
	t.Setenv("DSPK_BATCH_TEST_PAUSE", "0:60")
	run, stderr := child(t, dir, tmp, "batch", "run", "-devices", "cpu", plan)
	row := pl.Rows[0].Out
	var pid int
	for deadline := time.Now().Add(60 * time.Second); pid == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			run.Process.Kill()
			run.Wait()
			t.Fatalf("the row never started writing: %s", stderr)
		}
		m, _ := filepath.Glob(filepath.Join(filepath.Dir(row), "."+filepath.Base(row)+".tmp-*", export.LockName))
		if len(m) > 0 && tmpHas(row, "spike_times.npy") {
			b, _ := os.ReadFile(m[0])
			pid, _ = strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
		}
	}
	if err := run.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	run.Wait()
	for deadline := time.Now().Add(2 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the worker %d still runs 2 s after its batch run was killed", pid)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(row), "."+filepath.Base(row)+".tmp-*")); len(m) > 0 {
		t.Errorf("the worker left %v", m)
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
