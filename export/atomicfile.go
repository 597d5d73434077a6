package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes b to path (mode 0644) through a temporary file
// in the same folder, renamed over path once complete, so that path holds
// the old content or the new one and never a part (a full disk, a kill;
// [AbortPending] removes the temporary file of a process that must exit
// at once). Once ctx is done (checked last just before the rename) it
// writes nothing. With noReplace, a path that exists by then is not
// replaced: the file is linked to its name, which fails if the name is
// taken.
func WriteFileAtomic(ctx context.Context, path string, b []byte, noReplace bool) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	pending.addTemp(tmp)
	defer RemoveTempDir(tmp) // gone already once renamed
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if noReplace {
		err = os.Link(tmp, path)
	} else {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
