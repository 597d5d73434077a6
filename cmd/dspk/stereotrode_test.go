package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/compare"
)

// stereotrodeProbe is a Kilosort probe of 8 stereotrodes 250 µm apart in
// depth (two wires 20 µm apart each, one group each, kcoords), in a
// 17-channel file whose last row is the sync channel: the layout of the
// stereotrode recording issue 26 was tried on.
const stereotrodeProbe = `{"chanMap": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
 "xc": [0, 20, 0, 20, 0, 20, 0, 20, 0, 20, 0, 20, 0, 20, 0, 20],
 "yc": [0, 0, 250, 250, 500, 500, 750, 750, 1000, 1000, 1250, 1250, 1500, 1500, 1750, 1750],
 "kcoords": [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7], "n_chan": 17}`

// TestStereotrodeGroupsDefaults simulates 8 stereotrodes and detects them
// with -groups and default settings: the CAR spans all 16 wires (a
// per-group CAR of two wires would subtract half of every spike the pair
// sees: recall of the 12–25 SD units fell to 0.83 that way), so the large
// events are found (recall ≥ 0.95 in every band), with no CAR warning;
// -car-groups is refused on groups of two wires.
func TestStereotrodeGroupsDefaults(t *testing.T) {
	dir := t.TempDir()
	pr := filepath.Join(dir, "stereotrodes.json")
	if err := os.WriteFile(pr, []byte(stereotrodeProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	simDir := filepath.Join(dir, "sim")
	if code, _, stderr := dspk(t, "simulate", "-o", simDir, "-probe", pr, "-duration", "10s", "-units", "16"); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, stderr)
	}
	bin := filepath.Join(simDir, simBase+".imec0.ap.bin")
	out := filepath.Join(dir, "det")
	code, _, stderr := dspk(t, "detect", "-device", "cpu", "-groups", "-o", out, bin)
	if code != 0 {
		t.Fatalf("detect: exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "common average reference") {
		t.Errorf("CAR warning with the CAR over all 16 wires: %s", stderr)
	}
	code, stdout, stderr := dspk(t, "compare", "-json", "-truth", filepath.Join(simDir, "truth"), out)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("compare of the truth's own probe and duration warns: %s", stderr)
	}
	var r compare.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	large := 0
	for _, b := range r.Bands {
		t.Logf("recall %g–%g SD: %.3f (%d of %d)", b.Band.Lo, b.Band.Hi, b.Recall, b.Matched, b.NTruth)
		if b.NTruth > 0 && b.Recall < 0.95 {
			t.Errorf("recall %g–%g SD %.3f (%d of %d), want ≥ 0.95", b.Band.Lo, b.Band.Hi, b.Recall, b.Matched, b.NTruth)
		}
		if b.Band.Lo >= 12 {
			large += b.NTruth
		}
	}
	if large < 200 || r.Precision < 0.95 {
		t.Errorf("%d true spikes of 12 SD or more, precision %.3f", large, r.Precision)
	}
	code, _, stderr = dspk(t, "detect", "-device", "cpu", "-groups", "-car-groups", "-o", filepath.Join(dir, "car"), bin)
	if code != 1 || !strings.Contains(stderr, "has 2") {
		t.Errorf("-car-groups on stereotrodes: exit %d, %s", code, stderr)
	}
}
