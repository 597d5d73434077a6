package batch

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
)

// savePlan is testPlan with its input file (and .meta) made in a
// temporary folder and its output root there too.
func savePlan(t *testing.T) (*Plan, string) {
	t.Helper()
	dir := t.TempDir()
	pl := testPlan(t)
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	bin := filepath.Join(in, "run_g0_t0.imec0.ap.bin")
	for _, p := range []string{bin, strings.TrimSuffix(bin, ".bin") + ".meta"} {
		if err := os.WriteFile(p, []byte("data of "+p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range pl.Rows {
		pl.Rows[i].Files = []string{bin}
	}
	pl.OutRoot = filepath.Join(dir, "out")
	return pl, dir
}

// TestSaveRefuses checks that Plan.Save writes over no input, no file
// it did not write and no other plan (unless overwrite), plans into no
// dspk output folder or output root of the user's files, and that each
// refusal names the path and the way out and leaves the file as it was.
func TestSaveRefuses(t *testing.T) {
	pl, dir := savePlan(t)
	bin := pl.Rows[0].Files[0]
	user := filepath.Join(dir, "notes.txt")
	os.WriteFile(user, []byte("my notes"), 0o644)
	for _, c := range []struct{ path, want string }{
		{bin, "an input of the plan"},
		{strings.TrimSuffix(bin, ".bin") + ".meta", "an input of the plan"},
		{user, "is not a plan dspk wrote"},
	} {
		before, _ := os.ReadFile(c.path)
		err := pl.Save(c.path, true)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), "-plan another file") {
			t.Errorf("Save(%s): %v, want %q with the path and the way out", c.path, err, c.want)
		}
		if after, _ := os.ReadFile(c.path); !bytes.Equal(before, after) {
			t.Errorf("%s changed", c.path)
		}
	}
	path := filepath.Join(pl.OutRoot, "plan.json")
	if err := pl.Save(path, false); err != nil {
		t.Fatal(err)
	}
	if err := pl.Save(path, false); err != nil {
		t.Errorf("the same plan again: %v", err)
	}
	first, _ := os.ReadFile(path)
	other := *pl
	other.ShardSeconds = 30
	if err := other.Save(path, false); err == nil || !strings.Contains(err.Error(), "another plan; use -overwrite") {
		t.Errorf("another plan over it: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(first, after) {
		t.Error("the refused plan changed plan.json")
	}
	if err := other.Save(path, true); err != nil {
		t.Errorf("another plan with overwrite: %v", err)
	}
	// An output root holding the user's file, and a dspk output folder.
	os.WriteFile(filepath.Join(pl.OutRoot, "results.csv"), []byte("x"), 0o644)
	if err := pl.Save(path, true); err == nil || !strings.Contains(err.Error(), "results.csv, which is not a file of a batch plan") {
		t.Errorf("output root with a user's file: %v", err)
	}
	det := filepath.Join(dir, "det")
	os.MkdirAll(det, 0o755)
	os.WriteFile(filepath.Join(det, export.ManifestName), []byte("{}"), 0o644)
	pl.OutRoot = det
	if err := pl.Save(filepath.Join(det, "plan.json"), true); err == nil || !strings.Contains(err.Error(), "is a dspk output folder") {
		t.Errorf("plan into a detect folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(det, "plan.json")); err == nil {
		t.Error("plan.json written into the detect folder")
	}
}

// TestSaveWriteFails fails the plan's write and checks that neither the
// temporary file nor the folders Save created remain.
func TestSaveWriteFails(t *testing.T) {
	pl, dir := savePlan(t)
	old := planWriter
	t.Cleanup(func() { planWriter = old })
	planWriter = func(*os.File) io.Writer { return failWriter{} }
	path := filepath.Join(pl.OutRoot, "sub", "plan.json")
	if err := pl.Save(path, false); err == nil || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("Save: %v", err)
	}
	if _, err := os.Stat(pl.OutRoot); err == nil {
		t.Errorf("%s left after a failed write", pl.OutRoot)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("%s holds %v", dir, es)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestSaveFullDisk writes a plan onto a 64-KiB tmpfs that cannot hold it
// (root only; skipped where mounting fails): nothing of it may remain.
func TestSaveFullDisk(t *testing.T) {
	pl, dir := savePlan(t)
	mnt := filepath.Join(dir, "mnt")
	os.MkdirAll(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	for len(pl.Rows) < 2000 { // well over 64 KiB of JSON
		pl.Rows = append(pl.Rows, pl.Rows[0])
	}
	pl.OutRoot = filepath.Join(mnt, "out")
	if err := pl.Save(filepath.Join(pl.OutRoot, "plan.json"), false); err == nil {
		t.Fatal("a plan larger than the disk was written")
	}
	if es, _ := os.ReadDir(mnt); len(es) != 0 {
		t.Errorf("the full disk holds %v", es)
	}
}
