package export

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// OutputDir is a results folder that is filled under a temporary name and
// appears under its final name only when committed, so that an interrupted
// run never leaves a half-written folder that looks complete.
//
// The temporary folder is a hidden sibling of the final one
// (".<name>.tmp-XXXX" in the same parent), so that the final rename is
// atomic on one file system. The usual pattern is
//
//	d, err := export.NewOutputDir(dir, overwrite)
//	if err != nil { … }
//	defer d.Abort() // no-op after a successful Commit
//	… write files at d.Path("spike_times.npy") …
//	return d.Commit()
type OutputDir struct {
	final     string
	tmp       string
	overwrite bool
	done      bool
}

// NewOutputDir creates the temporary folder for the final folder path,
// creating the parent folders if needed. Unless overwrite is set it refuses
// a final path that already exists; with overwrite an existing folder is
// replaced at [OutputDir.Commit], and an existing non-folder is refused.
func NewOutputDir(final string, overwrite bool) (*OutputDir, error) {
	if final == "" {
		return nil, errors.New("export: empty output folder name")
	}
	final = filepath.Clean(final)
	if err := checkFinal(final, overwrite); err != nil {
		return nil, err
	}
	parent, base := filepath.Split(final)
	if base == "" || base == "." || base == ".." {
		return nil, fmt.Errorf("export: %s cannot be an output folder name", final)
	}
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return nil, fmt.Errorf("export: creating output folder: %w", err)
	}
	tmp, err := mkdirUnique(filepath.Join(parent, "."+base+".tmp-"), true)
	if err != nil {
		return nil, fmt.Errorf("export: creating output folder: %w", err)
	}
	return &OutputDir{final: final, tmp: tmp, overwrite: overwrite}, nil
}

// checkFinal refuses an existing final path unless overwrite is set and it
// is a folder.
func checkFinal(final string, overwrite bool) error {
	fi, err := os.Lstat(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("export: output folder: %w", err)
	case !overwrite:
		return fmt.Errorf("export: output folder %s exists; use -overwrite to replace it", final)
	case !fi.IsDir():
		return fmt.Errorf("export: output path %s exists and is not a folder", final)
	}
	return nil
}

// Final returns the path the folder will have after Commit.
func (d *OutputDir) Final() string { return d.final }

// Dir returns the temporary folder that files are written into before
// Commit.
func (d *OutputDir) Dir() string { return d.tmp }

// Path returns the path of the file name inside the temporary folder.
func (d *OutputDir) Path(name string) string { return filepath.Join(d.tmp, name) }

// Commit moves the temporary folder to its final name. With overwrite, an
// existing final folder is first renamed aside, and removed only after the
// new folder is in place; if the rename fails the old folder is restored.
// Commit fails if the final path appeared in the meantime and overwrite is
// not set. After Commit, Abort does nothing; a second Commit is an error.
func (d *OutputDir) Commit() error {
	if d.done {
		return fmt.Errorf("export: output folder %s already committed or aborted", d.final)
	}
	if err := checkFinal(d.final, d.overwrite); err != nil {
		return err
	}
	var aside string
	if _, err := os.Lstat(d.final); err == nil {
		// Reserve a unique name next to the final folder, then move the
		// old folder there.
		parent, base := filepath.Split(d.final)
		if parent == "" {
			parent = "."
		}
		a, err := mkdirUnique(filepath.Join(parent, "."+base+".old-"), false)
		if err != nil {
			return fmt.Errorf("export: replacing %s: %w", d.final, err)
		}
		if err := os.Rename(d.final, a); err != nil {
			return fmt.Errorf("export: replacing %s: %w", d.final, err)
		}
		aside = a
	}
	if err := os.Rename(d.tmp, d.final); err != nil {
		if aside != "" {
			os.Rename(aside, d.final)
		}
		return fmt.Errorf("export: committing %s: %w", d.final, err)
	}
	d.done = true
	if aside != "" {
		if err := os.RemoveAll(aside); err != nil {
			return fmt.Errorf("export: %s committed, but removing the old folder %s: %w", d.final, aside, err)
		}
	}
	return nil
}

// Abort removes the temporary folder and everything in it. It does nothing
// after Commit or a previous Abort, so it can be deferred.
func (d *OutputDir) Abort() error {
	if d.done {
		return nil
	}
	d.done = true
	if err := os.RemoveAll(d.tmp); err != nil {
		return fmt.Errorf("export: removing %s: %w", d.tmp, err)
	}
	return nil
}

// mkdirUnique creates a folder named prefix followed by random hex digits,
// with mode 0777 less the umask (os.MkdirTemp would give 0700), and
// returns its name. With keep false the folder is removed again and only
// the reserved name is returned.
func mkdirUnique(prefix string, keep bool) (string, error) {
	for range 100 {
		name := fmt.Sprintf("%s%08x", prefix, rand.Uint32())
		err := os.Mkdir(name, 0o777)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if !keep {
			if err := os.Remove(name); err != nil {
				return "", err
			}
		}
		return name, nil
	}
	return "", fmt.Errorf("no free name %sXXXXXXXX", prefix)
}
