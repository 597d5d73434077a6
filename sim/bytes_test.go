package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDefaultBytesPinned pins the bytes of the default model: the .bin
// bytes and the truth files that predate the motion truth, of short NP1
// recordings without and with the rigid drift that predates the motion
// models. Configs that leave the new fields at zero must keep producing
// exactly these bytes (the default writes no other truth file).
func TestDefaultBytesPinned(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"default", shortConfig(0.5), "d6cca75d30301e9f92be2e4c44158353b9457ffefc6fb7b9d5aa6c3b51bf3797"},
		{"drift", func() Config { c := shortConfig(0.5); c.DriftUmPerS = 40; c.Seed = 7; return c }(), "b379afe368911760903209fd9f4a3a2766d1d6012e8084556eb06a8ac8079725"},
		{"small", func() Config { c := shortConfig(0.3); c.Probe = smallProbe(); c.Units = 4; return c }(), "529c7923ffcfe656d02da96b964c0b33df51ca79304b215d6c5ee8cd82be2ded"},
	}
	for _, c := range cases {
		rec, err := Generate(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		h.Write(fileBytes(t, rec))
		dir := t.TempDir()
		if err := rec.Truth().WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		all, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		classic := []string{FileSpikeTimes, FileSpikeClusters, FileUnitPositions, FileUnitAmplitudes,
			FileUnitPeakChannel, FileUnitWaveforms, FileTruthJSON}
		var names []string
		for _, n := range all {
			if slices.Contains(classic, filepath.Base(n)) {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		if c.cfg.DriftUmPerS == 0 && len(all) != len(classic) {
			t.Errorf("%s: %d truth files, want %d", c.name, len(all), len(classic))
		}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			h.Write([]byte(filepath.Base(n)))
			h.Write(b)
		}
		got := hex.EncodeToString(h.Sum(nil))
		t.Logf("%s: %s (%d truth files)", c.name, got, len(names))
		if got != c.want {
			t.Errorf("%s: bytes hash %s, want %s", c.name, got, c.want)
		}
	}
}
