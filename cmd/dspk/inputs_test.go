package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
)

// goldenData returns the golden recording's int16 values (33 channels).
func goldenData(t *testing.T) []int16 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenRec, simBase+".imec0.ap.bin"))
	if err != nil {
		t.Fatal(err)
	}
	v := make([]int16, len(b)/2)
	for i := range v {
		v[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return v
}

// writeRaw writes the golden values into dir/name as a headerless file of
// the given type: int16 as they are, uint16 centred on 32768 (Intan's
// amplifier .dat), float32 in counts (NaN or +Inf at the values of bad).
func writeRaw(t *testing.T, dir, name, dtype string, bad map[int]float32) string {
	t.Helper()
	v := goldenData(t)
	var b []byte
	for i, x := range v {
		switch dtype {
		case "int16":
			b = binary.LittleEndian.AppendUint16(b, uint16(x))
		case "uint16":
			b = binary.LittleEndian.AppendUint16(b, uint16(int32(x)+32768))
		case "float32":
			f := float32(x)
			if y, ok := bad[i]; ok {
				f = y
			}
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// provWarnings reads the warnings of dir/dspk.json.
func provWarnings(t *testing.T, dir string) string {
	t.Helper()
	var prov struct{ Warnings []string }
	b, err := os.ReadFile(filepath.Join(dir, "dspk.json"))
	if err != nil || json.Unmarshal(b, &prov) != nil {
		t.Fatalf("dspk.json: %v", err)
	}
	return strings.Join(prov.Warnings, "\n")
}

// withProbe is detectArgs with the case's probe.json and extra flags.
func withProbe(extra ...string) func(e *env) []string {
	return func(e *env) []string {
		return detectArgs(append([]string{"-probe", filepath.Join(e.dir, "probe.json")}, extra...)...)(e)
	}
}

// TestInputsRefused runs dspk with flags and probe fields that contradict
// the input, a wrong integer type and non-finite float32 data: each must
// be refused with the stated status and a message holding the substring,
// leaving the folder as it was.
func TestInputsRefused(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	raw := func(name, dtype string, bad map[int]float32) func(t *testing.T, e *env) {
		return func(t *testing.T, e *env) { writeRaw(t, e.dir, name, dtype, bad); probe32(t, e.dir) }
	}
	at := func(e *env, name string) string { return filepath.Join(e.dir, name) }
	cases := []struct {
		name  string
		setup func(t *testing.T, e *env)
		args  func(e *env) []string
		code  int
		want  string
	}{
		{name: "-dtype on SpikeGLX", args: detectArgs("-dtype", "uint16"), code: 1, want: "applies only to raw files, and this is a SpikeGLX file"},
		{name: "-scale on SpikeGLX", args: detectArgs("-scale", "2"), code: 1, want: "a scale (2) applies only to float32 raw files"},
		{name: "-stream on SpikeGLX", args: detectArgs("-stream", "ProbeA-AP"), code: 1, want: "applies only to Open Ephys recordings"},
		{name: "-strict-size on raw", setup: raw("a.dat", "int16", nil), args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-o", e.out, "-channels", "33", "-rate", "30000", "-strict-size", at(e, "a.dat")}
		}, code: 1, want: "applies only to SpikeGLX files"},
		{name: "-scale on int16 raw", setup: raw("a.dat", "int16", nil), args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-o", e.out, "-channels", "33", "-rate", "30000", "-scale", "3", at(e, "a.dat")}
		}, code: 1, want: "applies only to float32 data"},
		{name: "-stream on raw", setup: raw("a.dat", "int16", nil), args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-o", e.out, "-channels", "33", "-rate", "30000", "-stream", "AP", at(e, "a.dat")}
		}, code: 1, want: "applies only to Open Ephys recordings, and this is a raw file"},
		{name: "probe n_chan 500", setup: writeProbe(`{"chanMap":[0,1,2,3],"xc":[0,0,0,0],"yc":[0,20,40,60],"n_chan":500}`), args: probeArgs, code: 1, want: "states n_chan = 500 but"},
		{name: "-nearest_chans beyond the probe", args: detectArgs("-nearest_chans", "100000"), code: 2, want: "-nearest_chans 100000: probe"},
		{name: "-nearest_chans beyond a group", setup: writeProbe(`{"chanMap":[0,1,2,3,4,5],"xc":[0,20,300,320,600,620],"yc":[0,0,0,0,0,0],"kcoords":[0,0,1,1,2,2],"n_chan":33}`),
			args: withProbe("-groups", "-nearest_chans", "3"), code: 2, want: "group 0 of probe"},
		{name: "-th-single-ch with -templates", args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-o", e.out, "-templates", filepath.Join(goldenWant, "default"), "-th-single-ch", "5", e.bin}
		}, code: 2, want: "-th-single-ch does not apply"},
		{name: "preprocess -nearest_templates", args: func(e *env) []string {
			return []string{"preprocess", "-device", "cpu", "-o", e.out, "-nearest_templates", "5", e.bin}
		}, code: 2, want: "preprocess does not detect"},
		{name: "-groups on one shank", args: detectArgs("-groups"), code: 2, want: "-groups does not apply: every site of probe"},
		{name: "-force-dtype on float32", setup: raw("f.raw", "float32", nil), args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-o", e.out, "-channels", "33", "-rate", "30000", "-dtype", "float32", "-scale", "1",
				"-force-dtype", "-probe", at(e, "probe32.json"), at(e, "f.raw")}
		}, code: 2, want: "-force-dtype does not apply"},
		{name: "-car-groups without -groups", args: detectArgs("-car-groups"), code: 1, want: "-car-groups needs -groups"},
		{name: "-car-groups on stereotrodes", setup: writeProbe(`{"chanMap":[0,1,2,3],"xc":[0,20,250,270],"yc":[0,0,0,0],"kcoords":[0,0,1,1],"n_chan":33}`),
			args: withProbe("-groups", "-car-groups"), code: 1, want: "at least 16 channels in every group, and group 0"},
		{name: "uint16 read as int16", setup: raw("amp.dat", "uint16", nil), args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-o", e.out, "-channels", "33", "-rate", "30000", "-probe", at(e, "probe32.json"), at(e, "amp.dat")}
		}, code: 1, want: "give -dtype uint16 (or -force-dtype"},
		{name: "int16 read as uint16", setup: raw("amp.dat", "int16", nil), args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-o", e.out, "-channels", "33", "-rate", "30000", "-dtype", "uint16", "-probe", at(e, "probe32.json"), at(e, "amp.dat")}
		}, code: 1, want: "looks like int16 data read as uint16; give -dtype int16"},
		{name: "NaN in float32", setup: raw("f.raw", "float32", map[int]float32{33*1234 + 5: nan, 33*2000 + 1: inf}), args: func(e *env) []string {
			return []string{"detect", "-device", "cpu", "-o", e.out, "-channels", "33", "-rate", "30000", "-dtype", "float32", "-scale", "1", at(e, "f.raw")}
		}, code: 1, want: "f.raw: sample 1234, channel 5 is NaN"},
		{name: "-Inf in float32", setup: raw("f.raw", "float32", map[int]float32{33*70000 + 32: float32(math.Inf(-1))}), args: func(e *env) []string {
			return []string{"preprocess", "-device", "cpu", "-o", e.out, "-channels", "33", "-rate", "30000", "-dtype", "float32", "-scale", "1", at(e, "f.raw")}
		}, code: 1, want: "f.raw: sample 70000, channel 32 is -Inf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &env{dir: t.TempDir()}
			e.bin = copyRec(t, e.dir, nil)
			e.out = filepath.Join(e.dir, "new", "res")
			if c.setup != nil {
				c.setup(t, e)
			}
			before := tree(t, e.dir)
			code, _, stderr := dspk(t, c.args(e)...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, c.code, c.want)
			}
			if after := tree(t, e.dir); after != before {
				t.Errorf("the folder changed:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// TestInputWarnings checks warnings that let a run go on, on stderr and in
// dspk.json: uint16 data forced as int16 (-force-dtype), all-zero data, a
// truncated SpikeGLX file, a bad sample_numbers.npy and a -probe that
// contradicts an Open Ephys settings.xml.
func TestInputWarnings(t *testing.T) {
	dir := t.TempDir()
	check := func(name, stderr, out string, wants ...string) {
		t.Helper()
		got := provWarnings(t, out)
		for _, w := range wants {
			if !strings.Contains(stderr, "warning: ") || !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", name, w, stderr)
			}
			if !strings.Contains(got, w) {
				t.Errorf("%s: dspk.json warnings lack %q: %q", name, w, got)
			}
		}
	}
	// uint16 forced as int16.
	amp := writeRaw(t, dir, "amp.dat", "uint16", nil)
	out := filepath.Join(dir, "forced")
	code, _, stderr := dspk(t, "detect", "-device", "cpu", "-force-dtype", "-probe", probe32(t, dir), "-channels", "33", "-rate", "30000", "-o", out, amp)
	if code != 0 {
		t.Fatalf("forced: exit %d: %s", code, stderr)
	}
	check("forced", stderr, out, "lie 16384 counts or more from 0", "give -dtype uint16")

	// All zero.
	zero := filepath.Join(dir, "zero.dat")
	if err := os.WriteFile(zero, make([]byte, 2*33*150000), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "zero")
	code, _, stderr = dspk(t, "preprocess", "-device", "cpu", "-probe", probe32(t, dir), "-channels", "33", "-rate", "30000", "-o", out, zero)
	if code != 0 {
		t.Fatalf("zero: exit %d: %s", code, stderr)
	}
	check("zero", stderr, out, "every site is zero in the")

	// A truncated SpikeGLX file: half a time point missing at the end.
	bin := copyRec(t, filepath.Join(dir, "trunc"), nil)
	b, _ := os.ReadFile(bin)
	os.WriteFile(bin, b[:len(b)-33], 0o644)
	out = filepath.Join(dir, "trunc", "det")
	code, _, stderr = dspk(t, "detect", "-device", "cpu", "-o", out, bin)
	if code != 0 {
		t.Fatalf("truncated: exit %d: %s", code, stderr)
	}
	check("truncated", stderr, out, "fileSizeBytes")

	// Open Ephys: sample_numbers.npy of the wrong length, settings.xml of
	// a Neuropixels 1.0 probe at the golden positions.
	session := openEphysGolden(t, dir)
	out = filepath.Join(dir, "oe")
	pr := filepath.Join(dir, "probe15.json")
	os.WriteFile(pr, []byte(ksProbe(list32(func(i int) string { return fmt.Sprint([]int{43, 11, 59, 27}[i%4]) }),
		list32(func(i int) string { return fmt.Sprint(15 * (i/2 + 1)) }))), 0o644)
	code, _, stderr = dspk(t, "detect", "-device", "cpu", "-probe", pr, "-o", out, session)
	if code != 0 {
		t.Fatalf("open ephys: exit %d: %s", code, stderr)
	}
	check("open ephys", stderr, out, "holds 5 sample numbers but", "contradicts the geometry in settings.xml (30 of 32 sites elsewhere")
	code, _, stderr = dspk(t, "info", "-probe", "np2", session)
	if code != 0 || !strings.Contains(stderr, "-probe np2, but settings.xml states a Neuropixels 1.0 probe (PRB_1_4_0480_1)") {
		t.Errorf("info -probe np2: exit %d, %s", code, stderr)
	}
	// compare: truth simulated on Neuropixels 1.0 (384 sites), detections
	// of the 32-site golden probe (and of another duration).
	simDir := filepath.Join(dir, "sim")
	if code, _, stderr := dspk(t, "simulate", "-o", simDir, "-duration", "1s", "-units", "3"); code != 0 {
		t.Fatalf("simulate: %d %s", code, stderr)
	}
	// They are folders of another recording: refused before the probes
	// are compared.
	code, stdout, stderr := dspk(t, "compare", "-json", "-truth", filepath.Join(simDir, "truth"), filepath.Join(dir, "trunc", "det"))
	if code != 1 || !strings.Contains(stderr, "it is a folder of another recording") || stdout != "" {
		t.Errorf("compare of another probe: exit %d, stderr %q", code, stderr)
	}
	// The probe of the settings: no warning.
	code, _, stderr = dspk(t, "info", session)
	if code != 0 || strings.Contains(stderr, "settings.xml") {
		t.Errorf("info: exit %d, %s", code, stderr)
	}
}

// openEphysGolden writes the golden recording as the AP stream of an Open
// Ephys session under dir, with a settings.xml stating its geometry (a
// Neuropixels 1.0 part) and a sample_numbers.npy of 5 entries; it returns
// the session folder.
func openEphysGolden(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenRec, simBase+".imec0.ap.bin"))
	if err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(dir, "session")
	node := filepath.Join(session, "Record Node 101")
	rec := filepath.Join(node, "experiment1", "recording1")
	ap := filepath.Join(rec, "continuous", "Neuropix-PXI-100.ProbeA-AP")
	if err := os.MkdirAll(ap, 0o755); err != nil {
		t.Fatal(err)
	}
	var ch []string
	for i := range 33 {
		ch = append(ch, fmt.Sprintf(`{"channel_name": "AP%d", "bit_volts": 2.34375, "units": "uV"}`, i+1))
	}
	oebin := `{"GUI version": "0.6.7", "continuous": [{"folder_name": "Neuropix-PXI-100.ProbeA-AP/", "sample_rate": 30000.0,
	  "source_processor_name": "Neuropix-PXI", "stream_name": "ProbeA-AP", "num_channels": 33, "channels": [` + strings.Join(ch, ", ") + `]}]}`
	os.WriteFile(filepath.Join(rec, "structure.oebin"), []byte(oebin), 0o644)
	os.WriteFile(filepath.Join(ap, "continuous.dat"), data, 0o644)
	if err := export.WriteNPYFile(filepath.Join(ap, "sample_numbers.npy"), []int{5}, []int64{1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	p := goldenProbe()
	var chans, xs, ys []string
	for i := range p.Len() {
		chans = append(chans, fmt.Sprintf(`CH%d="0:0"`, p.ChanMap[i]))
		xs = append(xs, fmt.Sprintf(`CH%d="%g"`, p.ChanMap[i], p.X[i]))
		ys = append(ys, fmt.Sprintf(`CH%d="%g"`, p.ChanMap[i], p.Y[i]))
	}
	settings := `<?xml version="1.0" encoding="UTF-8"?>
<SETTINGS><SIGNALCHAIN><PROCESSOR name="Neuropix-PXI" nodeId="100"><EDITOR>
<NP_PROBE slot="2" port="1" dock="1" probe_serial_number="18005116111" probe_part_number="PRB_1_4_0480_1" probe_name="Neuropixels 1.0" custom_probe_name="ProbeA">
<CHANNELS ` + strings.Join(chans, " ") + `/>
<ELECTRODE_XPOS ` + strings.Join(xs, " ") + `/>
<ELECTRODE_YPOS ` + strings.Join(ys, " ") + `/>
</NP_PROBE></EDITOR></PROCESSOR></SIGNALCHAIN></SETTINGS>`
	os.WriteFile(filepath.Join(node, "settings.xml"), []byte(settings), 0o644)
	return session
}
