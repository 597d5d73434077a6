package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dspk/batch"
	"dspk/export"
	"dspk/probe"
	"dspk/quality"
)

// writeSIFolder writes the golden recording as a SpikeInterface binary
// folder, as recording.save(format="binary") lays it out: binary.json,
// one traces_cached_seg<N>.raw per segment (the golden samples split at
// the sample numbers of cuts) and probegroup.json (the golden probe).
// gain is every channel's gain_to_uV; 0 writes null (no known scale).
func writeSIFolder(t *testing.T, dir string, gain float64, cuts ...int) string {
	t.Helper()
	const ch = 33
	raw, err := os.ReadFile(filepath.Join(goldenRec, simBase+".imec0.ap.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bounds := append(append([]int{0}, cuts...), len(raw)/(2*ch))
	var files []string
	for i := range len(bounds) - 1 {
		name := "traces_cached_seg" + string(rune('0'+i)) + ".raw"
		if err := os.WriteFile(filepath.Join(dir, name), raw[2*ch*bounds[i]:2*ch*bounds[i+1]], 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	var gains []float64
	for range ch {
		if gain > 0 {
			gains = append(gains, gain)
		}
	}
	bj, _ := json.MarshalIndent(map[string]any{
		"class": "spikeinterface.core.binaryrecordingextractor.BinaryRecordingExtractor", "module": "spikeinterface",
		"version": "0.105.0", "relative_paths": true,
		"kwargs": map[string]any{"file_paths": files, "sampling_frequency": 30000.0, "t_starts": nil, "num_channels": ch,
			"dtype": "<i2", "time_axis": 0, "file_offset": 0, "gain_to_uV": gains, "offset_to_uV": make([]float64, ch), "is_filtered": false},
	}, "", "    ")
	var pj bytes.Buffer
	if err := probe.WriteProbeInterface(&pj, goldenProbe()); err != nil {
		t.Fatal(err)
	}
	if os.WriteFile(filepath.Join(dir, "binary.json"), bj, 0o644) != nil || os.WriteFile(filepath.Join(dir, "probegroup.json"), pj.Bytes(), 0o644) != nil {
		t.Fatal("writing the folder")
	}
	return dir
}

// TestSIFolderSameAsRaw sorts and detects a SpikeInterface binary folder
// without gains and the same samples given as a raw file with -rate,
// -channels and -probe: every output file but dspk.json must be equal
// byte for byte. With gains, the sort folder records them
// (channel_gains_uv.npy, one per probe site), which a raw file cannot
// give.
// A folder of two segments detects as the whole file does (params.py and
// ops.npy, which name the data files, aside; the raster's title names the
// recording), and batch plan finds the
// folder as one recording.
func TestSIFolderSameAsRaw(t *testing.T) {
	dir := t.TempDir()
	si := writeSIFolder(t, filepath.Join(dir, "rec_si"), 0)
	seg0 := filepath.Join(si, "traces_cached_seg0.raw")
	rawArgs := []string{"-rate", "30000", "-channels", "33", "-probe", filepath.Join(si, "probegroup.json"), seg0}
	run := func(args ...string) string {
		t.Helper()
		out := filepath.Join(dir, strings.Join([]string{args[0], filepath.Base(args[len(args)-1])}, "-"))
		if code, _, stderr := dspk(t, append([]string{args[0], "-device", "cpu", "-o", out}, args[1:]...)...); code != 0 {
			t.Fatalf("dspk %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return out
	}
	for _, cmd := range []string{"detect", "sort"} {
		got, want := run(cmd, si), run(append([]string{cmd}, rawArgs...)...)
		dropFiles(got, want, "drift_raster.png") // its title names the recording
		if n := len(sameFolders(t, got, want)); n < 15 {
			t.Errorf("%s: %d files compared", cmd, n)
		}
		var prov struct{ Input map[string]any }
		b, _ := os.ReadFile(filepath.Join(got, "dspk.json"))
		if json.Unmarshal(b, &prov) != nil || prov.Input["format"] != "spikeinterface" || prov.Input["dtype"] != "int16" {
			t.Errorf("%s: dspk.json input %v", cmd, prov.Input)
		}
	}

	uv := run("sort", writeSIFolder(t, filepath.Join(dir, "rec_uv"), 2.34375))
	g, err := export.ReadNPYFile(filepath.Join(uv, quality.GainFile))
	if err != nil {
		t.Fatal(err)
	}
	if gf, err := g.Float32(); err != nil || len(gf) != len(goldenProbe().ChanMap) || slices.ContainsFunc(gf, func(v float32) bool { return v != 2.34375 }) {
		t.Errorf("%s of a folder with gain_to_uV 2.34375: %v %v", quality.GainFile, gf, err)
	}

	two := writeSIFolder(t, filepath.Join(dir, "two", "rec_si2"), 0, 70000)
	got := run("detect", two)
	want := run("detect", "-rate", "30000", "-channels", "33", "-probe", filepath.Join(two, "probegroup.json"),
		filepath.Join(goldenRec, simBase+".imec0.ap.bin"))
	dropFiles(got, want, "params.py", "ops.npy", "drift_raster.png")
	sameFolders(t, got, want)
	params, _ := os.ReadFile(filepath.Join(run("detect", filepath.Join(two, "binary.json")), "params.py"))
	if !strings.Contains(string(params), "traces_cached_seg0.raw") || !strings.Contains(string(params), "traces_cached_seg1.raw") {
		t.Errorf("params.py of two segments:\n%s", params)
	}

	if code, _, stderr := dspk(t, "batch", "plan", "-o", filepath.Join(dir, "plan"), filepath.Join(dir, "two")); code != 0 {
		t.Fatalf("batch plan: exit %d: %s", code, stderr)
	}
	pl, err := batch.Read(filepath.Join(dir, "plan", "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Rows) != 1 || len(pl.Rows[0].Files) != 1 || pl.Rows[0].Files[0] != two || pl.Rows[0].Bytes != 135000*33*2 {
		t.Errorf("plan rows %+v; want the folder %s as one recording of %d bytes", pl.Rows, two, 135000*33*2)
	}
}

// dropFiles removes the named files from the folders.
func dropFiles(a, b string, names ...string) {
	for _, n := range names {
		os.Remove(filepath.Join(a, n))
		os.Remove(filepath.Join(b, n))
	}
}
