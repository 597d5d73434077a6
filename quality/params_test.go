package quality

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSortFolderDatPath reads dat_path as a literal, a raw literal or a list
// of one, a name beginning or ending with r included.
func TestSortFolderDatPath(t *testing.T) {
	dir := t.TempDir()
	for _, lit := range []string{`'run.bar'`, `r'run.bar'`, `["run.bar"]`, `[r"run.bar"]`} {
		path := filepath.Join(dir, "params.py")
		if err := os.WriteFile(path, []byte("dat_path = "+lit+"\nsample_rate = 30000.0\ndtype = 'int16'\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := readParams(path)
		if err != nil || p.datPath != "run.bar" || p.itemSize != 2 {
			t.Errorf("dat_path = %s: %q, item size %d (%v)", lit, p.datPath, p.itemSize, err)
		}
	}
}
