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
	"sync"
	"time"
)

// LockName is the lock file inside a folder that a running dspk process
// is writing (an [OutputDir]'s temporary folder, or a folder of
// [CreateTempDir]). It holds five lines: the process id, the boot id of
// the machine (Linux's /proc/sys/kernel/random/boot_id, empty elsewhere),
// the process start time in clock ticks after boot (field 22 of
// /proc/PID/stat, empty elsewhere), the host name and the process's PID
// namespace (the target of /proc/self/ns/pid, empty elsewhere). While it
// writes, the owner refreshes the lock file's modification time (its
// heartbeat) every [HeartbeatInterval].
//
// Whether the owner is gone is decided as follows. A lock written on this
// host, boot and PID namespace is stale when no process of that id exists
// or the id now belongs to a process started at another time. Any other
// lock (another host or boot sharing the folder, a container in another
// PID namespace, a lock of an older dspk without the last two lines)
// names a process that cannot be looked up from here: it is stale only
// when its heartbeat is older than [ForeignLockStale]. A lock that cannot
// be read is never taken as stale.
const LockName = ".dspk-lock"

// HeartbeatInterval is how often the owner of a lock refreshes the lock
// file's modification time while it writes.
const HeartbeatInterval = 30 * time.Second

// heartbeatEvery is HeartbeatInterval; tests shorten it.
var heartbeatEvery = HeartbeatInterval

// ForeignLockStale is the age of the heartbeat after which a lock whose
// owner cannot be looked up from here (see [LockName]) is taken as stale:
// twenty missed heartbeats.
const ForeignLockStale = 10 * time.Minute

// staleName matches the temporary (".NAME.tmp-XXXXXXXX") and set-aside
// (".NAME.old-XXXXXXXX") folders of an OutputDir.
var staleName = regexp.MustCompile(`^\.(.+)\.(tmp|old)-[0-9a-f]{8}$`)

// writeLock writes dir's lock file for this process and checks that it is
// in place (a sweep of another run may remove a folder whose lock is not
// written yet; the caller then makes a new one).
func writeLock(dir string) error {
	pid := os.Getpid()
	s := fmt.Sprintf("%d\n%s\n%s\n%s\n%s\n", pid, bootID(), procStart(pid), hostName(), pidNamespace())
	path := filepath.Join(dir, LockName)
	if err := os.WriteFile(path, []byte(s), 0o666); err != nil {
		return err
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != s {
		return fmt.Errorf("lock %s vanished while it was written: %w", path, fs.ErrNotExist)
	}
	return nil
}

// lock is the content of a lock file.
type lock struct {
	pid                      int
	boot, start, host, pidns string
	legacy                   bool // three lines: no host or namespace recorded
	mtime                    time.Time
}

// lockOwner reads dir's lock file. ok is false when there is none or it
// cannot be parsed.
func lockOwner(dir string) (l lock, ok bool) {
	path := filepath.Join(dir, LockName)
	b, err := os.ReadFile(path)
	if err != nil {
		return lock{}, false
	}
	fi, err := os.Stat(path)
	if err != nil {
		return lock{}, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 3 {
		return lock{}, false
	}
	l.pid, err = strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || l.pid <= 0 {
		return lock{}, false
	}
	l.boot, l.start = strings.TrimSpace(lines[1]), strings.TrimSpace(lines[2])
	if len(lines) >= 5 {
		l.host, l.pidns = strings.TrimSpace(lines[3]), strings.TrimSpace(lines[4])
	} else {
		l.legacy = true
	}
	l.mtime = fi.ModTime()
	return l, true
}

// local reports whether l was written on this host, boot and PID
// namespace, where its process id can be looked up.
func (l lock) local() bool {
	return !l.legacy && l.host == hostName() && l.boot == bootID() && l.pidns == pidNamespace()
}

// ownerDead reports whether the process that locked dir is certainly
// gone, by the rule of [LockName]. A folder without a readable lock is
// not judged dead here.
func ownerDead(dir string) bool {
	l, ok := lockOwner(dir)
	if !ok {
		return false
	}
	if !l.local() {
		return time.Since(l.mtime) > ForeignLockStale
	}
	if l.pid == os.Getpid() {
		return false
	}
	if !processExists(l.pid) {
		return true
	}
	if cur := procStart(l.pid); l.start != "" && cur != "" && l.start != cur {
		return true // the id now belongs to another process
	}
	return false
}

// removeMu serialises RemoveTempDir.
var removeMu sync.Mutex

// heartbeat refreshes a lock file's modification time every
// [HeartbeatInterval] until stopped or until the file is gone.
type heartbeat struct {
	stop chan struct{}
	once sync.Once
}

// startHeartbeat starts the heartbeat of the lock file path.
func startHeartbeat(path string) *heartbeat {
	h := &heartbeat{stop: make(chan struct{})}
	go func() {
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				now := time.Now()
				if os.Chtimes(path, now, now) != nil {
					return
				}
			}
		}
	}()
	return h
}

// Stop ends the heartbeat; it may be called more than once and on nil.
func (h *heartbeat) Stop() {
	if h != nil {
		h.once.Do(func() { close(h.stop) })
	}
}

// SweepStale removes what killed dspk runs left in dir: temporary folders
// of OutputDirs whose lock is stale by the rule of [LockName] (and empty ones
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
			} else if _, ok := lockOwner(p); !ok {
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

// unlockedGrace is the age below which a temporary folder without a
// readable lock is left alone: a live run may be between creating it and
// writing its lock (or the lock may be half written), and a sweep that
// read it empty would otherwise remove it with whatever the run has
// written since.
const unlockedGrace = time.Minute

// removeUnlocked removes a temporary folder without a readable lock if it
// holds nothing else and is older than unlockedGrace (its run was killed
// between creating it and writing the lock).
func removeUnlocked(p string) {
	if fi, err := os.Stat(p); err != nil || time.Since(fi.ModTime()) < unlockedGrace {
		return
	}
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
// named prefix followed by random digits, holding a lock file whose
// heartbeat runs until the folder is removed, after removing the folders
// of that prefix that dead processes left (see [SweepTemp]). The caller
// removes it when done.
func CreateTempDir(prefix string) (string, error) {
	SweepTemp(prefix)
	d, err := os.MkdirTemp("", prefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	if err := writeLock(d); err != nil {
		os.RemoveAll(d)
		return "", err
	}
	startHeartbeat(filepath.Join(d, LockName)) // ends when the folder is removed
	pending.addTemp(d)
	return d, nil
}

// RemoveTempDir removes a folder of [CreateTempDir] and everything in it.
// Calls are serialised, so that one beside [AbortPending] finds the folder
// whole or gone.
func RemoveTempDir(dir string) error {
	removeMu.Lock()
	defer removeMu.Unlock()
	pending.removeTemp(dir)
	return os.RemoveAll(dir)
}

// SweepTemp removes the folders named prefix… in the system's temporary
// folder whose lock is stale by the rule of [LockName], and those without
// a readable lock (a process that was ending when a goroutine of it made
// the folder again) whose name holds the id of a process that no longer
// exists, untouched for a minute (prefixPID-XXXX, as [CreateTempDir]
// names them).
func SweepTemp(prefix string) {
	dir := os.TempDir()
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if ownerDead(p) || unlockedOfDead(p, strings.TrimPrefix(e.Name(), prefix)) {
			os.RemoveAll(p)
		}
	}
}

// unlockedOfDead reports whether the folder p of [CreateTempDir], of name
// rest after its prefix, has no lock, names a process (PID-…) that does not
// exist and has not been changed for a minute.
func unlockedOfDead(p, rest string) bool {
	if _, err := os.Lstat(filepath.Join(p, LockName)); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	id, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(id)
	if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processExists(pid) {
		return false
	}
	fi, err := os.Stat(p)
	return err == nil && time.Since(fi.ModTime()) > time.Minute
}

// bootID returns the machine's boot id, or "" where it is unknown.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// hostName returns the host's name, or "" where it is unknown.
func hostName() string {
	h, _ := os.Hostname()
	return h
}

// pidNamespace returns the PID namespace of this process (the target of
// /proc/self/ns/pid, such as "pid:[4026531836]"), or "" where it is
// unknown.
func pidNamespace() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return ns
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
