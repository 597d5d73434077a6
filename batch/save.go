package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"dspk/export"
	"dspk/recording"
)

// Save writes the plan to path as dspk batch plan does, only where that
// harms nothing, and atomically ([Plan.Write]). It refuses a path that is
// an input of the plan or any existing file that is not a plan dspk
// wrote, and a plan file of other content unless overwrite (the same plan
// is rewritten); it refuses to plan into a folder that is a dspk output
// folder (it has a manifest) or into an output root that holds files
// other than plans. Folders it creates are removed again when the write
// fails.
func (pl *Plan) Save(path string, overwrite bool) error {
	path = filepath.Clean(path)
	b, err := pl.encode()
	if err != nil {
		return err
	}
	if err := pl.checkPlanPath(path, b, overwrite); err != nil {
		return err
	}
	if err := checkPlanFolder(pl.OutRoot, filepath.Dir(path)); err != nil {
		return err
	}
	created, err := export.MkdirParents(filepath.Dir(path))
	if err != nil {
		export.RemoveCreated(created)
		return fmt.Errorf("batch: writing the plan %s: %w", path, err)
	}
	if err := writeAtomic(path, b); err != nil {
		export.RemoveCreated(created)
		return err
	}
	pl.path = path
	return nil
}

// encode returns the plan as plan.json holds it.
func (pl *Plan) encode() ([]byte, error) {
	b, err := json.MarshalIndent(planFile{Format: planFormat, Kind: pl.Kind, OutRoot: pl.OutRoot, Inputs: pl.Inputs,
		Args: pl.Args(), ShardSeconds: pl.ShardSeconds, Rows: pl.Rows}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// planOut is what is said of a plan path or folder that is refused.
const planOut = "give -plan another file or -o another folder"

// checkPlanPath refuses path, the plan file to write with content b, when
// it is an input of the plan, exists as anything but a plan dspk wrote,
// or holds another plan and overwrite is not set.
func (pl *Plan) checkPlanPath(path string, b []byte, overwrite bool) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("batch: the plan file %s: %w", path, err)
	}
	for _, r := range pl.Rows {
		for _, f := range r.Files {
			for _, in := range []string{f, recording.MetaPath(f)} {
				if st, err := os.Stat(in); err == nil && os.SameFile(st, fi) {
					return fmt.Errorf("batch: the plan file %s is %s, an input of the plan; batch plan never writes over its inputs — %s",
						path, in, planOut)
				}
			}
		}
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("batch: the plan file %s exists and is not a regular file; batch plan does not replace it — %s", path, planOut)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("batch: the plan file %s: %w", path, err)
	}
	if !isPlan(old) {
		return fmt.Errorf("batch: %s exists and is not a plan dspk wrote; batch plan replaces only its own plans — %s", path, planOut)
	}
	if !bytes.Equal(old, b) && !overwrite {
		return fmt.Errorf("batch: %s holds another plan; use -overwrite to replace it, or %s", path, planOut)
	}
	return nil
}

// isPlan reports whether b is a plan file that dspk wrote.
func isPlan(b []byte) bool {
	var pf planFile
	return json.Unmarshal(b, &pf) == nil && pf.Format == planFormat
}

// checkPlanFolder refuses to plan into an output root outRoot or a plan
// folder dir that is a dspk output folder (it has a manifest: the plan
// would break it), and into an output root that holds files other than
// plans (its rows' folders would be mixed with the user's files). Hidden
// names and folders are not looked at.
func checkPlanFolder(outRoot, dir string) error {
	for _, d := range []string{outRoot, dir} {
		if _, err := os.Lstat(filepath.Join(d, export.ManifestName)); err == nil {
			return fmt.Errorf("batch: %s is a dspk output folder (it has %s); a plan there would break it — %s",
				d, export.ManifestName, planOut)
		}
	}
	es, err := os.ReadDir(outRoot)
	if err != nil {
		return nil // none yet, or the plan's write says why
	}
	for _, e := range es {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(outRoot, e.Name())
		if b, err := os.ReadFile(p); err != nil || !isPlan(b) {
			return fmt.Errorf("batch: the output root %s holds %s, which is not a file of a batch plan; plan into a new or empty folder (-o another folder)",
				outRoot, e.Name())
		}
	}
	return nil
}

// planWriter is what the plan's bytes are written through; tests replace
// it to fail a write.
var planWriter = func(f *os.File) io.Writer { return f }

// writeAtomic writes b to path through a temporary file in path's folder,
// synced and renamed over path; on failure the temporary file is removed
// and path is as it was.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("batch: writing the plan %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = planWriter(f).Write(b)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("batch: writing the plan %s: %w", path, err)
	}
	return nil
}
