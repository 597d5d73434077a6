package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"dspk/compute"
)

// liveChild is a dspk process (the test binary re-executed as dspk)
// whose stderr lines the test watches.
type liveChild struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	lines  chan string
	done   chan struct{}
}

// startChild starts "dspk args…" in dir with TMPDIR tmp and a progress
// line after every window.
func startChild(t *testing.T, dir, tmp string, args ...string) *liveChild {
	t.Helper()
	c := &liveChild{lines: make(chan string, 4096), done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Dir = dir
	c.cmd.Env = append(os.Environ(), "DSPK_TEST_MAIN=1", "DSPK_TEST_PROGRESS=1",
		"DSPK_TEST_ARGS="+strings.Join(args, " "), "TMPDIR="+tmp)
	pipe, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stdout = io.Discard
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
	}()
	return c
}

// waitLine waits for a stderr line that starts with prefix and reports
// whether it came (before the process ended or the timeout).
func (c *liveChild) waitLine(prefix string, timeout time.Duration) bool {
	end := time.After(timeout)
	for {
		select {
		case l := <-c.lines:
			if strings.HasPrefix(l, prefix) {
				return true
			}
		case <-c.done:
			return false
		case <-end:
			return false
		}
	}
}

// wait waits for the process and returns its exit status and stderr.
func (c *liveChild) wait() (int, string) {
	c.cmd.Wait()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cmd.ProcessState.ExitCode(), c.stderr.String()
}

// TestSignalsAtEveryPass sends a real SIGINT or SIGTERM to dspk processes
// (or a SIGHUP, exit 129) at each pass of detect and preprocess, while their folders are
// written, during simulate, demo -o, bench -ops file and plot, with the
// recording in the page cache (read just before): each must exit with
// 130 or 143 and the interrupt message naming the pass, within the
// limit, write nothing and leave the -overwrite target exactly as it
// was. A signal that came after the output was committed must say so
// (the output is then complete).
func TestSignalsAtEveryPass(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dspk processes")
	}
	base, tmp := t.TempDir(), t.TempDir()
	bin := copyRec(t, base, nil)
	if _, err := os.ReadFile(bin); err != nil { // into the page cache
		t.Fatal(err)
	}
	// Windows of 1000 samples: about 130 per pass, a few ms each, so that
	// a signal sent on a pass's first progress line lands inside it.
	small := []string{"-device", "cpu", "-nskip", "1", "-batch", "1000"}
	det := filepath.Join(base, "det")
	if code, _, stderr := dspk(t, append(append([]string{"detect"}, small...), "-o", det, bin)...); code != 0 {
		t.Fatalf("detect: %d %s", code, stderr)
	}
	pre := filepath.Join(base, "pre")
	if code, _, stderr := dspk(t, append(append([]string{"preprocess", "-save-data"}, small...), "-o", pre, bin)...); code != 0 {
		t.Fatalf("preprocess: %d %s", code, stderr)
	}
	sim := filepath.Join(base, "sim")
	if code, _, stderr := dspk(t, "simulate", "-duration", "2s", "-units", "5", "-o", sim); code != 0 {
		t.Fatalf("simulate: %d %s", code, stderr)
	}
	png := filepath.Join(base, "raster.png")
	if code, _, stderr := dspk(t, "plot", "-o", png, det); code != 0 {
		t.Fatalf("plot: %d %s", code, stderr)
	}
	detect := append(append([]string{"detect", "-overwrite"}, small...), "-o", det, bin)
	cases := []struct {
		name    string
		args    []string
		sig     syscall.Signal
		at      string // the stderr line to signal on ("" : the start)
		stage   string // the interrupt message names it ("" : any; "a|b": either)
		maybeOK bool   // the run may commit before the signal lands
	}{
		{"detect/whitening", detect, syscall.SIGINT, "whitening: 1/", "the whitening pass", false},
		{"detect/templates", detect, syscall.SIGTERM, "templates: 1/", "the templates pass", false},
		{"detect/detection", detect, syscall.SIGINT, "detection: 1/", "the detection pass", false},
		{"detect/SIGHUP", detect, syscall.SIGHUP, "templates: 1/", "the templates pass", false},
		{"detect/writing", detect, syscall.SIGTERM, "detection: 135/135", "the writing of the results", true},
		{"preprocess/whitened", append(append([]string{"preprocess", "-save-data", "-overwrite"}, small...), "-o", pre, bin),
			syscall.SIGINT, "whitened: 1/", "the whitened pass", false},
		{"simulate", []string{"simulate", "-overwrite", "-duration", "6s", "-o", sim}, syscall.SIGTERM, "", "the simulation", false},
		{"demo -o", []string{"demo", "-device", "cpu", "-duration", "2.5s", "-o", filepath.Join(base, "demo", "new")},
			syscall.SIGINT, "whitening: 1/1", "the work after the whitening pass|the templates pass", false},
		{"bench -ops file", []string{"bench", "-device", "cpu", "-ops", "file", "-file", bin}, syscall.SIGTERM, "device:", "", false},
		{"plot", []string{"plot", "-o", png, det}, syscall.SIGINT, "", "the drift raster", true},
	}
	// On a GPU the same points of detect (the passes are faster there, so
	// the message may name the next one).
	if dev, _, err := compute.Open("cuda:0"); err == nil {
		dev.Close()
		gpu := []string{"detect", "-overwrite", "-device", "cuda:0", "-nskip", "1", "-batch", "1000", "-o", det, bin}
		for _, at := range []string{"whitening: 1/", "templates: 1/", "detection: 1/", "detection: 134/135"} {
			cases = append(cases, struct {
				name    string
				args    []string
				sig     syscall.Signal
				at      string
				stage   string
				maybeOK bool
			}{"cuda/" + strings.TrimSuffix(at, "/"), gpu, syscall.SIGINT, at, "", true})
		}
	} else {
		t.Logf("no GPU (%v): the cuda:0 cases are skipped", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := files(t, base)
			ch := startChild(t, base, tmp, c.args...)
			if c.at == "" {
				c.at = "dspk-test: signals caught"
			}
			if !ch.waitLine(c.at, 60*time.Second) {
				code, stderr := ch.wait()
				t.Fatalf("no line %q (exit %d): %s", c.at, code, stderr)
			}
			if c.at == "dspk-test: signals caught" {
				time.Sleep(20 * time.Millisecond) // into the work
			}
			t0 := time.Now()
			if err := ch.cmd.Process.Signal(c.sig); err != nil && c.maybeOK {
				code, stderr := ch.wait()
				t.Skipf("the run ended before the signal (exit %d, %v): %s", code, err, stderr)
			}
			code, stderr := ch.wait()
			took := time.Since(t0)
			t.Logf("stopped in %v: %s", took.Round(time.Millisecond), strings.TrimSpace(lastLine(stderr)))
			want := 128 + int(c.sig)
			if code != want || !strings.Contains(stderr, "interrupted by "+signalName(c.sig)) {
				t.Fatalf("exit %d, want %d and the interrupt message: %s", code, want, stderr)
			}
			if c.maybeOK && strings.Contains(stderr, "after the work was done") {
				t.Logf("the signal came after the output was committed")
				return
			}
			named := c.stage == ""
			for _, st := range strings.Split(c.stage, "|") {
				named = named || st != "" && strings.Contains(stderr, "during "+st)
			}
			if !strings.Contains(stderr, "nothing was written") || !named {
				t.Errorf("the message does not say that nothing was written during %s: %s", c.stage, stderr)
			}
			if limit := 1500 * time.Millisecond; took > limit {
				t.Errorf("the process took %v after the signal (limit %v; dspk aims at 0.5 s)", took, limit)
			}
			if after := files(t, base); after != before {
				t.Errorf("the interrupted run changed files:\nbefore\n%s\nafter\n%s", before, after)
			}
			if h := hidden(tmp); len(h) > 0 {
				t.Errorf("left in the temporary folder: %v", h)
			}
		})
	}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// files lists the files under dir with their mode, size and modification
// time, and the folders by name (a folder's own time changes when a
// temporary folder is made and removed in it).
func files(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if d.IsDir() {
			lines = append(lines, rel+"/")
		} else {
			lines = append(lines, fmt.Sprintf("%s %v %d %d", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano()))
		}
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
