package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dspk/export"
	"dspk/probe"
	"dspk/sim"
)

// splitGolden writes the golden recording as three files of one run,
// run_g0_t0/_t1/_t2, split at samples that fall inside windows, each with
// its meta's fileSizeBytes; it returns their paths.
func splitGolden(t *testing.T, dir string) []string {
	t.Helper()
	bin := filepath.Join(goldenRec, simBase+".imec0.ap.bin")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(strings.TrimSuffix(bin, ".bin") + ".meta")
	if err != nil {
		t.Fatal(err)
	}
	const row = 2 * 33
	cuts := []int{0, 41234 * row, 97001 * row, len(data)}
	re := regexp.MustCompile(`(?m)^fileSizeBytes=\d+`)
	var paths []string
	for i := range 3 {
		part := data[cuts[i]:cuts[i+1]]
		p := filepath.Join(dir, fmt.Sprintf("run_g0_t%d.imec0.ap.bin", i))
		m := re.ReplaceAll(meta, []byte(fmt.Sprintf("fileSizeBytes=%d", len(part))))
		if err := os.WriteFile(p, part, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(strings.TrimSuffix(p, ".bin")+".meta", m, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestSplitRunDetection: a SpikeGLX run split over three files, given as
// a list, a glob or on standard input, gives byte for byte the detection
// of the single file, and params.py lists the files in order.
func TestSplitRunDetection(t *testing.T) {
	dir := t.TempDir()
	paths := splitGolden(t, dir)
	bin := filepath.Join(goldenRec, simBase+".imec0.ap.bin")
	one := filepath.Join(dir, "one")
	if code, _, stderr := dspk(t, "detect", "-o", one, "-device", "cpu", bin); code != 0 {
		t.Fatalf("detect: exit %d: %s", code, stderr)
	}
	for name, args := range map[string][]string{
		"list": {paths[2], paths[0], paths[1]},
	} {
		out := filepath.Join(dir, name)
		if code, _, stderr := dspk(t, append([]string{"detect", "-o", out, "-device", "cpu"}, args...)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		for _, f := range goldenArrays {
			a, err1 := os.ReadFile(filepath.Join(one, f))
			b, err2 := os.ReadFile(filepath.Join(out, f))
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				t.Errorf("%s: %s differs from the single file's (%v %v)", name, f, err1, err2)
			}
		}
		params, _ := os.ReadFile(filepath.Join(out, "params.py"))
		var quoted []string
		for _, p := range paths {
			abs, _ := filepath.Abs(p)
			quoted = append(quoted, "'"+abs+"'")
		}
		if want := "dat_path = [" + strings.Join(quoted, ", ") + "]"; !strings.Contains(string(params), want) {
			t.Errorf("%s: params.py\n%s\nlacks %s", name, params, want)
		}
		prov, _ := os.ReadFile(filepath.Join(out, "dspk.json"))
		if !strings.Contains(string(prov), "run_g0_t2.imec0.ap.bin") {
			t.Errorf("%s: dspk.json does not list the files", name)
		}
	}
	code, out, stderr := dspk(t, "info", filepath.Join(dir, "run_g0_t*.imec0.ap.bin"))
	if code != 0 || !strings.Contains(out, "part 2:") || !strings.Contains(out, "samples 97001–") {
		t.Errorf("info of the run: %d %s %s", code, out, stderr)
	}
	// "-": the paths on standard input.
	list := filepath.Join(dir, "list.txt")
	os.WriteFile(list, []byte(strings.Join(paths, "\n")+"\n"), 0o644)
	f, err := os.Open(list)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdin := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = stdin }()
	code, out, stderr = dspk(t, "info", "-")
	if code != 0 || !strings.Contains(out, "part 2:") {
		t.Errorf("info -: %d %s %s", code, out, stderr)
	}
}

// probe32 writes the golden probe as a Kilosort JSON of n_chan 32 (one
// row fewer than the file) and returns its path.
func probe32(t *testing.T, dir string) string {
	t.Helper()
	p := goldenProbe()
	var xs, ys, cm []string
	for i := range p.Len() {
		xs, ys, cm = append(xs, fmt.Sprint(p.X[i])), append(ys, fmt.Sprint(p.Y[i])), append(cm, fmt.Sprint(p.ChanMap[i]))
	}
	js := filepath.Join(dir, "probe32.json")
	doc := `{"chanMap": [` + strings.Join(cm, ",") + `], "xc": [` + strings.Join(xs, ",") + `], "yc": [` + strings.Join(ys, ",") + `], "n_chan": 32}`
	if err := os.WriteFile(js, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return js
}

// TestFewerProbeChannels: a 32-contact probe JSON (n_chan 32) on the
// golden 33-channel file is fitted to it, and info says which rows it
// reads.
func TestFewerProbeChannels(t *testing.T) {
	dir := t.TempDir()
	js := probe32(t, dir)
	bin := filepath.Join(goldenRec, simBase+".imec0.ap.bin")
	code, out, stderr := dspk(t, "info", "-probe", js, bin)
	if code != 0 || !strings.Contains(out, "rows used:   32 of 33: 0–31 (unused: 32)") {
		t.Errorf("info: %d\n%s%s", code, out, stderr)
	}
	det := filepath.Join(dir, "det")
	if code, _, stderr := dspk(t, "detect", "-o", det, "-device", "cpu", "-probe", js, bin); code != 0 {
		t.Fatalf("detect with a 32-channel probe on a 33-channel file: %d %s", code, stderr)
	}
	// The same geometry as the file's own: the golden result.
	for _, f := range goldenArrays {
		a, _ := os.ReadFile(filepath.Join(goldenWant, "default", f))
		b, _ := os.ReadFile(filepath.Join(det, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from the golden result", f)
		}
	}
}

// TestLocustTetrodeDefaults: the real locust tetrode recording (4 wires,
// 15 kHz, 28.8 s) is detected with default settings, with a warning that
// CAR over four wires can create spikes on a silent wire.
func TestLocustTetrodeDefaults(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join("..", "..", "recording", "testdata", "locust", "locust_trial_01.raw")
	if _, err := os.Stat(raw); err != nil {
		t.Skip(err)
	}
	pj := filepath.Join(dir, "tetrode.json")
	os.WriteFile(pj, []byte(`{"chanMap": [0, 1, 2, 3], "xc": [0, 20, 0, 20], "yc": [0, 0, 20, 20], "kcoords": [0, 0, 0, 0], "n_chan": 4}`), 0o644)
	out := filepath.Join(dir, "det")
	code, stdout, stderr := dspk(t, "detect", "-o", out, "-device", "cpu", "-probe", pj, raw)
	if code != 0 {
		t.Fatalf("detect: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "over 4 channels") || !strings.Contains(stderr, "silent wire") {
		t.Errorf("no CAR warning:\n%s", stderr)
	}
	if !strings.Contains(stdout, "Detected ") {
		t.Errorf("stdout %q", stdout)
	}
	t.Logf("%s%s", stdout, stderr)
}

// TestOpenEphysSessionDetection: the golden recording stored as the AP
// stream of an Open Ephys session (with an LFP stream next to it) is
// detected from the session folder as from the SpikeGLX file, and the
// first sample number of sample_numbers.npy is recorded in dspk.json.
func TestOpenEphysSessionDetection(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(goldenRec, simBase+".imec0.ap.bin")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(dir, "2026-12-01_10-00-00")
	rec := filepath.Join(session, "Record Node 101", "experiment1", "recording1")
	chans := func(n int, prefix string) string {
		var c []string
		for i := range n {
			c = append(c, fmt.Sprintf(`{"channel_name": "%s%d", "bit_volts": 2.34375, "units": "uV"}`, prefix, i+1))
		}
		return strings.Join(c, ", ")
	}
	oebin := `{"GUI version": "0.6.7", "continuous": [
	  {"folder_name": "Neuropix-PXI-100.ProbeA-LFP/", "sample_rate": 2500.0, "stream_name": "ProbeA-LFP", "num_channels": 33, "channels": [` + chans(33, "LFP") + `]},
	  {"folder_name": "Neuropix-PXI-100.ProbeA-AP/", "sample_rate": 30000.0, "stream_name": "ProbeA-AP", "num_channels": 33, "channels": [` + chans(33, "AP") + `]}]}`
	for _, s := range []string{"Neuropix-PXI-100.ProbeA-AP", "Neuropix-PXI-100.ProbeA-LFP"} {
		if err := os.MkdirAll(filepath.Join(rec, "continuous", s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(rec, "structure.oebin"), []byte(oebin), 0o644)
	ap := filepath.Join(rec, "continuous", "Neuropix-PXI-100.ProbeA-AP")
	os.WriteFile(filepath.Join(ap, "continuous.dat"), data, 0o644)
	os.WriteFile(filepath.Join(rec, "continuous", "Neuropix-PXI-100.ProbeA-LFP", "continuous.dat"), data[:33*2*100], 0o644)
	n := len(data) / 66
	sn := make([]int64, n)
	for i := range sn {
		sn[i] = 987654 + int64(i)
	}
	if err := export.WriteNPYFile(filepath.Join(ap, "sample_numbers.npy"), []int{n}, sn); err != nil {
		t.Fatal(err)
	}
	js := probe32(t, dir)
	out := filepath.Join(dir, "det")
	if code, _, stderr := dspk(t, "detect", "-o", out, "-device", "cpu", "-probe", js, session); code != 0 {
		t.Fatalf("detect: exit %d: %s", code, stderr)
	}
	for _, f := range goldenArrays {
		a, _ := os.ReadFile(filepath.Join(goldenWant, "default", f))
		b, _ := os.ReadFile(filepath.Join(out, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from the golden result", f)
		}
	}
	prov, _ := os.ReadFile(filepath.Join(out, "dspk.json"))
	if !strings.Contains(string(prov), `"first_sample": 987654`) {
		t.Errorf("dspk.json lacks the first sample:\n%s", prov)
	}
	code, _, stderr := dspk(t, "detect", "-o", filepath.Join(dir, "lfp"), "-device", "cpu", "-probe", js, "-stream", "ProbeA-LFP", session)
	if code != 1 || !strings.Contains(stderr, "LFP rate") {
		t.Errorf("LFP stream: exit %d: %s", code, stderr)
	}
	code, stdout, _ := dspk(t, "info", "-probe", js, session)
	if code != 0 || !strings.Contains(stdout, "first sample: 987654") || !strings.Contains(stdout, "* Record Node 101/experiment1/recording1#Neuropix-PXI-100.ProbeA-AP") {
		t.Errorf("info: %d\n%s", code, stdout)
	}
}

// TestProbeInterface384On385: a 384-contact probeinterface file (what
// probeinterface.read_spikeglx and write_probeinterface give, one row
// fewer than the .ap.bin) is used on the 385-channel file.
func TestProbeInterface384On385(t *testing.T) {
	dir := t.TempDir()
	cfg := sim.DefaultConfig()
	cfg.Seconds = 0.05
	cfg.Units = 3
	bin, _, err := sim.WriteSpikeGLX(dir, "np1_g0_t0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	np1 := probe.NP1()
	var pos, dci []string
	for i := range np1.Len() {
		pos = append(pos, fmt.Sprintf("[%g, %g]", np1.X[i], np1.Y[i]))
		dci = append(dci, fmt.Sprint(np1.ChanMap[i]))
	}
	js := filepath.Join(dir, "np1_384.json")
	os.WriteFile(js, []byte(`{"specification": "probeinterface", "version": "0.2.24", "probes": [{"ndim": 2, "si_units": "um", "contact_positions": [`+
		strings.Join(pos, ", ")+`], "device_channel_indices": [`+strings.Join(dci, ", ")+`]}]}`), 0o644)
	code, out, stderr := dspk(t, "info", "-probe", js, bin)
	if code != 0 || !strings.Contains(out, "384 sites") || !strings.Contains(out, "rows used:   384 of 385: 0–383 (unused: 384)") {
		t.Errorf("info: %d\n%s%s", code, out, stderr)
	}
}
