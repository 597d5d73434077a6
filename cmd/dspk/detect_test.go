package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"dspk/phy"
)

// TestDetectLogToFile runs detect with stderr redirected to a file (as
// under nohup or SLURM): the file gets plain progress lines with windows
// done of total, rate and ETA, and one line per finished pass; the
// summary says how fast in words; the folder holds drift_raster.png, and
// dspk plot redraws it elsewhere.
func TestDetectLogToFile(t *testing.T) {
	if progressInterval != 10*time.Second {
		t.Fatalf("progress interval %v, want 10 s", progressInterval)
	}
	// Every window gets a line here (the golden recording has three).
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 0

	dir := t.TempDir()
	logf, err := os.Create(filepath.Join(dir, "detect.log"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "det")
	var stdout bytes.Buffer
	bin := filepath.Join(goldenRec, simBase+".imec0.ap.bin")
	code := run([]string{"detect", "-device", "cpu", "-o", out, "-nskip", "1", bin}, &stdout, logf)
	logf.Close()
	log, _ := os.ReadFile(logf.Name())
	if code != 0 {
		t.Fatalf("detect: exit %d: %s", code, log)
	}
	t.Logf("log:\n%s", log)
	for _, re := range []string{
		`(?m)^detection: 1/3 windows \(33%\), [0-9.]+ windows/s, ETA [0-9.]+m?s$`,
		`(?m)^detection: 3/3 windows in [0-9.]+m?s$`,
		`(?m)^whitening: 2/2 windows in `,
	} {
		if !regexp.MustCompile(re).Match(log) {
			t.Errorf("log lacks a line matching %s", re)
		}
	}
	if !regexp.MustCompile(`4\.5 s of recording in [0-9.]+ s \(detection pass [0-9.]+ s\): [0-9.]+× real time \((slower|faster) than real time\)`).MatchString(stdout.String()) {
		t.Errorf("summary %q", stdout.String())
	}
	png, err := os.ReadFile(filepath.Join(out, phy.RasterFile))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("drift raster: %v", err)
	}
	again := filepath.Join(dir, "again.png")
	if code, _, stderr := dspk(t, "plot", "-o", again, out); code != 0 {
		t.Fatalf("plot: exit %d: %s", code, stderr)
	}
	if st, err := os.Stat(again); err != nil || st.Size() < 10000 {
		t.Fatalf("plot wrote %v (%v)", st, err)
	}
	if code, _, stderr := dspk(t, "plot", dir); code != 1 || !strings.Contains(stderr, "not a dspk detect folder") {
		t.Errorf("plot of a non-folder: exit %d, %q", code, stderr)
	}
	checkModes(t, out)
}

// TestProgressLines checks the throttling of the plain progress lines
// with a fake clock: at most one line per interval while a pass runs,
// one when it ends.
func TestProgressLines(t *testing.T) {
	var b bytes.Buffer
	now := time.Unix(0, 0)
	f := progressLines(&b, 10*time.Second, func() time.Time { return now })
	for i := 1; i <= 30; i++ {
		now = now.Add(3 * time.Second)
		f("detection", i, 30)
	}
	got := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"detection: 4/30 windows (13%), 0.33 windows/s, ETA 1m18s",
		"detection: 8/30 windows (26%), 0.33 windows/s, ETA 1m6s",
		"detection: 12/30 windows (40%), 0.33 windows/s, ETA 54s",
		"detection: 16/30 windows (53%), 0.33 windows/s, ETA 42s",
		"detection: 20/30 windows (66%), 0.33 windows/s, ETA 30s",
		"detection: 24/30 windows (80%), 0.33 windows/s, ETA 18s",
		"detection: 28/30 windows (93%), 0.33 windows/s, ETA 6s",
		"detection: 30/30 windows in 1m30s",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A pass that announces its start (0 done) after work without
	// windows is timed from then, not from the last pass's end.
	b.Reset()
	now = now.Add(100 * time.Second)
	f("matching", 0, 12)
	for i := 1; i <= 12; i++ {
		now = now.Add(2 * time.Second)
		f("matching", i, 12)
	}
	got = strings.Split(strings.TrimSpace(b.String()), "\n")
	want = []string{
		"matching: 5/12 windows (41%), 0.50 windows/s, ETA 14s",
		"matching: 10/12 windows (83%), 0.50 windows/s, ETA 4s",
		"matching: 12/12 windows in 24s",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSimulateModes checks that simulate writes its files and folders
// with the usual permissions (those of os.Create and os.Mkdir here).
func TestSimulateModes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sim")
	if code, _, stderr := dspk(t, "simulate", "-o", out, "-duration", "0.2s", "-units", "3"); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, stderr)
	}
	checkModes(t, out)
	checkModes(t, filepath.Join(out, "truth"))
}

// checkModes checks that dir has the mode os.Mkdir(0777) gives here and
// each file in it the mode os.Create gives (0755 and 0644 under umask
// 022).
func checkModes(t *testing.T, dir string) {
	t.Helper()
	ref := t.TempDir()
	rf, rd := filepath.Join(ref, "f"), filepath.Join(ref, "d")
	if err := os.WriteFile(rf, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(rd, 0o777); err != nil {
		t.Fatal(err)
	}
	mode := func(p string) os.FileMode {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	fm, dm := mode(rf), mode(rd)
	if got := mode(dir); got != dm {
		t.Errorf("%s: mode %v, want %v", dir, got, dm)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		want := fm
		if e.IsDir() {
			want = dm
		}
		if got := mode(filepath.Join(dir, e.Name())); got != want {
			t.Errorf("%s: mode %v, want %v", e.Name(), got, want)
		}
	}
}
