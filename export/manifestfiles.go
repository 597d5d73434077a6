package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RecordFiles brings the manifest of dir, a folder an OutputDir
// committed, up to date for the files names (in dir itself) after dspk rewrote, added or removed them whole (dspk metrics
// recomputing a sort folder's tables, dspk report adding its page): a
// file that exists is listed with its current size and modification
// time, added if it was not listed; a file that is gone is taken off the
// list. The folder can then still be replaced with overwrite. A name must
// be a regular file directly in dir (no path, link or folder; not the
// manifest or the lock); the manifest is replaced atomically, and left as
// it was on any error.
func RecordFiles(dir string, names ...string) error {
	mpath := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(mpath)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Format != manifestFormat {
		return fmt.Errorf("export: %s is not a dspk manifest", mpath)
	}
	for _, name := range names {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || name == ManifestName || name == LockName {
			return fmt.Errorf("export: %s: %q cannot be listed in the manifest", dir, name)
		}
		i := slices.IndexFunc(m.Files, func(e manifestEntry) bool { return e.Path == name })
		fi, err := os.Lstat(filepath.Join(dir, name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if i >= 0 {
				m.Files = slices.Delete(m.Files, i, i+1)
			}
			continue
		case err != nil:
			return fmt.Errorf("export: %w", err)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("export: %s: %s is not a regular file; it is not listed in the manifest", dir, name)
		}
		e := manifestEntry{Path: name, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
		if i >= 0 {
			m.Files[i] = e
		} else {
			m.Files = append(m.Files, e)
		}
	}
	slices.SortFunc(m.Files, func(a, b manifestEntry) int { return strings.Compare(a.Path, b.Path) })
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+ManifestName+".tmp-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(append(out, '\n'))
	if werr == nil {
		werr = f.Chmod(0o644)
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("export: writing %s: %w", mpath, err)
	}
	if err := os.Rename(tmp, mpath); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("export: writing %s: %w", mpath, err)
	}
	return nil
}

// Lists reports whether the manifest of dir lists the file name (in dir
// itself): whether dspk wrote it there. A folder without a dspk manifest
// lists nothing.
func Lists(dir, name string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return false
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Format != manifestFormat {
		return false
	}
	return slices.ContainsFunc(m.Files, func(e manifestEntry) bool { return e.Path == name })
}
