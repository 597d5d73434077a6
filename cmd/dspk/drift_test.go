package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
	"dspk/figure"
	"dspk/phy"
	"dspk/probe"
	"dspk/sim"
)

// driftSpeed is the drift of the recording of writeDriftRecording, µm/s.
const driftSpeed = 5.0

// writeDriftRecording writes 10 s of the first 64 sites of Neuropixels
// 1.0 with 60 units drifting up at driftSpeed into dir and returns the
// .ap.bin and the truth folder (with the true motion, motion.npy).
func writeDriftRecording(t *testing.T, dir string) (bin, truth string) {
	t.Helper()
	np1 := probe.NP1()
	const n = 64
	pr := &probe.Probe{Name: "np1-64", X: np1.X[:n], Y: np1.Y[:n], Shank: np1.Shank[:n], NChanFile: n + 1}
	for i := range n {
		pr.ChanMap = append(pr.ChanMap, i)
	}
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Units, cfg.Seed, cfg.Probe, cfg.DriftUmPerS = 10, 60, 5, pr, driftSpeed
	cfg.MotionTruth = true
	bin, tr, err := sim.WriteSpikeGLX(dir, simBase, cfg)
	if err != nil {
		t.Fatal(err)
	}
	truth = filepath.Join(dir, "truth")
	if err := os.Mkdir(truth, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteDir(truth); err != nil {
		t.Fatal(err)
	}
	return bin, truth
}

// TestDriftCommand runs dspk drift and dspk detect -nblocks 1 on a
// drifting recording: the drift folder holds the estimate with its axes,
// both pictures and the provenance, compare scores it against the true
// motion (RMS under 3 µm, far below no correction), and the detect folder
// stores the same estimate beside its spikes.
func TestDriftCommand(t *testing.T) {
	dir := t.TempDir()
	bin, truth := writeDriftRecording(t, dir)
	common := []string{"-device", "cpu", "-batch", "30000", "-nearest_templates", "50"}
	out := filepath.Join(dir, "drift")
	code, stdout, stderr := dspk(t, append(append([]string{"drift", "-o", out}, common...), bin)...)
	if code != 0 {
		t.Fatalf("drift: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Estimated the motion of 10 windows × 1 blocks") {
		t.Errorf("drift said %q", stdout)
	}
	d, err := phy.ReadDrift(out)
	if err != nil {
		t.Fatal(err)
	}
	if d.Windows != 10 || d.Blocks != 1 || d.Times[0] != 0.5 || d.Times[9] != 9.5 {
		t.Errorf("drift of %d × %d, times %v", d.Windows, d.Blocks, d.Times)
	}
	for _, f := range []string{phy.DriftPlotFile, phy.DriftRasterFile} {
		png, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s: %v", f, err)
		}
	}
	var prov struct {
		Motion map[string]any `json:"motion"`
		Config struct {
			NBlocks int `json:"nblocks"`
		} `json:"config"`
	}
	b, err := os.ReadFile(filepath.Join(out, "dspk.json"))
	if err != nil || json.Unmarshal(b, &prov) != nil || prov.Motion == nil || prov.Config.NBlocks != 1 {
		t.Errorf("dspk.json: %v, %+v", err, prov)
	}

	code, stdout, stderr = dspk(t, "compare", "-json", "-truth", truth, out)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	var rep struct {
		Motion struct {
			RMS      float64 `json:"rms_um"`
			Unscored float64 `json:"rms_no_correction_um"`
		} `json:"motion"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("compare -json: %v: %s", err, stdout)
	}
	t.Logf("motion RMS %.2f µm, uncorrected %.2f µm", rep.Motion.RMS, rep.Motion.Unscored)
	if !(rep.Motion.RMS < 3) || !(rep.Motion.Unscored > 10) {
		t.Errorf("motion RMS %.2f µm (want < 3), no correction %.2f µm (want > 10)", rep.Motion.RMS, rep.Motion.Unscored)
	}

	code, stdout, stderr = dspk(t, "compare", "-truth", truth, out)
	if code != 0 || !strings.Contains(stdout, "motion RMS error") || strings.Contains(stdout, "recall") {
		t.Errorf("compare on the drift folder: exit %d: %s%s", code, stdout, stderr)
	}

	det := filepath.Join(dir, "det")
	if code, _, stderr := dspk(t, append(append([]string{"detect", "-o", det, "-nblocks", "1"}, common...), bin)...); code != 0 {
		t.Fatalf("detect -nblocks 1: exit %d: %s", code, stderr)
	}
	d2, err := phy.ReadDrift(det)
	if err != nil {
		t.Fatal(err)
	}
	if len(d2.Dshift) != len(d.Dshift) {
		t.Fatalf("detect's drift has %d shifts, drift's %d", len(d2.Dshift), len(d.Dshift))
	}
	for i := range d.Dshift {
		if d.Dshift[i] != d2.Dshift[i] {
			t.Fatalf("window %d: detect's shift %g, drift's %g", i, d2.Dshift[i], d.Dshift[i])
		}
	}
	code, stdout, stderr = dspk(t, "compare", "-truth", truth, det)
	if code != 0 || !strings.Contains(stdout, "recall") || !strings.Contains(stdout, "motion RMS error") {
		t.Errorf("compare on the detect folder: exit %d: %s%s", code, stdout, stderr)
	}
	t.Logf("compare:\n%s", stdout)
}

// TestDriftBadInput: nblocks 0 or larger than the probe allows, and a
// drift folder's broken estimate, are refused with the file named and no
// folder left behind.
func TestDriftBadInput(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(goldenRec, simBase+".imec0.ap.bin")
	out := filepath.Join(dir, "drift")
	if code, _, stderr := dspk(t, "drift", "-device", "cpu", "-nblocks", "0", "-o", out, bin); code != 2 || !strings.Contains(stderr, "nblocks") {
		t.Errorf("nblocks 0: exit %d: %s", code, stderr)
	}
	code, _, stderr := dspk(t, "drift", "-device", "cpu", "-nblocks", "40", "-o", out, bin)
	if code != 1 || !strings.Contains(stderr, bin) || !strings.Contains(stderr, "larger than the probe allows") {
		t.Errorf("nblocks 40 on 32 sites: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run left %s: %v", out, err)
	}
	// A drift folder whose axes disagree with drift.npy.
	bad := filepath.Join(dir, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := phy.WriteDrift(bad, &figure.Drift{Windows: 2, Blocks: 1, Dshift: []float64{1, 2}, Times: []float64{1, 3}, Depths: []float64{100}}); err != nil {
		t.Fatal(err)
	}
	if err := export.WriteNPYFile(filepath.Join(bad, phy.DriftTimesFile), []int{3}, []float64{1, 3, 5}); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = dspk(t, "compare", "-truth", filepath.Join(goldenRec, "truth"), bad)
	if code != 1 || !strings.Contains(stderr, bad) || !strings.Contains(stderr, "3 window times") {
		t.Errorf("inconsistent drift folder: exit %d: %s", code, stderr)
	}
}
