package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordFiles checks that a file added, rewritten or removed after
// the commit and recorded with RecordFiles leaves the folder replaceable
// with overwrite, and that an unrecorded one does not.
func TestRecordFiles(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "out")
	d, err := NewOutputDir(final, "sort", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.tsv", "b.tsv"} {
		if err := os.WriteFile(d.Path(n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	replaceable := func() error {
		d, err := NewOutputDir(final, "sort", true)
		if err != nil {
			return err
		}
		return d.Abort()
	}
	if err := os.WriteFile(filepath.Join(final, "a.tsv"), []byte("changed, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(final, "c.html"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(final, "b.tsv")); err != nil {
		t.Fatal(err)
	}
	if err := replaceable(); err == nil {
		t.Fatal("a folder with unrecorded changes was accepted for overwrite")
	}
	if err := RecordFiles(final, "a.tsv", "b.tsv", "c.html"); err != nil {
		t.Fatal(err)
	}
	if err := replaceable(); err != nil {
		t.Fatalf("after RecordFiles: %v", err)
	}
	if !Lists(final, "c.html") || Lists(final, "b.tsv") || Lists(parent, "out") {
		t.Error("Lists disagrees with the manifest")
	}
	b, _ := os.ReadFile(filepath.Join(final, ManifestName))
	if strings.Contains(string(b), "b.tsv") || !strings.Contains(string(b), "c.html") {
		t.Errorf("manifest:\n%s", b)
	}
	for _, bad := range []string{"../x", "sub/x", ManifestName, ""} {
		if err := RecordFiles(final, bad); err == nil {
			t.Errorf("RecordFiles(%q) accepted", bad)
		}
	}
	if err := os.Mkdir(filepath.Join(final, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := RecordFiles(final, "d"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a folder: %v", err)
	}
	if err := RecordFiles(parent, "x"); err == nil {
		t.Error("a folder without a manifest was accepted")
	}
}
