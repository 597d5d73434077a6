package export

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockHolderHelper is not a test: run by TestLockOtherNamespace with
// DSPK_LOCK_HOLDER set to a folder, it creates an OutputDir there,
// prints its temporary folder and holds it until its standard input
// closes.
func TestLockHolderHelper(t *testing.T) {
	parent := os.Getenv("DSPK_LOCK_HOLDER")
	if parent == "" {
		t.Skip("helper process of TestLockOtherNamespace")
	}
	d, err := NewOutputDir(filepath.Join(parent, "det"), "detect", false)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(d.Dir())
	bufio.NewReader(os.Stdin).ReadString('\n')
	d.Abort()
}

// TestLockOtherNamespace runs a live OutputDir in another PID namespace
// (unshare --pid --fork, as a container would) and checks that a second
// run beside it leaves its temporary folder alone although the process
// id in the lock means nothing here, until the heartbeat is older than
// ForeignLockStale.
func TestLockOtherNamespace(t *testing.T) {
	parent := t.TempDir()
	var cmd *exec.Cmd
	var dir string
	for _, flags := range [][]string{{"--pid", "--fork"}, {"--user", "--map-root-user", "--pid", "--fork"}} {
		args := append(flags, os.Args[0], "-test.run=^TestLockHolderHelper$")
		c := exec.Command("unshare", args...)
		c.Env = append(os.Environ(), "DSPK_LOCK_HOLDER="+parent)
		in, err := c.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Skipf("unshare cannot run here: %v", err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, parent) {
			cmd, dir = c, line
			defer func() { in.Close(); c.Wait() }()
			break
		}
		in.Close()
		c.Wait()
	}
	if cmd == nil {
		t.Skip("this machine does not allow unshare --pid (as root or in a user namespace); the foreign-namespace lock rule is tested with written locks in TestSweepStale")
	}
	l, ok := lockOwner(dir)
	if !ok || l.pidns == pidNamespace() || l.local() {
		t.Fatalf("the helper's lock %+v (ok %v) does not name another PID namespace than ours (%s)", l, ok, pidNamespace())
	}
	SweepStale(parent)
	if _, err := os.Stat(filepath.Join(dir, LockName)); err != nil {
		t.Fatalf("a live run in another PID namespace lost its folder to the sweep: %v", err)
	}
	d, err := NewOutputDir(filepath.Join(parent, "det"), "detect", false)
	if err != nil {
		t.Fatal(err)
	}
	d.Abort()
	if _, err := os.Stat(filepath.Join(dir, LockName)); err != nil {
		t.Fatalf("a second run beside a live run in another PID namespace removed its folder: %v", err)
	}
	// A heartbeat older than the rule's limit makes the lock stale.
	old := time.Now().Add(-ForeignLockStale - time.Second)
	os.Chtimes(filepath.Join(dir, LockName), old, old)
	SweepStale(parent)
	if _, err := os.Stat(dir); err == nil {
		t.Error("a foreign lock whose heartbeat is older than ForeignLockStale was kept")
	}
}

// TestHeartbeat checks that an OutputDir's lock is refreshed while the
// folder is being written and that the heartbeat ends with Commit.
func TestHeartbeat(t *testing.T) {
	heartbeatEvery = 20 * time.Millisecond
	defer func() { heartbeatEvery = HeartbeatInterval }()
	parent := t.TempDir()
	d, err := NewOutputDir(filepath.Join(parent, "det"), "detect", false)
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(d.Dir(), LockName)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old)
	time.Sleep(200 * time.Millisecond)
	fi, err := os.Stat(lock)
	if err != nil || time.Since(fi.ModTime()) > time.Minute {
		t.Fatalf("the lock's heartbeat did not run: %v %v", fi.ModTime(), err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(parent, "det", LockName)); err == nil {
		t.Error("a lock came back after Commit")
	}
}

// TestCommitCancelled checks that a Commit whose context is done leaves
// an -overwrite target exactly as it was and writes nothing.
func TestCommitCancelled(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "out")
	commitDir(t, final, false, "a.npy")
	before := snapshot(t, parent)
	ctx, cancel := context.WithCancel(context.Background())
	d, err := CreateOutputDir(final, OutputOptions{Kind: "detect", Overwrite: true, Context: ctx})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, d.Path("b.npy"), "new")
	cancel()
	if err := d.Commit(); err != context.Canceled {
		t.Fatalf("Commit after cancel: %v, want context.Canceled", err)
	}
	d.Abort()
	if after := snapshot(t, parent); after != before {
		t.Errorf("a cancelled commit changed the target:\nbefore %s\nafter  %s", before, after)
	}
}

// TestOverwriteWithSubfolders checks that a folder whose sub-folders the
// manifest lists (simulate's truth/) is replaced by a run of its kind.
func TestOverwriteWithSubfolders(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "sim")
	for range 2 {
		d, err := NewOutputDir(final, "simulate", true)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(d.Path("truth/empty"), 0o777)
		writeFile(t, d.Path("truth/t.npy"), "t")
		if err := d.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewOutputDir(final, "detect", true); err == nil || !strings.Contains(err.Error(), "is a simulate folder") {
		t.Errorf("detect -overwrite of a simulate folder: %v", err)
	}
}
