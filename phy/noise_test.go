package phy

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
)

// TestFolderScales checks the noise levels of a folder without
// noise_levels.npy: measured on the raw file params.py names (white noise
// of SD 10 counts on the mapped rows: about 10·√0.98 after the
// high-pass, without CAR as dspk.json says), and, where that file is
// gone, none and a warning naming the whitening.
func TestFolderScales(t *testing.T) {
	dir := t.TempDir()
	const C, fs, dur = 6, 30000.0, 4
	r := rand.New(rand.NewPCG(5, 6))
	raw := make([]byte, 2*C*int(fs*dur))
	for i := 0; i < len(raw); i += 2 {
		binary.LittleEndian.PutUint16(raw[i:], uint16(int16(math.Round(10*r.NormFloat64()))))
	}
	bin := filepath.Join(dir, "rec.bin")
	files := map[string]string{
		"rec.bin":   string(raw),
		"params.py": "dat_path = 'rec.bin'\nn_channels_dat = 6\ndtype = 'int16'\noffset = 0\nsample_rate = 30000.0\nhp_filtered = False\n",
		"dspk.json": `{"config": {"do_CAR": false, "highpass_cutoff": 300}}`,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := export.WriteNPYFile(filepath.Join(dir, "channel_map.npy"), []int{4}, []int32{0, 2, 3, 5}); err != nil {
		t.Fatal(err)
	}
	sc, note := folderScales(dir)
	if sc == nil || note != "" || len(sc.Noise) != 4 || sc.Gains != nil {
		t.Fatalf("scales %+v, note %q: want 4 noise levels, no gains, no note", sc, note)
	}
	want := 10 * math.Sqrt(0.98)
	for c, v := range sc.Noise {
		if math.Abs(float64(v)-want) > 0.05*want {
			t.Errorf("site %d: noise level %.3f, want %.3f ± 5 %%", c, v, want)
		}
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if sc, note = folderScales(dir); sc != nil || !strings.Contains(note, "whitening") {
		t.Errorf("without the recording: scales %+v, note %q; want none and a note on the whitening", sc, note)
	}
}
