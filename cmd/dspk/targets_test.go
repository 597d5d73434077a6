package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/figure"
	"dspk/phy"
)

// TestPlotTargets checks that plot -o writes only .png names, replaces an
// existing file only if it is a PNG dspk drew (or with -overwrite, and
// never a folder, a link or a file of the detect folder), tags what it
// writes and leaves no temporary file.
func TestPlotTargets(t *testing.T) {
	dir := t.TempDir()
	bin := copyRec(t, dir, nil)
	det := filepath.Join(dir, "det")
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-o", det, bin); code != 0 {
		t.Fatalf("detect: %d %s", code, stderr)
	}
	if !figure.IsDspkPNG(filepath.Join(det, phy.RasterFile)) {
		t.Fatal("detect's drift raster lacks dspk's tEXt chunk")
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notes := write("notes.png", "my notes")
	foreignPNG := write("photo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR not dspk's")
	os.Mkdir(filepath.Join(dir, "folder.png"), 0o755)
	os.Symlink(notes, filepath.Join(dir, "link.png"))
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-o", filepath.Join(dir, "r.svg")}, 2, "PNG pictures only"},
		{[]string{"-o", filepath.Join(dir, "r.pdf")}, 2, "PNG pictures only"},
		{[]string{"-o", filepath.Join(dir, "r.jpg")}, 2, "PNG pictures only"},
		{[]string{"-o", bin}, 2, "PNG pictures only"},
		{[]string{"-o", notes}, 1, "not a picture dspk drew"},
		{[]string{"-o", foreignPNG}, 1, "not a picture dspk drew"},
		{[]string{"-overwrite", "-o", filepath.Join(dir, "folder.png")}, 1, "not a regular file"},
		{[]string{"-overwrite", "-o", filepath.Join(dir, "link.png")}, 1, "not a regular file"},
	} {
		before := files(t, dir)
		code, _, stderr := dspk(t, append(append([]string{"plot"}, c.args...), det)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("plot %v: exit %d %q, want %d and %q", c.args, code, stderr, c.code, c.want)
		}
		if files(t, dir) != before {
			t.Errorf("plot %v changed files", c.args)
		}
	}
	// A new file, then again over it (dspk's own), then -overwrite of a
	// file dspk did not draw.
	out := filepath.Join(dir, "raster.PNG")
	for range 2 {
		if code, _, stderr := dspk(t, "plot", "-o", out, det); code != 0 {
			t.Fatalf("plot: %d %s", code, stderr)
		}
		if !figure.IsDspkPNG(out) {
			t.Fatal("plot's PNG lacks dspk's tEXt chunk")
		}
	}
	if code, _, stderr := dspk(t, "plot", "-overwrite", "-o", notes, det); code != 0 || !figure.IsDspkPNG(notes) {
		t.Fatalf("plot -overwrite: %d %s", code, stderr)
	}
	// Redrawn in place, the raster stays in the manifest: the folder can
	// still be replaced.
	if code, _, stderr := dspk(t, "plot", "-title", "again", det); code != 0 || strings.Contains(stderr, "warning") {
		t.Fatalf("plot in place: %d %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-overwrite", "-o", det, bin); code != 0 {
		t.Errorf("detect -overwrite after plot redrew the raster: %d %s", code, stderr)
	}
	if h := hidden(dir); len(h) > 0 {
		t.Errorf("left behind: %v", h)
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(b[:100], []byte("tEXtSoftware\x00dspk")) {
		t.Errorf("the tEXt chunk is not right after the header: %q", b[:min(len(b), 100)])
	}
}

// TestOverwriteKinds checks that -overwrite replaces only a folder of
// the kind the command writes and refuses a folder holding a sub-folder
// dspk did not make, naming it, while a command replaces its own kind of
// folder (sub-folders included: simulate's truth/).
func TestOverwriteKinds(t *testing.T) {
	dir := t.TempDir()
	bin := copyRec(t, dir, nil)
	sim := filepath.Join(dir, "sim")
	if code, _, stderr := dspk(t, "simulate", "-duration", "1s", "-units", "3", "-o", sim); code != 0 {
		t.Fatalf("simulate: %d %s", code, stderr)
	}
	det := filepath.Join(dir, "det")
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-o", det, bin); code != 0 {
		t.Fatalf("detect: %d %s", code, stderr)
	}
	pre := filepath.Join(dir, "pre")
	if code, _, stderr := dspk(t, "preprocess", "-device", "cpu", "-o", pre, bin); code != 0 {
		t.Fatalf("preprocess: %d %s", code, stderr)
	}
	before := files(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"detect", "-device", "cpu", "-overwrite", "-o", sim, bin}, "is a simulate folder"},
		{[]string{"detect", "-device", "cpu", "-overwrite", "-o", pre, bin}, "is a preprocess folder"},
		{[]string{"preprocess", "-device", "cpu", "-overwrite", "-o", det, bin}, "is a detect folder"},
		{[]string{"simulate", "-duration", "1s", "-overwrite", "-o", det}, "is a detect folder"},
		{[]string{"sort", "-device", "cpu", "-overwrite", "-o", det, bin}, "is a detect folder"},
		{[]string{"sort", "-device", "cpu", "-overwrite", "-o", sim, bin}, "is a simulate folder"},
	} {
		if code, _, stderr := dspk(t, c.args...); code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q, want 1 and %q", c.args, code, stderr, c.want)
		}
		if files(t, dir) != before {
			t.Fatalf("%v changed files", c.args)
		}
	}
	// Each kind replaces its own.
	for _, args := range [][]string{
		{"simulate", "-duration", "1s", "-units", "3", "-overwrite", "-o", sim},
		{"detect", "-device", "cpu", "-overwrite", "-o", det, bin},
		{"preprocess", "-device", "cpu", "-overwrite", "-o", pre, bin},
	} {
		if code, _, stderr := dspk(t, args...); code != 0 {
			t.Errorf("%v: %d %s", args, code, stderr)
		}
	}
	// An empty sub-folder the user made inside a detect folder.
	os.Mkdir(filepath.Join(det, "my notes"), 0o755)
	before = files(t, dir)
	if code, _, stderr := dspk(t, "detect", "-device", "cpu", "-overwrite", "-o", det, bin); code != 1 || !strings.Contains(stderr, "holds the folder my notes") {
		t.Errorf("detect -overwrite over a user's sub-folder: exit %d %q", code, stderr)
	}
	if files(t, dir) != before {
		t.Error("the refused -overwrite changed files")
	}
}

// TestDemoFailureRemovesFolders checks that demo -o removes the folders
// it made (its output and the missing parents) when it fails after the
// simulation was written.
func TestDemoFailureRemovesFolders(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a recording")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "a", "b", "demo")
	// No such device: the demo fails after the simulation.
	code, _, stderr := dspk(t, "demo", "-device", "cuda:99", "-duration", "2.5s", "-o", out)
	if code != 1 {
		t.Fatalf("demo on a missing device: exit %d %s", code, stderr)
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Errorf("the failed demo left %v in %s", es, dir)
	}
	// An existing -o folder is kept (empty), only what the demo made goes.
	os.Mkdir(filepath.Join(dir, "mine"), 0o755)
	if code, _, _ := dspk(t, "demo", "-device", "cuda:99", "-duration", "2.5s", "-o", filepath.Join(dir, "mine")); code != 1 {
		t.Fatalf("demo: exit %d", code)
	}
	if es, _ := os.ReadDir(filepath.Join(dir, "mine")); len(es) != 0 {
		t.Errorf("the failed demo left %v in the user's folder", es)
	}
}
