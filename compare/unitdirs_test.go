package compare

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
	"dspk/sim"
)

// truthFolder simulates 2 s of 4 units and writes their truth folder
// under dir.
func truthFolder(t *testing.T, dir string) (string, *sim.Truth) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Units = 2, 4
	rec, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	truthDir := filepath.Join(dir, "truth")
	if err := os.Mkdir(truthDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := rec.Truth().WriteDir(truthDir); err != nil {
		t.Fatal(err)
	}
	tr, err := sim.ReadTruthDir(truthDir)
	if err != nil {
		t.Fatal(err)
	}
	return truthDir, tr
}

// sortFolder writes a sort folder of the truth's spike times with labels
// (params.py with params, the sort marker with marker).
func sortFolder(t *testing.T, dir, name string, times []int64, labels []int32, params, marker bool) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := export.WriteNPYFile(filepath.Join(d, "spike_times.npy"), []int{len(times)}, times); err != nil {
		t.Fatal(err)
	}
	if err := export.WriteNPYFile(filepath.Join(d, "spike_clusters.npy"), []int{len(labels)}, labels); err != nil {
		t.Fatal(err)
	}
	if params {
		if err := os.WriteFile(filepath.Join(d, "params.py"), []byte("dat_path = 'x.bin'\nsample_rate = 30000.0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if marker {
		if err := os.WriteFile(filepath.Join(d, SortMarker), []byte("cluster_id\tKSLabel\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestMatchUnitDirs scores constructed sort folders against a simulated
// truth: the truth itself relabelled (every unit well detected), one
// unit split, one sort against another and against itself, and the
// folders that are refused.
func TestMatchUnitDirs(t *testing.T) {
	dir := t.TempDir()
	truthDir, tr := truthFolder(t, dir)
	relabel := make([]int32, len(tr.SpikeClusters))
	split := make([]int32, len(tr.SpikeClusters))
	n0 := 0
	for i, c := range tr.SpikeClusters {
		relabel[i] = 7 - c
		split[i] = c
		if c == 0 {
			if n0%4 == 3 {
				split[i] = 9
			}
			n0++
		}
	}
	perfect := sortFolder(t, dir, "perfect", tr.SpikeTimes, relabel, true, true)
	splitDir := sortFolder(t, dir, "split", tr.SpikeTimes, split, false, false)
	if !IsSort(perfect) || IsSort(splitDir) {
		t.Errorf("IsSort: %v %v", IsSort(perfect), IsSort(splitDir))
	}
	r, err := MatchUnitDirs(truthDir, perfect, 0, 0.4, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if r.NTruth != 4 || r.NSorted != 4 || r.WellDetected != 4 || r.Truth[0].Matched != 7 || r.Truth[0].Accuracy != 1 ||
		r.Reference != "truth" || r.SpikeAgreement != 1 || r.Options.Delta != 12 {
		t.Errorf("perfect: %+v", r)
	}
	// The folder has no dspk.json: its range is the span of its spikes,
	// which lies inside the truth's recording (no warning); a schedule
	// of the first second covers half the truth (a warning).
	if len(r.Warnings) != 0 {
		t.Errorf("warnings %q", r.Warnings)
	}
	writeProv(t, perfect, `{"schedule": {"Start": 0, "End": 30000}}`)
	if r, err := MatchUnitDirs(truthDir, perfect, 0, 0.4, 0.8); err != nil || len(r.Warnings) != 1 ||
		!strings.Contains(r.Warnings[0], "spikes outside the common range count as misses") {
		t.Errorf("schedule of 1 s: %+v, %v", r, err)
	}
	os.Remove(filepath.Join(perfect, "dspk.json"))
	if r, err := MatchUnitDirs(truthDir, splitDir, 0, 0.4, 0.8); err != nil || r.WellDetected != 3 || r.Redundant != 1 ||
		r.Truth[0].Accuracy != float64(n0-n0/4)/float64(n0) {
		t.Errorf("split (%d spikes of unit 0): %+v, %v", n0, r, err)
	}
	// Two sorts: the perfect one as the reference of the split one.
	two, err := MatchUnitDirs(perfect, splitDir, 0, 0.4, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(len(split)-n0/4) / float64(len(split)); two.NTruth != 4 || two.Redundant != 1 ||
		math.Abs(two.SpikeAgreement-want) > 1e-15 || two.Reference != "reference sort" {
		t.Errorf("two sorts: %+v, want agreement %v", two, want)
	}
	if self, err := MatchUnitDirs(perfect, perfect, 0, 0.4, 0.8); err != nil || self.SpikeAgreement != 1 {
		t.Errorf("a sort against itself: %+v, %v", self, err)
	}
	// A reference without params.py is refused by name unless -rate
	// gives its rate; labels short of the times are refused by name.
	if _, err := MatchUnitDirs(splitDir, perfect, 0, 0.4, 0.8); err == nil || !strings.Contains(err.Error(), "params.py") ||
		!strings.Contains(err.Error(), "-rate") {
		t.Errorf("reference without params.py: %v", err)
	}
	if r, err := MatchUnitDirs(splitDir, perfect, 30000, 0.4, 0.8); err != nil || r.Reference != "truth" || r.Options.Delta != 12 {
		t.Errorf("reference without params.py, -rate 30000: %+v, %v", r, err)
	}
	bad := sortFolder(t, dir, "bad", tr.SpikeTimes, relabel[:len(relabel)-1], false, true)
	if _, err := MatchUnitDirs(truthDir, bad, 0, 0.4, 0.8); err == nil || !strings.Contains(err.Error(), "spike_clusters.npy") {
		t.Errorf("short spike_clusters: %v", err)
	}
}

// TestParamsSampleRate reads params.py's sample_rate and refuses a
// missing or bad one.
func TestParamsSampleRate(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "params.py")
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if fs, err := paramsSampleRate(write("n_channels_dat = 385\nsample_rate = 25000.\n")); err != nil || fs != 25000 {
		t.Errorf("got %g, %v", fs, err)
	}
	for _, s := range []string{"n_channels_dat = 385\n", "sample_rate = -1\n", "sample_rate = inf\n"} {
		if _, err := paramsSampleRate(write(s)); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}
