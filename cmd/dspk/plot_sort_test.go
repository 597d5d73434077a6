package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
	"dspk/phy"
)

// TestSortRunFolderPlot sorts a SpikeGLX run folder (given as a folder,
// with a flag spelt with '-' for '_'), which warns that a 10-s recording
// merges units; plot then draws the sort folder's drift raster, which
// the folder's manifest lists, so that sort -overwrite still replaces
// the folder.
func TestSortRunFolderPlot(t *testing.T) {
	if testing.Short() {
		t.Skip("two sorts: skipped in -short mode")
	}
	dir := t.TempDir()
	run := filepath.Join(dir, "run_g0")
	probeDir := filepath.Join(run, "run_g0_imec0")
	if err := os.MkdirAll(probeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := sortRecording(t, probeDir)
	out := filepath.Join(dir, "sort1")
	code, stdout, stderr := dspk(t, "sort", "-device", "cpu", "-Th-learned", "8", "-o", out, run)
	if code != 0 {
		t.Fatalf("sort of the run folder: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Sorted ") {
		t.Errorf("closing line %q", stdout)
	}
	if !strings.Contains(stderr, "warning: the sort uses 10 s of recording: under 300 s it merges many units") ||
		!strings.Contains(stderr, "holds 1000") {
		t.Errorf("no short-recording warning:\n%s", stderr)
	}
	params, err := os.ReadFile(filepath.Join(out, "params.py"))
	if err != nil || !strings.Contains(string(params), filepath.Base(bin)) {
		t.Errorf("params.py does not name %s: %s %v", bin, params, err)
	}

	code, stdout, stderr = dspk(t, "plot", out)
	png := filepath.Join(out, phy.RasterFile)
	if code != 0 || strings.Contains(stderr, "warning") || !strings.Contains(stdout, png) {
		t.Fatalf("plot of the sort folder: exit %d\n%s\n%s", code, stdout, stderr)
	}
	manifest, err := os.ReadFile(filepath.Join(out, export.ManifestName))
	if err != nil || !strings.Contains(string(manifest), `"`+phy.RasterFile+`"`) {
		t.Errorf("the manifest does not list %s: %v\n%s", phy.RasterFile, err, manifest)
	}
	// Redrawn, it stays listed.
	if code, _, stderr := dspk(t, "plot", "-title", "again", out); code != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("plot again: exit %d, %s", code, stderr)
	}
	if code, _, stderr := dspk(t, "sort", "-device", "cpu", "-overwrite", "-o", out, run); code != 0 {
		t.Errorf("sort -overwrite of a plotted sort folder: exit %d: %s", code, stderr)
	}
	// Another file added by hand still makes -overwrite refuse the folder.
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	if code, _, stderr := dspk(t, "sort", "-device", "cpu", "-overwrite", "-o", out, run); code != 1 || !strings.Contains(stderr, "notes.txt") {
		t.Errorf("sort -overwrite of a folder with a foreign file: exit %d: %s", code, stderr)
	}
}
