package export

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// entries lists the names in dir, sorted.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o666); err != nil {
		t.Fatal(err)
	}
}

func TestOutputDirCommit(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "sub", "kilosort4")
	d, err := NewOutputDir(final, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	if d.Final() != final {
		t.Errorf("Final() = %s", d.Final())
	}
	tmp := d.Dir()
	if filepath.Dir(tmp) != filepath.Dir(final) || !strings.HasPrefix(filepath.Base(tmp), ".kilosort4.tmp-") {
		t.Errorf("temporary folder %s is not a hidden sibling of %s", tmp, final)
	}
	if d.Path("a.npy") != filepath.Join(tmp, "a.npy") {
		t.Errorf("Path = %s", d.Path("a.npy"))
	}
	if fi, err := os.Stat(tmp); err != nil || fi.Mode().Perm()&0o700 != 0o700 {
		t.Fatalf("temporary folder: %v %v", fi, err)
	}
	if err := WriteNPYFile(d.Path("spike_times.npy"), []int{2}, []int64{1, 2}); err != nil {
		t.Fatal(err)
	}
	// Nothing at the final path before Commit.
	if _, err := os.Stat(final); !os.IsNotExist(err) {
		t.Fatalf("final folder visible before Commit: %v", err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, final); len(got) != 1 || got[0] != "spike_times.npy" {
		t.Errorf("final folder holds %v", got)
	}
	if got := entries(t, filepath.Dir(final)); len(got) != 1 || got[0] != "kilosort4" {
		t.Errorf("parent holds %v after Commit; want only kilosort4", got)
	}
	if err := d.Abort(); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
	if _, err := os.Stat(final); err != nil {
		t.Errorf("Abort after Commit removed the result: %v", err)
	}
	if err := d.Commit(); err == nil {
		t.Error("second Commit succeeded")
	}
}

func TestOutputDirAbort(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "out")
	d, err := NewOutputDir(final, false)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, d.Path("x.txt"), "x")
	if err := os.Mkdir(d.Path("nested"), 0o777); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(d.Path("nested"), "y.txt"), "y")
	if err := d.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, parent); len(got) != 0 {
		t.Errorf("parent holds %v after Abort", got)
	}
	if err := d.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	if err := d.Abort(); err != nil {
		t.Errorf("second Abort: %v", err)
	}
}

func TestOutputDirExisting(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "out")
	if err := os.Mkdir(final, 0o777); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(final, "old.txt"), "old")

	_, err := NewOutputDir(final, false)
	if err == nil || !strings.Contains(err.Error(), "exists; use -overwrite") || !strings.Contains(err.Error(), final) {
		t.Fatalf("existing folder without overwrite: %v", err)
	}
	if got := entries(t, parent); len(got) != 1 {
		t.Errorf("refusal left %v", got)
	}

	// Overwrite: the old folder stays until Commit, then is replaced.
	d, err := NewOutputDir(final, true)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, d.Path("new.txt"), "new")
	if got := entries(t, final); len(got) != 1 || got[0] != "old.txt" {
		t.Errorf("old folder changed before Commit: %v", got)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, final); len(got) != 1 || got[0] != "new.txt" {
		t.Errorf("after overwrite the folder holds %v", got)
	}
	if got := entries(t, parent); len(got) != 1 {
		t.Errorf("parent holds %v after overwrite; want only out", got)
	}
}

func TestOutputDirAppearedMeanwhile(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "out")
	d, err := NewOutputDir(final, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	writeFile(t, d.Path("new.txt"), "new")
	if err := os.Mkdir(final, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("Commit over a folder created meanwhile: %v", err)
	}
	if got := entries(t, final); len(got) != 0 {
		t.Errorf("the other folder was changed: %v", got)
	}
	if err := d.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, parent); len(got) != 1 || got[0] != "out" {
		t.Errorf("parent holds %v", got)
	}
}

func TestOutputDirNotFolder(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "out")
	writeFile(t, final, "a file")
	if _, err := NewOutputDir(final, true); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("file at the final path with overwrite: %v", err)
	}
	for _, bad := range []string{"", ".", "..", "/", "a/.."} {
		if _, err := NewOutputDir(bad, true); err == nil {
			t.Errorf("output folder %q accepted", bad)
		}
	}
}

// TestOutputDirRelative commits a folder named relative to the working
// directory (no parent component).
func TestOutputDirRelative(t *testing.T) {
	t.Chdir(t.TempDir())
	d, err := NewOutputDir("res", false)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(d.Dir()) != "." {
		t.Errorf("temporary folder %s not in the working directory", d.Dir())
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, "."); len(got) != 1 || got[0] != "res" {
		t.Errorf("working directory holds %v", got)
	}
}
