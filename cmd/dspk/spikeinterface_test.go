package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// siPython is the interpreter the SpikeInterface test runs: Debian's,
// which has numpy and scipy; DSPK_SI_PYTHONPATH says where SpikeInterface
// 0.105 and probeinterface are (the PYTHONPATH that
// shared/tools/spikeinterface/setup.sh prints).
const siPython = "/usr/bin/python3"

// siReport is what python/dspk_si_check.py prints.
type siReport struct {
	RunSorterSeconds   float64   `json:"run_sorter_seconds"`
	HandSeconds        float64   `json:"hand_seconds"`
	Units              int       `json:"units"`
	SameTrains         bool      `json:"same_trains"`
	AccuracyRunSorter  []float64 `json:"accuracy_run_sorter"`
	AccuracyHand       []float64 `json:"accuracy_hand"`
	Properties         []string  `json:"properties"`
	LogHasProgress     bool      `json:"log_has_progress"`
	Segments           int       `json:"segments"`
	SameTrainsSegments bool      `json:"same_trains_segments"`
	CopyKept           bool      `json:"copy_kept"`
	Failure            *string   `json:"failure"`
}

// TestSpikeInterfaceSorter runs python/dspk_si_check.py: SpikeInterface
// generates a 60-s ground-truth recording (32 channels, 8 units, seed
// 2205), run_sorter("dspk", …) sorts it on the CPU through
// python/dspk_spikeinterface.py, and `dspk sort` sorts the same data
// saved as a binary folder by hand. The two sortings must hold the same
// spike trains and score the same accuracy against the truth (and most
// units must be found); the units carry their labels and quality
// metrics as properties; a two-segment recording comes back as two
// segments whose trains are those of the hand sort of the folder; and a
// bad parameter raises SpikeSortingError with dspk's message. It is
// skipped where SpikeInterface cannot be imported.
func TestSpikeInterfaceSorter(t *testing.T) {
	if _, err := os.Stat(siPython); err != nil {
		t.Skipf("no %s: the SpikeInterface wrapper is not checked", siPython)
	}
	env := append(os.Environ(), "PYTHONPATH="+os.Getenv("DSPK_SI_PYTHONPATH"))
	probe := exec.Command(siPython, "-c", "import spikeinterface")
	probe.Env = env
	if out, err := probe.CombinedOutput(); err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		t.Skipf("%s cannot import spikeinterface with PYTHONPATH=$DSPK_SI_PYTHONPATH (%q): %s; set DSPK_SI_PYTHONPATH "+
			"to the PYTHONPATH that shared/tools/spikeinterface/setup.sh prints", siPython, os.Getenv("DSPK_SI_PYTHONPATH"), lines[len(lines)-1])
	}
	if testing.Short() {
		t.Skip("-short: the SpikeInterface check sorts 80 s of recording four times")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "dspk")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(siPython, "../../python/dspk_si_check.py", exe, work, "60")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var r siReport
	if err != nil || json.Unmarshal([]byte(lines[len(lines)-1]), &r) != nil {
		t.Fatalf("dspk_si_check.py: %v\n%s", err, out)
	}
	t.Logf("run_sorter %.1f s (with the binary copy), dspk sort by hand %.1f s; %d units; accuracy per true unit %v",
		r.RunSorterSeconds, r.HandSeconds, r.Units, r.AccuracyRunSorter)
	if !r.SameTrains || !slices.Equal(r.AccuracyRunSorter, r.AccuracyHand) {
		t.Errorf("run_sorter and dspk sort differ: same trains %v, accuracy %v and %v", r.SameTrains, r.AccuracyRunSorter, r.AccuracyHand)
	}
	good := 0
	for _, a := range r.AccuracyRunSorter {
		if a >= 0.9 {
			good++
		}
	}
	if len(r.AccuracyRunSorter) != 8 || good < 6 {
		t.Errorf("accuracy %v: want at least 6 of 8 true units found with accuracy ≥ 0.9", r.AccuracyRunSorter)
	}
	if want := []string{"KSLabel", "bc_label", "exp_decay", "firing_rate", "num_spikes", "snr"}; !slices.Equal(r.Properties, want) {
		t.Errorf("unit properties %v, want %v", r.Properties, want)
	}
	if !r.LogHasProgress || r.CopyKept {
		t.Errorf("spikeinterface_log.json has dspk's progress: %v; the binary copy was kept: %v", r.LogHasProgress, r.CopyKept)
	}
	if r.Segments != 2 || !r.SameTrainsSegments {
		t.Errorf("two segments: %d segments, trains equal to the hand sort's: %v", r.Segments, r.SameTrainsSegments)
	}
	if r.Failure == nil || !strings.Contains(*r.Failure, `drift registration "bogus": want kilosort or pairwise`) {
		t.Errorf("a bad parameter: %v; want SpikeSortingError with dspk's message", r.Failure)
	}
}
