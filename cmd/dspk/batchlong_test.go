package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"dspk/export"
)

// TestSampleIndicesPast2to31 places a 20-s recording at sample
// 2 147 490 000 (past 2³¹) of a sparse SpikeGLX file and detects it with
// -tmin there: every spike time is the small file's plus the offset,
// exactly, and every other result array is byte-identical (the windows'
// data and context are the same).
func TestSampleIndicesPast2to31(t *testing.T) {
	dir := t.TempDir()
	small := writeBatchRec(t, filepath.Join(dir, "small"), "rec", 0, 20, 9)
	const offset = 2147490000 // 214 749 s at 10 kHz, > 2³¹ = 2 147 483 648
	const chans = 33
	data, err := os.ReadFile(small)
	if err != nil {
		t.Fatal(err)
	}
	bigDir := filepath.Join(dir, "big")
	if err := os.MkdirAll(bigDir, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(bigDir, "rec_g0_t0.imec0.ap.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(offset)*chans*2 + int64(len(data))
	if err := f.Truncate(size); err != nil {
		f.Close()
		t.Skipf("no sparse file of %d bytes here: %v", size, err)
	}
	if _, err := f.WriteAt(data, int64(offset)*chans*2); err != nil {
		f.Close()
		t.Skipf("no sparse file of %d bytes here: %v", size, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(recMeta(small))
	if err != nil {
		t.Fatal(err)
	}
	m := setMeta("fileSizeBytes", strconv.FormatInt(size, 10))(string(meta))
	m = setMeta("fileTimeSecs", strconv.FormatFloat(float64(size/chans/2)/10000, 'f', -1, 64))(m)
	if err := os.WriteFile(recMeta(big), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	outSmall, outBig := filepath.Join(dir, "det-small"), filepath.Join(dir, "det-big")
	for _, c := range [][]string{
		{"detect", "-device", "cpu", "-batch", "20000", "-o", outSmall, small},
		{"detect", "-device", "cpu", "-batch", "20000", "-tmin", strconv.Itoa(offset / 10000), "-o", outBig, big},
	} {
		if code, _, stderr := dspk(t, c...); code != 0 {
			t.Fatalf("%v: %d %s", c, code, stderr)
		}
	}
	a, b := readTimes(t, outSmall), readTimes(t, outBig)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d spikes in the small file, %d past 2³¹", len(a), len(b))
	}
	for i := range a {
		if b[i] != a[i]+offset {
			t.Fatalf("spike %d: time %d past 2³¹, want %d + %d = %d", i, b[i], a[i], offset, a[i]+offset)
		}
	}
	for _, name := range []string{"pc_features.npy", "amplitudes.npy", "spike_centres.npy", "spike_positions.npy",
		"whitening_mat.npy", "wTEMP.npy", "templates.npy", "spike_clusters.npy"} {
		x, _ := os.ReadFile(filepath.Join(outSmall, name))
		y, _ := os.ReadFile(filepath.Join(outBig, name))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs past 2³¹ (%d and %d bytes)", name, len(x), len(y))
		}
	}
}

// recMeta is the .meta path of a SpikeGLX .bin.
func recMeta(bin string) string { return bin[:len(bin)-len(".bin")] + ".meta" }

// readTimes reads spike_times.npy of a detect folder.
func readTimes(t *testing.T, dir string) []int64 { return readInt64s(t, dir, "spike_times.npy") }

// readInt64s reads the integer array name of the folder dir as int64s.
func readInt64s(t *testing.T, dir, name string) []int64 {
	t.Helper()
	a, err := export.ReadNPYFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
