//go:build unix

package export

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSweepTempUnlocked checks that CreateTempDir names its folder with
// the process id, and that a later one removes a folder of that name
// left without a lock (a sim/ made again by an ending process) once its
// process is gone and it is a minute old, but keeps one of a live process,
// a fresh one and one not named so.
func TestSweepTempUnlocked(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	deadPID := strconv.Itoa(dead.Process.Pid)
	old := time.Now().Add(-2 * time.Minute)
	mk := func(name string, age time.Time) string {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(p, "sim"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, age, age)
		return p
	}
	stale := mk("dspk-demo-"+deadPID+"-123", old)
	fresh := mk("dspk-demo-"+deadPID+"-456", time.Now())
	live := mk("dspk-demo-1-789", old) // init is alive
	other := mk("dspk-demo-abc", old)
	d, err := CreateTempDir("dspk-demo-")
	if err != nil {
		t.Fatal(err)
	}
	defer RemoveTempDir(d)
	if !strings.HasPrefix(filepath.Base(d), "dspk-demo-"+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("CreateTempDir made %s, want the process id in its name", d)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s (no lock, process gone) was kept", stale)
	}
	for _, p := range []string{fresh, live, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
}
