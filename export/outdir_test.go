package export

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
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
	d, err := NewOutputDir(final, "detect", false)
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
	if got := entries(t, final); len(got) != 2 || got[0] != ManifestName || got[1] != "spike_times.npy" {
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
	d, err := NewOutputDir(final, "detect", false)
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

// commitDir commits an OutputDir at final holding the given files.
func commitDir(t *testing.T, final string, overwrite bool, files ...string) {
	t.Helper()
	d, err := NewOutputDir(final, "detect", overwrite)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		writeFile(t, d.Path(f), f)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestOutputDirExisting(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "out")
	commitDir(t, final, false, "old.txt")

	_, err := NewOutputDir(final, "detect", false)
	if err == nil || !strings.Contains(err.Error(), "exists; use -overwrite") || !strings.Contains(err.Error(), final) {
		t.Fatalf("existing folder without overwrite: %v", err)
	}
	if got := entries(t, parent); len(got) != 1 {
		t.Errorf("refusal left %v", got)
	}

	// Overwrite: the old folder stays until Commit, then is replaced.
	d, err := NewOutputDir(final, "detect", true)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, d.Path("new.txt"), "new")
	if got := entries(t, final); len(got) != 2 || got[1] != "old.txt" {
		t.Errorf("old folder changed before Commit: %v", got)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, final); len(got) != 2 || got[1] != "new.txt" {
		t.Errorf("after overwrite the folder holds %v", got)
	}
	if got := entries(t, parent); len(got) != 1 {
		t.Errorf("parent holds %v after overwrite; want only out", got)
	}
}

// TestOutputDirOverwriteRefused checks every folder -overwrite must not
// replace: one dspk did not write, one with a file added, changed or
// replaced by a link, and each is left exactly as it was.
func TestOutputDirOverwriteRefused(t *testing.T) {
	cases := []struct {
		name, want string
		make       func(t *testing.T, final string)
	}{
		{"foreign folder", "not written by dspk", func(t *testing.T, final string) {
			os.Mkdir(final, 0o777)
			writeFile(t, filepath.Join(final, "notes.txt"), "my notes")
		}},
		{"empty foreign folder", "not written by dspk", func(t *testing.T, final string) { os.Mkdir(final, 0o777) }},
		{"file added", "which dspk did not", func(t *testing.T, final string) {
			commitDir(t, final, false, "a.npy")
			os.Mkdir(filepath.Join(final, ".phy"), 0o777)
			writeFile(t, filepath.Join(final, ".phy", "state.json"), "{}")
		}},
		{"empty sub-folder added", "holds the folder notes", func(t *testing.T, final string) {
			commitDir(t, final, false, "a.npy")
			os.Mkdir(filepath.Join(final, "notes"), 0o777)
		}},
		{"folder of another kind", "is a simulate folder", func(t *testing.T, final string) {
			d, err := NewOutputDir(final, "simulate", false)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, d.Path("rec.bin"), "data")
			if err := d.Commit(); err != nil {
				t.Fatal(err)
			}
		}},
		{"manifest without a kind", "older dspk", func(t *testing.T, final string) {
			commitDir(t, final, false, "a.npy")
			writeFile(t, filepath.Join(final, ManifestName), `{"format": "dspk output manifest 1", "files": []}`)
		}},
		{"file changed", "changed since", func(t *testing.T, final string) {
			commitDir(t, final, false, "a.npy")
			writeFile(t, filepath.Join(final, "a.npy"), "edited by hand")
		}},
		{"file replaced by a link", "", func(t *testing.T, final string) {
			commitDir(t, final, false, "a.npy")
			other := filepath.Join(filepath.Dir(final), "precious.txt")
			writeFile(t, other, "precious")
			os.Remove(filepath.Join(final, "a.npy"))
			if err := os.Symlink(other, filepath.Join(final, "a.npy")); err != nil {
				t.Skip(err)
			}
		}},
		{"bad manifest", "not a dspk manifest", func(t *testing.T, final string) {
			commitDir(t, final, false, "a.npy")
			writeFile(t, filepath.Join(final, ManifestName), "{}")
		}},
		{"symbolic link to a dspk folder", "symbolic link", func(t *testing.T, final string) {
			real := filepath.Join(filepath.Dir(final), "real")
			commitDir(t, real, false, "a.npy")
			if err := os.Symlink(real, final); err != nil {
				t.Skip(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			final := filepath.Join(parent, "out")
			c.make(t, final)
			before := snapshot(t, parent)
			_, err := NewOutputDir(final, "detect", true)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("overwrite: %v, want an error containing %q", err, c.want)
			}
			if after := snapshot(t, parent); after != before {
				t.Errorf("refused overwrite changed the folder:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// snapshot describes every path under dir with its size and content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, _ := os.Lstat(p)
		b.WriteString(rel + " " + fi.Mode().String())
		if fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			b.WriteString(" " + string(data) + fi.ModTime().String())
		}
		b.WriteString("; ")
		return nil
	})
	return b.String()
}

// TestOutputDirInputs checks that a folder holding an input of the run,
// the input itself or a parent of it is never replaced, however the path
// is spelled.
func TestOutputDirInputs(t *testing.T) {
	parent := t.TempDir()
	rec := filepath.Join(parent, "rec")
	commitDir(t, rec, false, "sim.bin", "sim.meta") // a dspk folder holding the input
	bin := filepath.Join(rec, "sim.bin")
	link := filepath.Join(parent, "link")
	if err := os.Symlink(rec, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(parent)
	for _, c := range []struct{ out, input string }{
		{rec, bin},
		{"rec", "rec/sim.bin"},
		{"rec/", "./rec/../rec/sim.bin"},
		{rec, filepath.Join(link, "sim.bin")},
		{rec, rec},
		{"rec", filepath.Join(parent, "rec", "sim.meta")},
	} {
		before := snapshot(t, parent)
		_, err := CreateOutputDir(c.out, OutputOptions{Kind: "detect", Overwrite: true, Inputs: []string{"other", c.input}})
		if err == nil || !strings.Contains(err.Error(), "holds the input") {
			t.Errorf("-o %s with input %s: %v", c.out, c.input, err)
		}
		if snapshot(t, parent) != before {
			t.Errorf("-o %s with input %s changed files", c.out, c.input)
		}
	}
	// A parent of the input's folder.
	top := filepath.Join(parent, "top")
	commitDir(t, top, false, "x")
	inner := filepath.Join(top, "inner")
	os.Mkdir(inner, 0o777)
	writeFile(t, filepath.Join(inner, "r.bin"), "data")
	if _, err := CreateOutputDir(top, OutputOptions{Kind: "detect", Overwrite: true, Inputs: []string{filepath.Join(inner, "r.bin")}}); err == nil || !strings.Contains(err.Error(), "holds the input") {
		t.Errorf("parent of the input: %v", err)
	}
	// A hard link of the input inside a dspk folder.
	det := filepath.Join(parent, "det")
	commitDir(t, det, false, "a")
	if err := os.Link(bin, filepath.Join(det, "hard.bin")); err == nil {
		if _, err := CreateOutputDir(det, OutputOptions{Kind: "detect", Overwrite: true, Inputs: []string{bin}}); err == nil {
			t.Error("folder holding a hard link of the input was replaced")
		}
	}
	// An unrelated dspk folder is replaced.
	other := filepath.Join(parent, "other")
	commitDir(t, other, false, "old")
	d, err := CreateOutputDir(other, OutputOptions{Kind: "detect", Overwrite: true, Inputs: []string{bin}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestOutputDirParents checks that Abort removes the parent folders the
// OutputDir created and keeps those that existed.
func TestOutputDirParents(t *testing.T) {
	parent := t.TempDir()
	d, err := NewOutputDir(filepath.Join(parent, "a", "b", "c", "out"), "detect", false)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, d.Path("x"), "x")
	if err := d.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, parent); len(got) != 0 {
		t.Errorf("Abort left %v", got)
	}
	os.Mkdir(filepath.Join(parent, "keep"), 0o777)
	d, err = NewOutputDir(filepath.Join(parent, "keep", "new", "out"), "detect", false)
	if err != nil {
		t.Fatal(err)
	}
	d.Abort()
	if got := entries(t, parent); len(got) != 1 || got[0] != "keep" || len(entries(t, filepath.Join(parent, "keep"))) != 0 {
		t.Errorf("Abort left %v", got)
	}
}

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip(err)
	}
	p.Wait()
	return p.Pid
}

// TestSweepStale checks that temporary folders of dead processes are
// removed by the next OutputDir beside them, and those of live ones (and
// foreign folders) are not.
func TestSweepStale(t *testing.T) {
	parent := t.TempDir()
	mk := func(name, lock string) string {
		p := filepath.Join(parent, name)
		os.Mkdir(p, 0o777)
		writeFile(t, filepath.Join(p, "part.npy"), "partial")
		if lock != "" {
			writeFile(t, filepath.Join(p, LockName), lock)
		}
		return p
	}
	dead := deadPID(t)
	local := func(pid int, start string) string {
		return fmt.Sprintf("%d\n%s\n%s\n%s\n%s\n", pid, bootID(), start, hostName(), pidNamespace())
	}
	old := time.Now().Add(-ForeignLockStale - time.Minute)
	age := func(p string) { os.Chtimes(filepath.Join(p, LockName), old, old) }
	mk(".det.tmp-0000dead", local(dead, ""))
	// Locks whose owner cannot be looked up from here (another boot or
	// host, another PID namespace, an older dspk's three lines) are stale
	// only once their heartbeat is old.
	age(mk(".det.tmp-0000b007", fmt.Sprintf("%d\nanother-boot\n\n%s\n%s\n", os.Getppid(), hostName(), pidNamespace())))
	boot := mk(".det.tmp-0000b008", fmt.Sprintf("%d\nanother-boot\n\n%s\n%s\n", dead, hostName(), pidNamespace()))
	host := mk(".det.tmp-0000f00d", fmt.Sprintf("%d\n%s\n\nanother-host\n%s\n", dead, bootID(), pidNamespace()))
	age(mk(".det.tmp-0000f00e", fmt.Sprintf("%d\n%s\n\nanother-host\n%s\n", os.Getppid(), bootID(), pidNamespace())))
	ns := mk(".det.tmp-0000a5a5", fmt.Sprintf("%d\n%s\n\n%s\npid:[1]\n", dead, bootID(), hostName()))
	legacy := mk(".det.tmp-00001e9a", fmt.Sprintf("%d\n%s\n\n", dead, bootID()))
	age(mk(".det.tmp-00001e9b", fmt.Sprintf("%d\n%s\n\n", os.Getppid(), bootID())))
	live := mk(".det.tmp-00001111", local(os.Getppid(), procStart(os.Getppid())))
	if procStart(os.Getppid()) != "" {
		mk(".det.tmp-00002222", local(os.Getppid(), "1")) // a reused id
	}
	foreign := mk(".det.tmp-00003333", "") // no lock, not empty
	other := mk(".notes.tmp-xyz", local(dead, ""))
	// An interrupted replacement: the old folder set aside, the final gone.
	aside := mk(".res.old-00004444", local(dead, ""))
	writeFile(t, filepath.Join(aside, ManifestName), "{}")

	d, err := NewOutputDir(filepath.Join(parent, "det"), "detect", false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	got := entries(t, parent)
	want := []string{filepath.Base(d.Dir()), filepath.Base(live), filepath.Base(foreign), filepath.Base(other), "res"}
	for _, p := range []string{boot, host, ns, legacy} {
		want = append(want, filepath.Base(p))
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after the sweep the parent holds %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(parent, "res", LockName)); err == nil {
		t.Error("restored folder keeps the stale lock")
	}
}

func TestOutputDirAppearedMeanwhile(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "out")
	d, err := NewOutputDir(final, "detect", false)
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
	if _, err := NewOutputDir(final, "detect", true); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("file at the final path with overwrite: %v", err)
	}
	for _, bad := range []string{"", ".", "..", "/", "a/.."} {
		if _, err := NewOutputDir(bad, "detect", true); err == nil {
			t.Errorf("output folder %q accepted", bad)
		}
	}
}

// TestOutputDirRelative commits a folder named relative to the working
// directory (no parent component).
func TestOutputDirRelative(t *testing.T) {
	t.Chdir(t.TempDir())
	d, err := NewOutputDir("res", "detect", false)
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

// TestSweepUnlockedGrace checks that a temporary folder without a lock is
// removed by a sweep only once it is older than unlockedGrace: a younger
// one may belong to a run that has not written its lock yet.
func TestSweepUnlockedGrace(t *testing.T) {
	parent := t.TempDir()
	fresh := filepath.Join(parent, ".det.tmp-00005555")
	stale := filepath.Join(parent, ".det.tmp-00006666")
	for _, p := range []string{fresh, stale} {
		if err := os.Mkdir(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-unlockedGrace - time.Minute)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	SweepStale(parent)
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh unlocked folder was swept: %v", err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("an unlocked folder older than the grace was kept")
	}
}
