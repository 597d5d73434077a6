package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// ManifestName is the file every committed [OutputDir] holds: the kind of
// folder (the command that wrote it), and the list of the files and
// sub-folders dspk wrote into it, the files with their sizes and
// modification times. Only a folder of the same kind whose manifest lists
// every file and sub-folder in it, files unchanged, can be replaced with
// overwrite.
const ManifestName = ".dspk-manifest.json"

// manifestFormat identifies the manifest's layout; manifestFormat1 is the
// layout before the kind and the sub-folders were recorded.
const (
	manifestFormat  = "dspk output manifest 2"
	manifestFormat1 = "dspk output manifest 1"
)

// OutputDir is a results folder that is filled under a temporary name and
// appears under its final name only when committed, so that an interrupted
// run never leaves a half-written folder that looks complete.
//
// The temporary folder is a hidden sibling of the final one
// (".<name>.tmp-XXXXXXXX" in the same parent), so that the final rename is
// atomic on one file system. It holds a lock file naming the process that
// writes it (see [LockName]); temporary folders of processes that are gone
// (killed, or lost with a power cut) are removed by the next OutputDir
// created in the same parent. The usual pattern is
//
//	d, err := export.NewOutputDir(dir, overwrite)
//	if err != nil { … }
//	defer d.Abort() // no-op after a successful Commit
//	… write files at d.Path("spike_times.npy") …
//	return d.Commit()
type OutputDir struct {
	final   string
	tmp     string
	opt     OutputOptions
	created []string // parent folders this OutputDir created, deepest first
	hb      *heartbeat
	mu      sync.Mutex // held by Commit and Abort
	done    bool
}

// OutputOptions configures [CreateOutputDir].
type OutputOptions struct {
	// Kind names what the folder holds, as the command that writes it
	// ("detect", "preprocess", "simulate", "sort"); it is recorded in the
	// manifest and must not be empty.
	Kind string
	// Overwrite allows replacing an existing final folder, which must be
	// one an OutputDir of the same Kind committed (its manifest lists
	// every file and sub-folder in it, files unchanged) and must be none
	// of Inputs and hold none of them.
	Overwrite bool
	// Context, if not nil, is checked by [OutputDir.Commit] before each
	// step and last just before the final rename: once it is done, Commit
	// fails with its error, leaving an existing final folder as it was.
	Context context.Context
	// Inputs are the files and folders the run reads (recording, meta,
	// probe, templates, truth). The output folder may be none of them
	// and no folder that holds one of them, however the paths are spelled
	// (absolute or relative, through symbolic links, or bind mounts of the
	// same folder).
	Inputs []string
}

// NewOutputDir is [CreateOutputDir] with only the kind and overwrite
// options.
func NewOutputDir(final, kind string, overwrite bool) (*OutputDir, error) {
	return CreateOutputDir(final, OutputOptions{Kind: kind, Overwrite: overwrite})
}

// CreateOutputDir creates the temporary folder for the final folder path,
// creating the parent folders if needed (and removing them again on
// [OutputDir.Abort]). Unless opt.Overwrite is set it refuses a final path
// that already exists; with it an existing folder is replaced at
// [OutputDir.Commit] if dspk wrote it and it holds no input of the run;
// anything else is refused with the reason. Stale temporary folders of
// dead processes beside the final path are removed first.
func CreateOutputDir(final string, opt OutputOptions) (*OutputDir, error) {
	if final == "" {
		return nil, errors.New("export: empty output folder name")
	}
	final = filepath.Clean(final)
	parent, base := filepath.Split(final)
	if base == "" || base == "." || base == ".." {
		return nil, fmt.Errorf("export: %s cannot be an output folder name", final)
	}
	if parent == "" {
		parent = "."
	}
	if opt.Kind == "" {
		return nil, fmt.Errorf("export: output folder %s: no kind given", final)
	}
	if err := checkFinal(final, opt); err != nil {
		return nil, err
	}
	created, err := MkdirParents(parent)
	if err != nil {
		return nil, fmt.Errorf("export: creating output folder: %w", err)
	}
	SweepStale(parent)
	var tmp string
	for range 3 { // a concurrent sweep may take a folder before its lock is written
		tmp, err = mkdirUnique(filepath.Join(parent, "."+base+".tmp-"), true)
		if err != nil {
			break
		}
		if err = writeLock(tmp); err == nil {
			break
		}
		os.RemoveAll(tmp)
	}
	if err != nil {
		RemoveCreated(created)
		return nil, fmt.Errorf("export: creating output folder: %w", err)
	}
	d := &OutputDir{final: final, tmp: tmp, opt: opt, created: created, hb: startHeartbeat(filepath.Join(tmp, LockName))}
	pending.add(d)
	return d, nil
}

// MkdirParents creates dir and its missing parents and returns the ones
// it was to create, deepest first, with the error too, so that a caller
// can take back a creation that failed part-way with [RemoveCreated].
func MkdirParents(dir string) ([]string, error) {
	if exiting.Load() {
		return nil, fmt.Errorf("export: not creating %s: the process is exiting after an interrupt", dir)
	}
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	return missing, os.MkdirAll(dir, 0o777)
}

// RemoveCreated removes the folders in created (deepest first, as
// [MkdirParents] returns them) while they are empty; one already gone (a
// cleanup running beside this one removed it) does not stop it.
func RemoveCreated(created []string) {
	for _, d := range created {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
}

// checkFinal refuses an existing final path unless overwrite is set, it is
// a folder dspk wrote, unchanged, and it is not and holds no input.
func checkFinal(final string, opt OutputOptions) error {
	fi, err := os.Lstat(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("export: output folder: %w", err)
	}
	if err := checkInputs(final, fi, opt.Inputs); err != nil {
		return err
	}
	switch {
	case !opt.Overwrite:
		return fmt.Errorf("export: output folder %s exists; use -overwrite to replace it (only a folder dspk wrote can be replaced)", final)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("export: output path %s is a symbolic link; -overwrite replaces only a folder dspk wrote", final)
	case !fi.IsDir():
		return fmt.Errorf("export: output path %s exists and is not a folder", final)
	}
	return checkManifest(final, opt.Kind, opt.Inputs)
}

// checkInputs refuses a final path that is, holds or lies on the path of
// any input.
func checkInputs(final string, fi fs.FileInfo, inputs []string) error {
	fAbs, _ := filepath.Abs(final)
	fReal, err := filepath.EvalSymlinks(fAbs)
	if err != nil {
		fReal = fAbs
	}
	refuse := func(in string) error {
		return fmt.Errorf("export: output folder %s is or holds the input %s of this run; it cannot be replaced — choose another folder", final, in)
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		abs, _ := filepath.Abs(in)
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = abs
		}
		if within(abs, fAbs) || within(real, fReal) || within(abs, fReal) || within(real, fAbs) {
			return refuse(in)
		}
		// The same folder under another name (a bind mount or a second
		// link): compare the folders on the input's path by identity.
		for d := real; ; d = filepath.Dir(d) {
			if di, err := os.Stat(d); err == nil && os.SameFile(di, fi) {
				return refuse(in)
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return nil
}

// within reports whether path is dir or lies inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// manifest is the content of [ManifestName].
type manifest struct {
	Format string          `json:"format"`
	Kind   string          `json:"kind"`
	Dirs   []string        `json:"dirs"` // slash-separated, relative to the folder
	Files  []manifestEntry `json:"files"`
}

type manifestEntry struct {
	Path    string `json:"path"` // slash-separated, relative to the folder
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
}

// checkManifest refuses a folder that lacks a manifest, was written as
// another kind than kind, or holds anything the manifest does not list as
// it was written (a file or sub-folder added, a file changed or replaced,
// a symbolic link), or a hard link of an input.
func checkManifest(dir, kind string, inputs []string) error {
	mpath := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(mpath)
	if err != nil {
		return fmt.Errorf("export: output folder %s exists and was not written by dspk (no %s); -overwrite replaces only a folder dspk wrote — remove it yourself or choose another folder", dir, ManifestName)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Format != manifestFormat && m.Format != manifestFormat1 {
		return fmt.Errorf("export: output folder %s: %s is not a dspk manifest; the folder is not replaced", dir, mpath)
	}
	if m.Format == manifestFormat1 || m.Kind == "" {
		return fmt.Errorf("export: output folder %s was written by an older dspk that did not record what kind of folder it is; "+
			"-overwrite replaces only a %s folder — remove it yourself or choose another folder", dir, kind)
	}
	if m.Kind != kind {
		return fmt.Errorf("export: output folder %s is a %s folder (written by dspk %s); -overwrite replaces only a %s folder — "+
			"choose another folder", dir, m.Kind, m.Kind, kind)
	}
	listed := make(map[string]manifestEntry, len(m.Files))
	for _, e := range m.Files {
		listed[e.Path] = e
	}
	dirs := make(map[string]bool, len(m.Dirs))
	for _, d := range m.Dirs {
		dirs[d] = true
	}
	var inStats []fs.FileInfo
	for _, in := range inputs {
		if fi, err := os.Stat(in); err == nil {
			inStats = append(inStats, fi)
		}
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("export: output folder %s: %w", dir, err)
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." || rel == ManifestName || rel == LockName {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return fmt.Errorf("export: output folder %s: %w", dir, err)
		}
		if d.IsDir() {
			if !dirs[rel] {
				return fmt.Errorf("export: output folder %s holds the folder %s, which dspk did not make; -overwrite does not replace it — move it or choose another folder", dir, rel)
			}
			return nil
		}
		for _, s := range inStats {
			if os.SameFile(s, fi) {
				return fmt.Errorf("export: output folder %s holds %s, a link to an input of this run; it cannot be replaced", dir, rel)
			}
		}
		e, ok := listed[rel]
		switch {
		case !ok:
			return fmt.Errorf("export: output folder %s holds %s, which dspk did not write; -overwrite does not replace it — move the file or choose another folder", dir, rel)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("export: output folder %s: %s is not a regular file; the folder is not replaced", dir, rel)
		case fi.Size() != e.Size || fi.ModTime().UnixNano() != e.ModTime:
			return fmt.Errorf("export: output folder %s: %s changed since dspk wrote it; -overwrite does not replace it", dir, rel)
		}
		return nil
	})
}

// writeManifest lists the files and sub-folders of dir in its manifest,
// with the folder's kind.
func writeManifest(dir, kind string) error {
	m := manifest{Format: manifestFormat, Kind: kind, Dirs: []string{}, Files: []manifestEntry{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." || rel == ManifestName || rel == LockName {
			return nil
		}
		if d.IsDir() {
			m.Dirs = append(m.Dirs, rel)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		m.Files = append(m.Files, manifestEntry{Path: rel, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	sort.Strings(m.Dirs)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n'), 0o666)
}

// Final returns the path the folder will have after Commit.
func (d *OutputDir) Final() string { return d.final }

// Dir returns the temporary folder that files are written into before
// Commit.
func (d *OutputDir) Dir() string { return d.tmp }

// Path returns the path of the file name inside the temporary folder.
func (d *OutputDir) Path(name string) string { return filepath.Join(d.tmp, name) }

// Commit writes the manifest and moves the temporary folder to its final
// name. With overwrite, an existing final folder (checked again as at
// creation) is first renamed aside, and removed only after the new folder
// is in place; if the rename fails the old folder is restored. Commit
// fails if the final path appeared in the meantime and overwrite is not
// set. If the options' Context is done before the final rename (it is
// checked last just before it), Commit fails with its error and puts an
// old folder back: a cancelled run never replaces a folder. After Commit,
// Abort does nothing; a second Commit is an error.
func (d *OutputDir) Commit() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return fmt.Errorf("export: output folder %s already committed or aborted", d.final)
	}
	if err := d.ctxErr(); err != nil {
		return err
	}
	if err := checkFinal(d.final, d.opt); err != nil {
		return err
	}
	if err := writeManifest(d.tmp, d.opt.Kind); err != nil {
		return fmt.Errorf("export: committing %s: %w", d.final, err)
	}
	if err := d.ctxErr(); err != nil {
		return err
	}
	var aside string
	if _, err := os.Lstat(d.final); err == nil {
		// Reserve a unique name next to the final folder, lock the old
		// folder (so that no other run takes it for a stale one), then move
		// it there.
		parent, base := filepath.Split(d.final)
		if parent == "" {
			parent = "."
		}
		a, err := mkdirUnique(filepath.Join(parent, "."+base+".old-"), false)
		if err != nil {
			return fmt.Errorf("export: replacing %s: %w", d.final, err)
		}
		if err := writeLock(d.final); err != nil {
			return fmt.Errorf("export: replacing %s: %w", d.final, err)
		}
		if err := os.Rename(d.final, a); err != nil {
			os.Remove(filepath.Join(d.final, LockName))
			return fmt.Errorf("export: replacing %s: %w", d.final, err)
		}
		aside = a
	}
	restore := func() {
		if aside != "" {
			if os.Rename(aside, d.final) == nil {
				os.Remove(filepath.Join(d.final, LockName))
			}
		}
	}
	if err := d.ctxErr(); err != nil { // the last moment before the commit
		restore()
		return err
	}
	if err := os.Rename(d.tmp, d.final); err != nil {
		restore()
		return fmt.Errorf("export: committing %s: %w", d.final, err)
	}
	d.done = true
	d.stopHeartbeat()
	pending.remove(d, true)
	os.Remove(filepath.Join(d.final, LockName))
	if aside != "" {
		if err := os.RemoveAll(aside); err != nil {
			return fmt.Errorf("export: %s committed, but removing the old folder %s: %w", d.final, aside, err)
		}
	}
	return nil
}

// Abort removes the temporary folder and everything in it, and the parent
// folders CreateOutputDir created if they are empty. It does nothing after
// Commit or a previous Abort, so it can be deferred.
func (d *OutputDir) Abort() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return nil
	}
	d.done = true
	d.stopHeartbeat()
	pending.remove(d, false)
	// A goroutine of the run may still create a file in the folder while
	// it is removed (AbortPending beside a run that has not stopped yet),
	// which makes the removal of the folder fail: try again.
	var err error
	for range 3 {
		if err = os.RemoveAll(d.tmp); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("export: removing %s: %w", d.tmp, err)
	}
	RemoveCreated(d.created)
	return nil
}

// ctxErr returns the error of the options' Context, if it is done.
func (d *OutputDir) ctxErr() error {
	if d.opt.Context == nil {
		return nil
	}
	return d.opt.Context.Err()
}

// stopHeartbeat ends the heartbeat of the temporary folder's lock.
func (d *OutputDir) stopHeartbeat() { d.hb.Stop() }

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

// UpdateManifest records in the manifest of dir, a folder an OutputDir
// committed, the current size and modification time of its file name
// (slash-separated, relative to dir), after dspk rewrote that file whole
// (dspk plot redrawing a detect folder's raster), so that the folder can
// still be replaced with overwrite. A regular file at the top of dir that
// the manifest does not list yet (dspk plot drawing a sort folder's
// raster) is added. The manifest is replaced atomically.
func UpdateManifest(dir, name string) error {
	mpath := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(mpath)
	if err != nil {
		return err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Format != manifestFormat {
		return fmt.Errorf("export: %s is not a dspk manifest", mpath)
	}
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return err
	}
	found := false
	for i := range m.Files {
		if m.Files[i].Path == name {
			m.Files[i].Size, m.Files[i].ModTime = fi.Size(), fi.ModTime().UnixNano()
			found = true
		}
	}
	if !found {
		if !fi.Mode().IsRegular() || strings.Contains(name, "/") {
			return fmt.Errorf("export: %s does not list %s, and only a regular file at the top of the folder is added", mpath, name)
		}
		m.Files = append(m.Files, manifestEntry{Path: name, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()})
		sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+ManifestName+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(append(out, '\n')); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), mpath); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
