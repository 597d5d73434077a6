package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
)

// TestMatchDirs matches a detection folder holding the truth's own
// spikes against the truth folder: everything matches; a dspk.json with
// another sample rate and a shorter schedule adds the two warnings.
func TestMatchDirs(t *testing.T) {
	dir := t.TempDir()
	truthDir, tr := truthFolder(t, dir)
	det := filepath.Join(dir, "det")
	if err := os.Mkdir(det, 0o755); err != nil {
		t.Fatal(err)
	}
	if HasSpikes(det) {
		t.Error("HasSpikes of an empty folder")
	}
	y := tr.SpikeY()
	pos := make([]float32, 2*len(y))
	for i, v := range y {
		pos[2*i+1] = float32(v)
	}
	if err := export.WriteNPYFile(filepath.Join(det, "spike_times.npy"), []int{len(tr.SpikeTimes)}, tr.SpikeTimes); err != nil {
		t.Fatal(err)
	}
	if err := export.WriteNPYFile(filepath.Join(det, "spike_positions.npy"), []int{len(y), 2}, pos); err != nil {
		t.Fatal(err)
	}
	if !HasSpikes(det) {
		t.Error("no HasSpikes")
	}
	prov := []byte(`{"input": {"sample_rate": 30000}, "schedule": {"Start": 0, "End": 60000}}`)
	if err := os.WriteFile(filepath.Join(det, "dspk.json"), prov, 0o644); err != nil {
		t.Fatal(err)
	}
	r, warnings, err := MatchDirs(truthDir, det, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if r.NTruth != len(tr.SpikeTimes) || r.Matched != r.NTruth || r.Recall != 1 || r.Precision != 1 || len(warnings) != 0 {
		t.Errorf("report %+v, warnings %q", r, warnings)
	}
	prov = []byte(`{"input": {"sample_rate": 25000}, "schedule": {"Start": 0, "End": 30000}}`)
	if err := os.WriteFile(filepath.Join(det, "dspk.json"), prov, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err = MatchDirs(truthDir, det, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "25000 Hz") ||
		!strings.Contains(err.Error(), "dspk.json") {
		t.Errorf("another sample rate: %v", err)
	}
	prov = []byte(`{"input": {"sample_rate": 30000}, "schedule": {"Start": 0, "End": 30000}}`)
	if err := os.WriteFile(filepath.Join(det, "dspk.json"), prov, 0o644); err != nil {
		t.Fatal(err)
	}
	_, warnings, err = MatchDirs(truthDir, det, DefaultOptions())
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "covers 0.000–1.000 s") {
		t.Errorf("warnings %q, %v", warnings, err)
	}
	if _, _, err := MatchDirs(truthDir, dir, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "spike_times.npy") {
		t.Errorf("a folder without detections: %v", err)
	}
}

// TestTrueMotion reads the motion of a truth folder without drift: zero
// everywhere.
func TestTrueMotion(t *testing.T) {
	truthDir, _ := truthFolder(t, t.TempDir())
	f, err := TrueMotion(truthDir)
	if err != nil {
		t.Fatal(err)
	}
	if v := f(1, 1000); v != 0 {
		t.Errorf("motion %g without drift", v)
	}
	if _, err := TrueMotion(t.TempDir()); err == nil {
		t.Error("no error for a folder without truth")
	}
}
