package sim

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWriteFolder checks the simulate folder: the SpikeGLX pair, the
// truth read back equal to the one returned, dspk.json's keys (the
// harder models' only when used), and that an existing folder is refused
// unless overwritten, leaving it as it was.
func TestWriteFolder(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sim")
	cfg := shortConfig(0.5)
	cfg.Probe, cfg.Units = smallProbe(), 4
	bin, tr, err := WriteFolder(context.Background(), out, cfg, FolderOptions{Version: "v-test"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(out, FolderBase+".imec0.ap.bin"); bin != want {
		t.Errorf("bin %s, want %s", bin, want)
	}
	if _, err := os.Stat(strings.TrimSuffix(bin, ".bin") + ".meta"); err != nil {
		t.Error(err)
	}
	back, err := ReadTruthDir(filepath.Join(out, "truth"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.SpikeTimes, tr.SpikeTimes) || len(tr.SpikeTimes) == 0 {
		t.Errorf("truth read back: %d spikes, returned %d", len(back.SpikeTimes), len(tr.SpikeTimes))
	}
	prov := readProv(t, out)
	if prov["dspk_version"] != "v-test" || prov["probe"] != "small" || prov["units"] != 4.0 || prov["spikes"] != float64(len(tr.SpikeTimes)) ||
		prov["recording"] != filepath.Base(bin) || prov["command"] != "simulate" {
		t.Errorf("dspk.json %v", prov)
	}
	for _, k := range []string{"preset", "motion_steps", "similar_pairs"} {
		if _, ok := prov[k]; ok {
			t.Errorf("default dspk.json has %q", k)
		}
	}

	cfg.MotionSteps = []MotionStep{{TimeS: 0.2, Um: 5}}
	if _, _, err := WriteFolder(context.Background(), out, cfg, FolderOptions{}); err == nil {
		t.Fatal("an existing folder was not refused")
	}
	if readProv(t, out)["dspk_version"] != "v-test" {
		t.Error("the refused write changed the folder")
	}
	if _, _, err := WriteFolder(context.Background(), out, cfg, FolderOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if p := readProv(t, out); p["motion_steps"] == nil || p["unit_z_um"] == nil {
		t.Errorf("dspk.json with motion steps lacks their keys: %v", p)
	}
}

// readProv reads the dspk.json of the folder dir.
func readProv(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "dspk.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestParseSteps checks the steps read and the errors naming the bad
// step.
func TestParseSteps(t *testing.T) {
	got, err := ParseSteps(" 120:10, ,240:-15.5 ")
	if err != nil || !slices.Equal(got, []MotionStep{{TimeS: 120, Um: 10}, {TimeS: 240, Um: -15.5}}) {
		t.Errorf("got %v, %v", got, err)
	}
	if got, err := ParseSteps(""); err != nil || got != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"1:x", "5", "-1:3", "1:NaN", "1:2,3:Inf"} {
		if _, err := ParseSteps(bad); err == nil || !strings.Contains(err.Error(), "want TIME_S:UM") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := ParseSteps("1:2,3:Inf"); err == nil || !strings.HasPrefix(err.Error(), "step 2 ") {
		t.Errorf("the error names the wrong step: %v", err)
	}
}

// TestOverridesApply checks which settings Apply sets with and without
// a preset, the similar pairs' share kept when the units change, and
// the errors naming the flag.
func TestOverridesApply(t *testing.T) {
	o := Overrides{Given: map[string]bool{}, Seconds: 2, Units: 50, Seed: 9, DriftUmPerS: 0.5, SineUm: 4}
	c := DefaultConfig()
	if err := o.Apply(&c, false); err != nil {
		t.Fatal(err)
	}
	if c.Seconds != 2 || c.Units != 50 || c.Seed != 9 || c.DriftUmPerS != 0.5 || c.MotionSineUm != 0 {
		t.Errorf("without a preset: %+v", c)
	}
	p, err := Preset("ladder-dense")
	if err != nil {
		t.Fatal(err)
	}
	c = p
	o.Given = map[string]bool{"units": true, "sine-um": true, "steps": true}
	o.Steps = "1:2"
	if err := o.Apply(&c, true); err != nil {
		t.Fatal(err)
	}
	if c.Seconds != p.Seconds || c.Seed != p.Seed || c.Units != 50 || c.SimilarPairs != 5 || c.MotionSineUm != 4 ||
		!slices.Equal(c.MotionSteps, []MotionStep{{TimeS: 1, Um: 2}}) {
		t.Errorf("on ladder-dense: %+v", c)
	}
	o.Steps = "x"
	if err := o.Apply(&c, true); err == nil || !strings.HasPrefix(err.Error(), "-steps: step 1") {
		t.Errorf("bad steps: %v", err)
	}
	o.Given, o.AmpMax = map[string]bool{"amp-max": true}, -1/zero()
	if err := o.Apply(&c, true); err == nil || err.Error() != "-amp-max -Inf: must be finite" {
		t.Errorf("infinite -amp-max: %v", err)
	}
}

// zero returns 0 where the compiler cannot see it.
func zero() float64 { return 0 }
