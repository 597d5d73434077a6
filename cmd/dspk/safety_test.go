package main

import (
	"bytes"
	"dspk/batch"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain runs the test binary as dspk itself when DSPK_TEST_MAIN is
// set, so that the interrupt tests can signal a real dspk process.
func TestMain(m *testing.M) {
	if os.Getenv("DSPK_TEST_MAIN") != "" {
		if os.Getenv("DSPK_TEST_PROGRESS") != "" {
			progressInterval = 0 // a progress line after every window, for the interrupt tests to act on
			signalsReady = func() { fmt.Fprintln(os.Stderr, "dspk-test: signals caught") }
		}
		if os.Getenv("DSPK_TEST_LATE") != "" {
			afterCommand = func() { // the test signals the process here
				fmt.Fprintln(os.Stderr, "dspk-test: command returned")
				time.Sleep(5 * time.Second)
			}
		}
		args := strings.Fields(os.Getenv("DSPK_TEST_ARGS"))
		if i := slices.Index(os.Args, "--"); i > 0 {
			args = os.Args[i+1:] // a batch worker's arguments (useTestBinaryForTasks)
		}
		useTestBinaryAsWorker()
		os.Args = append([]string{"dspk"}, args...)
		main()
		return
	}
	os.Exit(m.Run())
}

// useTestBinaryAsWorker makes a batch run of the re-executed dspk start
// the test binary as dspk for its workers, as useTestBinaryForTasks does
// in the test process.
func useTestBinaryAsWorker() {
	old, exe := newRunner, os.Args[0]
	newRunner = func() *batch.Runner {
		r := old()
		r.Executable = exe
		r.WorkerArgs = func(device, plan string) []string {
			return append([]string{"-test.run=^$", "--"}, batch.WorkerArgs(device, plan)...)
		}
		return r
	}
}

// TestNoSequenceLosesData runs the command sequences of the issue that
// used to delete the user's files, and checks that every file stays
// byte-identical, while replacing a folder dspk wrote still works.
func TestNoSequenceLosesData(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	if code, _, stderr := dspk(t, "simulate", "-o", rec, "-duration", "1s", "-units", "5"); code != 0 {
		t.Fatalf("simulate: %d %s", code, stderr)
	}
	bin := filepath.Join(rec, simBase+".imec0.ap.bin")
	before := tree(t, dir)
	for _, args := range [][]string{
		{"detect", "-device", "cpu", "-overwrite", "-o", rec, bin},
		{"preprocess", "-device", "cpu", "-save-data", "-overwrite", "-o", rec, bin},
		{"detect", "-device", "cpu", "-overwrite", "-o", dir, bin},
		{"detect", "-device", "cpu", "-overwrite", "-o", filepath.Join(rec, "truth"), bin},
		{"simulate", "-overwrite", "-duration", "1s", "-o", filepath.Join(rec, "truth")},
		{"simulate", "-overwrite", "-duration", "1s", "-o", dir},
	} {
		code, _, stderr := dspk(t, args...)
		if code == 0 {
			t.Errorf("%v succeeded", args)
		}
		if after := tree(t, dir); after != before {
			t.Fatalf("%v (exit %d, %s) changed files:\nbefore\n%s\nafter\n%s", args, code, stderr, before, after)
		}
	}
	// A detection folder, curated in Phy afterwards, is not replaced.
	det := copyRec(t, t.TempDir(), nil)
	out := filepath.Join(dir, "det")
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-o", out, det); code != 0 {
		t.Fatalf("detect: %d %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-overwrite", "-o", out, det); code != 0 {
		t.Fatalf("detect -overwrite of its own folder: %d %s", code, stderr)
	}
	os.WriteFile(filepath.Join(out, "cluster_group.tsv"), []byte("cluster_id\tgroup\n"), 0o644)
	before = tree(t, dir)
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-overwrite", "-o", out, det); code != 1 || !strings.Contains(stderr, "cluster_group.tsv") {
		t.Errorf("detect -overwrite of a curated folder: %d %s", code, stderr)
	}
	if tree(t, dir) != before {
		t.Error("the curated folder changed")
	}
}

// child starts the test binary as "dspk args…" in dir with TMPDIR set
// to tmp.
func child(t *testing.T, dir, tmp string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DSPK_TEST_MAIN=1", "DSPK_TEST_ARGS="+strings.Join(args, " "), "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// hidden lists the names under dir that start with a dot or end in .tmp.
func hidden(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir && filepath.Dir(p) == dir && strings.HasPrefix(d.Name(), "dspk-demo-") && d.IsDir() {
			out = append(out, p) // a demo's temporary folder
		}
		if err == nil && p != dir && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".dspk-manifest.json" || strings.Contains(d.Name(), ".tmp")) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// waitFor polls until a hidden temporary folder appears under dir (the
// run is writing) or the timeout passes.
func waitFor(dir string, timeout time.Duration) bool {
	end := time.Now().Add(timeout)
	for time.Now().Before(end) {
		if len(hidden(dir)) > 0 {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// TestInterrupts signals real dspk processes (the test binary re-executed
// as dspk) at several points of detect, preprocess, simulate and demo: a
// SIGINT or SIGTERM must stop the run with 130 or 143, say what it
// interrupted and leave nothing; after a SIGKILL the next run writing
// beside the remains must remove them. Nothing partial or hidden may
// remain at the end.
func TestInterrupts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dspk processes")
	}
	base := t.TempDir()
	bin := copyRec(t, base, nil)
	commands := map[string]func(out string) []string{
		"detect": func(out string) []string { return []string{"detect", "-device", "cpu", "-nskip", "1", "-o", out, bin} },
		"preprocess": func(out string) []string {
			return []string{"preprocess", "-device", "cpu", "-save-data", "-o", out, bin}
		},
		"simulate": func(out string) []string { return []string{"simulate", "-duration", "4s", "-o", out} },
		"sort":     func(out string) []string { return []string{"sort", "-device", "cpu", "-nskip", "1", "-o", out, bin} },
		"demo":     func(out string) []string { return []string{"demo", "-device", "cpu", "-duration", "2.5s"} },
	}
	all := os.Getenv("DSPK_LONG_TESTS") != ""
	for name, argv := range commands {
		// sigDouble stands for two SIGINTs in a row: the second exits at
		// once, leaving a locked temporary folder for the next run.
		const sigDouble = syscall.Signal(0)
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL, sigDouble} {
			if sig == sigDouble && name != "detect" {
				continue
			}
			for _, delay := range []time.Duration{0, 150 * time.Millisecond} {
				// By default every signal at the start of detect's work and
				// one each of the others; DSPK_LONG_TESTS=1 runs them all
				// at two points.
				quick := map[string]syscall.Signal{"preprocess": syscall.SIGINT, "simulate": syscall.SIGKILL, "demo": syscall.SIGTERM, "sort": syscall.SIGINT}
				if !all && (delay != 0 || name != "detect" && quick[name] != sig) {
					continue
				}
				label := sig.String()
				if sig == sigDouble {
					label = "two interrupts"
				}
				t.Run(name+"/"+label+"/"+delay.String(), func(t *testing.T) {
					dir, tmp := t.TempDir(), t.TempDir()
					out := filepath.Join(dir, "sub", "out")
					cmd, stderr := child(t, dir, tmp, argv(out)...)
					watch := dir
					if name == "demo" {
						watch = tmp
					}
					started := waitFor(watch, 20*time.Second)
					time.Sleep(delay)
					if sig == sigDouble {
						cmd.Process.Signal(syscall.SIGINT)
						time.Sleep(time.Millisecond)
						cmd.Process.Signal(syscall.SIGINT)
					} else {
						cmd.Process.Signal(sig)
					}
					err := cmd.Wait()
					code := cmd.ProcessState.ExitCode()
					finished := err == nil
					if !started || finished {
						t.Logf("the run ended before the signal (exit %d)", code)
					} else if sig == sigDouble {
						if code != 130 {
							t.Errorf("exit %d after two SIGINTs, want 130: %s", code, stderr)
						}
					} else if sig != syscall.SIGKILL {
						want := map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143}[sig]
						if code != want || !strings.Contains(stderr.String(), "interrupted by "+signalName(sig)) ||
							!strings.Contains(stderr.String(), "nothing was written") {
							t.Errorf("exit %d, stderr %q; want %d and the interrupt message", code, stderr.String(), want)
						}
						if _, err := os.Stat(out); err == nil && name != "demo" {
							t.Errorf("%s exists after the interrupt", out)
						}
						if h := append(hidden(dir), hidden(tmp)...); len(h) > 0 {
							t.Errorf("left behind: %v", h)
						}
						if es, _ := os.ReadDir(dir); len(es) != 0 && name != "demo" {
							t.Errorf("the output's parent holds %d entries", len(es))
						}
					}
					// The next run writing beside the remains removes them. A
					// run killed between creating its folder and writing its
					// lock leaves a folder that a sweep spares for its first
					// minute (export.SweepStale): age the remains past it.
					old := time.Now().Add(-2 * time.Minute)
					for _, h := range append(hidden(dir), hidden(tmp)...) {
						os.Chtimes(h, old, old)
					}
					next := filepath.Join(dir, "sub", "next")
					cmd2, stderr2 := child(t, dir, tmp, argv(next)...)
					if err := cmd2.Wait(); err != nil {
						t.Fatalf("the next run: %v: %s", err, stderr2)
					}
					if h := append(hidden(dir), hidden(tmp)...); len(h) > 0 {
						t.Errorf("after the next run: %v", h)
					}
				})
			}
		}
	}
}
