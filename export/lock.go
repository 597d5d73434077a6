package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// LockName is the lock file inside a folder that a running dspk process
// is writing (an [OutputDir]'s temporary folder, or a folder of
// [CreateTempDir]). It holds three lines: the process id, the boot id of
// the machine (Linux's /proc/sys/kernel/random/boot_id, empty elsewhere)
// and the process start time in clock ticks after boot (field 22 of
// /proc/PID/stat, empty elsewhere). The owner is taken to be alive while a
// process of that id exists, on the same boot, with the same start time
// (so that a reused process id does not keep a stale folder alive).
const LockName = ".dspk-lock"

// staleName matches the temporary (".NAME.tmp-XXXXXXXX") and set-aside
// (".NAME.old-XXXXXXXX") folders of an OutputDir.
var staleName = regexp.MustCompile(`^\.(.+)\.(tmp|old)-[0-9a-f]{8}$`)

// writeLock writes dir's lock file for this process and checks that it is
// in place (a sweep of another run may remove a folder whose lock is not
// written yet; the caller then makes a new one).
func writeLock(dir string) error {
	pid := os.Getpid()
	s := fmt.Sprintf("%d\n%s\n%s\n", pid, bootID(), procStart(pid))
	path := filepath.Join(dir, LockName)
	if err := os.WriteFile(path, []byte(s), 0o666); err != nil {
		return err
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != s {
		return fmt.Errorf("lock %s vanished while it was written: %w", path, fs.ErrNotExist)
	}
	return nil
}

// lockOwner reads dir's lock file. ok is false when there is none or it
// cannot be parsed.
func lockOwner(dir string) (pid int, boot, start string, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, LockName))
	if err != nil {
		return 0, "", "", false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 3 {
		return 0, "", "", false
	}
	pid, err = strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return 0, "", "", false
	}
	return pid, strings.TrimSpace(lines[1]), strings.TrimSpace(lines[2]), true
}

// ownerDead reports whether the process that locked dir is certainly
// gone. A folder without a readable lock is not judged dead here.
func ownerDead(dir string) bool {
	pid, boot, start, ok := lockOwner(dir)
	if !ok {
		return false
	}
	if pid == os.Getpid() {
		return false
	}
	if cur := bootID(); boot != "" && cur != "" && boot != cur {
		return true // written before the last reboot
	}
	if !processExists(pid) {
		return true
	}
	if cur := procStart(pid); start != "" && cur != "" && start != cur {
		return true // the id now belongs to another process
	}
	return false
}

// SweepStale removes what killed dspk runs left in dir: temporary folders
// of OutputDirs whose lock names a process that is gone (and empty ones
// without a lock older than a minute), and set-aside old folders of an
// interrupted replacement whose lock is stale (removed when the new folder
// is in place, renamed back otherwise). Folders of live runs, and anything
// not named like an OutputDir's folders, are left alone. Errors are
// ignored: sweeping is a courtesy, not part of the run.
func SweepStale(dir string) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		m := staleName.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		switch m[2] {
		case "tmp":
			if ownerDead(p) {
				os.RemoveAll(p)
			} else if _, _, _, ok := lockOwner(p); !ok {
				removeUnlocked(p)
			}
		case "old":
			if !ownerDead(p) {
				continue
			}
			final := filepath.Join(dir, m[1])
			if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
				if os.Rename(p, final) == nil {
					os.Remove(filepath.Join(final, LockName))
				}
			} else if _, err := os.Stat(filepath.Join(p, ManifestName)); err == nil {
				os.RemoveAll(p)
			}
		}
	}
}

// removeUnlocked removes a temporary folder without a readable lock if it
// holds nothing else (its run was killed between creating it and writing
// the lock). A live run caught in that moment finds its lock gone and
// starts again with a new folder (see writeLock).
func removeUnlocked(p string) {
	es, err := os.ReadDir(p)
	if err != nil {
		return
	}
	for _, e := range es {
		if e.Name() != LockName {
			return
		}
	}
	os.RemoveAll(p)
}

// CreateTempDir creates a new folder in the system's temporary folder
// named prefix followed by random digits, holding a lock file, after
// removing the folders of that prefix that dead processes left (see
// [SweepTemp]). The caller removes it when done.
func CreateTempDir(prefix string) (string, error) {
	SweepTemp(prefix)
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if err := writeLock(d); err != nil {
		os.RemoveAll(d)
		return "", err
	}
	return d, nil
}

// SweepTemp removes the folders named prefix… in the system's temporary
// folder whose lock names a process that is gone.
func SweepTemp(prefix string) {
	dir := os.TempDir()
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			if p := filepath.Join(dir, e.Name()); ownerDead(p) {
				os.RemoveAll(p)
			}
		}
	}
}

// bootID returns the machine's boot id, or "" where it is unknown.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStart returns the start time of process pid in clock ticks after
// boot (field 22 of /proc/PID/stat), or "" where it is unknown.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19] // fields after ")" start at field 3
}
