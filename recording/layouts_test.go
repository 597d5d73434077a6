package recording

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"dspk/export"
)

// sessionOebin has a Neuropixels AP stream (4 channels, 30 kHz) and its
// LFP stream (4 channels, 2500 Hz), as Open Ephys GUI 0.6 writes them.
const sessionOebin = `{
  "GUI version": "0.6.7",
  "continuous": [
    {"folder_name": "Neuropix-PXI-100.ProbeA-AP/", "sample_rate": 30000.0, "source_processor_name": "Neuropix-PXI",
     "stream_name": "ProbeA-AP", "num_channels": 4, "channels": [
       {"channel_name": "AP1", "bit_volts": 0.195, "units": "uV"}, {"channel_name": "AP2", "bit_volts": 0.195, "units": "uV"},
       {"channel_name": "AP3", "bit_volts": 0.195, "units": "uV"}, {"channel_name": "AP4", "bit_volts": 0.195, "units": "uV"}]},
    {"folder_name": "Neuropix-PXI-100.ProbeA-LFP/", "sample_rate": 2500.0, "source_processor_name": "Neuropix-PXI",
     "stream_name": "ProbeA-LFP", "num_channels": 4, "channels": [
       {"channel_name": "LFP1", "bit_volts": 0.195, "units": "uV"}, {"channel_name": "LFP2", "bit_volts": 0.195, "units": "uV"},
       {"channel_name": "LFP3", "bit_volts": 0.195, "units": "uV"}, {"channel_name": "LFP4", "bit_volts": 0.195, "units": "uV"}]}
  ],
  "events": [], "spikes": []
}`

// sessionSettings is the part of a settings.xml that holds the probe's
// electrode positions, attributes in the GUI's (non-numeric) order.
const sessionSettings = `<?xml version="1.0" encoding="UTF-8"?>
<SETTINGS>
  <INFO><VERSION>0.6.7</VERSION></INFO>
  <SIGNALCHAIN>
    <PROCESSOR name="Neuropix-PXI" nodeId="100">
      <EDITOR>
        <NP_PROBE slot="2" port="1" dock="1" probe_serial_number="18005116111" probe_name="Neuropixels 1.0" custom_probe_name="ProbeA">
          <CHANNELS CH0="0:0" CH1="0:0" CH10="0:0" CH2="0:0" CH3="0:0"/>
          <ELECTRODE_XPOS CH3="43" CH0="27" CH2="11" CH1="59"/>
          <ELECTRODE_YPOS CH0="0" CH1="0" CH2="20" CH3="20"/>
        </NP_PROBE>
      </EDITOR>
    </PROCESSOR>
    <PROCESSOR name="Record Node" nodeId="101"/>
  </SIGNALCHAIN>
</SETTINGS>
`

// writeSession writes session/Record Node 101/experiment1/recordingR for
// each R in recs, with AP and LFP data and sample_numbers.npy starting at
// first, and the node's settings.xml; it returns the session folder and
// the AP data of each recording.
func writeSession(t *testing.T, recs []int, first int64) (string, map[int][]int16) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, uint64(len(recs))))
	session := filepath.Join(t.TempDir(), "2026-12-01_10-00-00")
	node := filepath.Join(session, "Record Node 101")
	aps := map[int][]int16{}
	for _, r := range recs {
		dir := filepath.Join(node, "experiment1", fmt.Sprintf("recording%d", r))
		ap, lfp := randInt16(rng, 4*301), randInt16(rng, 4*25)
		aps[r] = ap
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeOpenEphys(t, dir, sessionOebin, map[string][]int16{
			"Neuropix-PXI-100.ProbeA-AP": ap, "Neuropix-PXI-100.ProbeA-LFP": lfp,
		})
		sn := make([]int64, 301)
		for i := range sn {
			sn[i] = first + int64(i)
		}
		if err := export.WriteNPYFile(filepath.Join(dir, "continuous", "Neuropix-PXI-100.ProbeA-AP", "sample_numbers.npy"), []int{len(sn)}, sn); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(node, "settings.xml"), []byte(sessionSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	return session, aps
}

// TestOpenEphysSession opens an Open Ephys session tree as recorded:
// every folder level, streams chosen by name, the LFP stream not taken by
// default, geometry from settings.xml and the first sample number.
func TestOpenEphysSession(t *testing.T) {
	t.Parallel()
	session, aps := writeSession(t, []int{1}, 123456)
	rng := rand.New(rand.NewPCG(9, 9))
	node := filepath.Join(session, "Record Node 101")
	rec1 := filepath.Join(node, "experiment1", "recording1")
	for _, path := range []string{session, node, filepath.Join(node, "experiment1"), rec1, filepath.Join(rec1, "structure.oebin"),
		filepath.Join(rec1, "continuous", "Neuropix-PXI-100.ProbeA-AP", "continuous.dat")} {
		r, err := Open(path, OpenOptions{})
		if err != nil {
			t.Fatalf("Open(%s): %v", path, err)
		}
		oe := r.(*OpenEphys)
		if oe.SampleRate() != 30000 || oe.Channels() != 4 || oe.ID().Name() != "Record Node 101#Neuropix-PXI-100.ProbeA-AP" ||
			oe.ID().FullName() != "Record Node 101/experiment1/recording1#Neuropix-PXI-100.ProbeA-AP" {
			t.Errorf("Open(%s): %s at %g Hz", path, oe.ID().FullName(), oe.SampleRate())
		}
		if first, ok := oe.FirstSample(); !ok || first != 123456 {
			t.Errorf("Open(%s): first sample %d %v", path, first, ok)
		}
		p := oe.Probe()
		if p == nil {
			t.Fatalf("Open(%s): no probe from settings.xml (%v)", path, oe.ProbeError())
		}
		if !slices.Equal(p.ChanMap, []int{0, 1, 2, 3}) || !slices.Equal(p.X, []float64{27, 59, 11, 43}) ||
			!slices.Equal(p.Y, []float64{0, 0, 20, 20}) || p.NChanFile != 4 || !strings.Contains(p.Name, "ProbeA") {
			t.Errorf("Open(%s): probe %+v", path, p)
		}
		if err := CheckSpikeBand(r); err != nil {
			t.Errorf("AP stream refused: %v", err)
		}
		checkReads(t, r, aps[1], rng)
		r.Close()
	}
	// The LFP stream, by a unique part of its name or neo's name; refused
	// for detection.
	for _, want := range []string{"ProbeA-LFP", "Record Node 101#Neuropix-PXI-100.ProbeA-LFP", "Neuropix-PXI-100.ProbeA-LFP/"} {
		r, err := Open(session, OpenOptions{Stream: want})
		if err != nil {
			t.Fatalf("stream %q: %v", want, err)
		}
		if r.SampleRate() != 2500 {
			t.Errorf("stream %q: %g Hz", want, r.SampleRate())
		}
		if err := CheckSpikeBand(r); err == nil || !strings.Contains(err.Error(), "LFP") || !strings.Contains(err.Error(), "-stream") {
			t.Errorf("LFP stream accepted for detection: %v", err)
		}
		r.Close()
	}
	for want, msg := range map[string]string{"ProbeA": "2 streams match", "ProbeB": "no continuous stream"} {
		_, err := Open(session, OpenOptions{Stream: want})
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "ProbeA-LFP") || !strings.Contains(err.Error(), session) {
			t.Errorf("stream %q: %v", want, err)
		}
	}
	// An empty folder says what it wants.
	if _, err := Open(t.TempDir(), OpenOptions{}); err == nil || !strings.Contains(err.Error(), "structure.oebin") {
		t.Errorf("empty folder: %v", err)
	}
}

// TestOpenEphysSeveralRecordings: with two recordings the session is
// ambiguous, and the stream is chosen by its recording.
func TestOpenEphysSeveralRecordings(t *testing.T) {
	t.Parallel()
	session, aps := writeSession(t, []int{1, 2}, 0)
	streams, err := FindOpenEphysStreams(session)
	if err != nil || len(streams) != 4 {
		t.Fatalf("%d streams: %v", len(streams), err)
	}
	if _, err := Open(session, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "2 streams at a spike-band rate") ||
		!strings.Contains(err.Error(), "recording2#Neuropix-PXI-100.ProbeA-AP") {
		t.Errorf("ambiguous session: %v", err)
	}
	r, err := Open(session, OpenOptions{Stream: "recording2#Neuropix-PXI-100.ProbeA-AP"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if oe := r.(*OpenEphys); oe.ID().Recording != "recording2" {
		t.Errorf("picked %s", oe.ID().FullName())
	}
	checkReads(t, r, aps[2], rand.New(rand.NewPCG(1, 1)))
}

func TestNaturalCompare(t *testing.T) {
	in := []string{"recording10", "recording2", "recording1", "a", "recording02x"}
	slices.SortFunc(in, naturalCompare)
	if want := []string{"a", "recording1", "recording2", "recording02x", "recording10"}; !slices.Equal(in, want) {
		t.Errorf("%v", in)
	}
}

// TestRawDTypes reads uint16 (centred on 32768) and float32 (scaled)
// raw files, from options and from info.json.
func TestRawDTypes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 5))
	const C, n = 3, 257
	want := randInt16(rng, C*n)
	dir := t.TempDir()
	u16 := make([]byte, 2*len(want))
	f32 := make([]byte, 4*len(want))
	for i, v := range want {
		binary.LittleEndian.PutUint16(u16[2*i:], uint16(int32(v)+32768))
		// value/scale with scale 4: the read rounds back to v; a
		// quarter off still rounds to v.
		binary.LittleEndian.PutUint32(f32[4*i:], math.Float32bits(float32(v)/4+float32(0.2/4)))
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	up, fp := write("u/amp.dat", u16), write("f/data.raw", f32)
	for _, tc := range []struct {
		path string
		opt  OpenOptions
		dt   DType
	}{
		{up, OpenOptions{Channels: C, Rate: 20000, DType: "uint16"}, Uint16},
		{fp, OpenOptions{Channels: C, Rate: 20000, DType: "float32", Scale: 4}, Float32},
	} {
		r, err := Open(tc.path, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if r.Samples() != n || r.(*Raw).DType() != tc.dt {
			t.Errorf("%s: %d samples, %s", tc.path, r.Samples(), r.(*Raw).DType())
		}
		checkReads(t, r, want, rng)
		r.Close()
	}
	// float32 clips to int16 and maps NaN to 0.
	if got := []int16{floatToCount(1e9, 1), floatToCount(-1e9, 1), floatToCount(float32(math.NaN()), 1), floatToCount(2.5, 1), floatToCount(-2.5, 1)}; !slices.Equal(got, []int16{32767, -32768, 0, 3, -3}) {
		t.Errorf("floatToCount: %v", got)
	}
	if _, err := Open(fp, OpenOptions{Channels: C, Rate: 20000, DType: "float32"}); err == nil || !strings.Contains(err.Error(), "scale") {
		t.Errorf("float32 without a scale: %v", err)
	}
	if _, err := Open(up, OpenOptions{Channels: C, Rate: 20000, DType: "int8"}); err == nil || !strings.Contains(err.Error(), "int8") {
		t.Errorf("int8: %v", err)
	}
	// From info.json.
	write("u/info.json", []byte(`{"sample_rate": 20000.0, "shape": [-1, 3], "dtype": "uint16"}`))
	write("f/info.json", []byte(`{"sample_rate": 20000.0, "shape": [-1, 3], "dtype": "float32", "scale": 4}`))
	for _, p := range []string{up, fp} {
		r, err := Open(p, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkReads(t, r, want, rng)
		r.Close()
	}
	write("f/info.json", []byte(`{"sample_rate": 20000.0, "shape": [-1, 3], "dtype": "float32"}`))
	if _, err := Open(fp, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "info.json") || !strings.Contains(err.Error(), "scale") {
		t.Errorf("info.json float32 without a scale: %v", err)
	}
	if _, err := Open(up, OpenOptions{DType: "float32", Scale: 1}); err == nil || !strings.Contains(err.Error(), "info.json") {
		t.Errorf("dtype contradicting info.json: %v", err)
	}
}

// TestSpikeGLXSizeMismatch: a .bin whose size disagrees with
// fileSizeBytes opens with its real size and a warning unless strict.
func TestSpikeGLXSizeMismatch(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(6, 7))
	data := randInt16(rng, 200*385)
	dir := t.TempDir()
	bin := writeSpikeGLX(t, dir, "Noise_g0_t0.imec0.ap.meta", data, 2*385*1000)
	// A crashed recording: a partial time point at the end.
	f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{1, 2, 3})
	f.Close()
	if _, err := Open(bin, OpenOptions{StrictSize: true}); err == nil || !strings.Contains(err.Error(), "fileSizeBytes") {
		t.Errorf("strict: %v", err)
	}
	r, err := Open(bin, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Samples() != 200 {
		t.Errorf("%d samples", r.Samples())
	}
	w := r.(Warner).Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "fileSizeBytes=770000") || !strings.Contains(w[0], "200 whole time points") {
		t.Errorf("warnings %q", w)
	}
	checkReads(t, r, data, rng)
}

var apLfSyRE = regexp.MustCompile(`(?m)^snsApLfSy=.*$`)

// TestSpikeGLXLF: an LF-band file opens (info describes it) but is
// refused for detection.
func TestSpikeGLXLF(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := writeSpikeGLX(t, dir, "Noise_g0_t0.imec0.ap.meta", make([]int16, 10*385), -1)
	lf := strings.Replace(bin, ".ap.bin", ".lf.bin", 1)
	meta, _ := os.ReadFile(MetaPath(bin))
	meta = apLfSyRE.ReplaceAll(meta, []byte("snsApLfSy=0,384,1"))
	os.WriteFile(MetaPath(lf), meta, 0o644)
	os.Rename(bin, lf)
	r, err := Open(lf, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := CheckSpikeBand(r); err == nil || !strings.Contains(err.Error(), "LF") || !strings.Contains(err.Error(), ".ap.bin") || !strings.Contains(err.Error(), lf) {
		t.Errorf("LF accepted: %v", err)
	}
}

// TestSpikeGLXRun reads three files of one run (given out of order, and
// as a glob) as one recording.
func TestSpikeGLXRun(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 9))
	dir := t.TempDir()
	var all []int16
	var paths []string
	for _, tn := range []int{0, 1, 10} {
		d := randInt16(rng, (50+7*tn)*385)
		all = append(all, d...)
		sub := t.TempDir()
		bin := writeSpikeGLX(t, sub, "Noise_g0_t0.imec0.ap.meta", d, -1)
		name := filepath.Join(dir, fmt.Sprintf("run_g0_t%d.imec0.ap.bin", tn))
		os.Rename(bin, name)
		os.Rename(MetaPath(bin), MetaPath(name))
		paths = append(paths, name)
	}
	for _, args := range [][]string{{paths[2], paths[0], paths[1]}, {filepath.Join(dir, "run_g0_t*.imec0.ap.bin")}} {
		r, err := OpenFiles(args, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := r.(*Concat)
		if !slices.Equal(c.Files(), paths) || c.Samples() != int64(len(all)/385) || c.Channels() != 385 || c.Probe() == nil {
			t.Errorf("files %v, %d samples", c.Files(), c.Samples())
		}
		if !slices.Equal(c.PartStarts(), []int64{0, 50, 107}) {
			t.Errorf("part starts %v", c.PartStarts())
		}
		checkReads(t, r, all, rng)
		// Reads across every boundary.
		buf := make([]int16, 100*385)
		if err := r.ReadInt16(buf, 20, 100); err != nil || !slices.Equal(buf, all[20*385:120*385]) {
			t.Errorf("read across parts: %v", err)
		}
		r.Close()
	}
	// Files of another probe or with another channel count are refused.
	other := filepath.Join(dir, "run_g0_t3.imec1.ap.bin")
	os.Link(paths[0], other)
	os.Link(MetaPath(paths[0]), MetaPath(other))
	if _, err := OpenFiles([]string{paths[0], other}, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "one run") {
		t.Errorf("two probes: %v", err)
	}
	raw := filepath.Join(dir, "x_g0_t1.bin")
	os.WriteFile(raw, make([]byte, 8), 0o644)
	if _, err := OpenFiles([]string{filepath.Join(dir, "x_g0_t0.bin"), raw}, OpenOptions{}); err == nil {
		t.Error("raw files joined")
	}
	if _, err := OpenFiles([]string{filepath.Join(dir, "nothing_t*.bin")}, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "no file matches") {
		t.Errorf("empty glob: %v", err)
	}
}

func TestSortRunFiles(t *testing.T) {
	got, err := SortRunFiles([]string{"a/r_g1_t0.imec0.ap.bin", "a/r_g0_t10.imec0.ap.bin", "a/r_g0_t9.imec0.ap.bin"})
	if err != nil || !slices.Equal(got, []string{"a/r_g0_t9.imec0.ap.bin", "a/r_g0_t10.imec0.ap.bin", "a/r_g1_t0.imec0.ap.bin"}) {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range [][]string{{"r_g0_t0.imec0.ap.bin", "r_g0_t0.imec0.ap.bin"}, {"r_g0_t0.imec0.ap.bin", "r_g0_t1.imec0.lf.bin"}, {"plain.bin", "r_g0_t1.bin"}} {
		if _, err := SortRunFiles(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestParseOpenEphysSettings(t *testing.T) {
	ps, err := ParseOpenEphysSettings(strings.NewReader(sessionSettings), "settings.xml")
	if err != nil || len(ps) != 1 {
		t.Fatalf("%d probes: %v", len(ps), err)
	}
	p := ps[0]
	if !slices.Equal(p.Channel, []int{0, 1, 2, 3}) || !slices.Equal(p.Names, []string{"ProbeA", "Neuropixels 1.0"}) || p.Serial != "18005116111" {
		t.Errorf("%+v", p)
	}
	multi := strings.Replace(sessionSettings, `CH2="0:0" CH3="0:0"`, `CH2="1:2" CH3="0:3"`, 1)
	ps, err = ParseOpenEphysSettings(strings.NewReader(multi), "s.xml")
	if err != nil || !slices.Equal(ps[0].Shank, []int{0, 0, 2, 3}) {
		t.Errorf("shanks %v: %v", ps, err)
	}
	for name, doc := range map[string]string{
		"bad x":     strings.Replace(sessionSettings, `CH3="43"`, `CH3="nan"`, 1),
		"missing y": strings.Replace(sessionSettings, `CH3="20"/>`, `/>`, 1),
		"bad bank":  strings.Replace(sessionSettings, `CH0="0:0"`, `CH0="a"`, 1),
		"broken":    sessionSettings[:400],
	} {
		if _, err := ParseOpenEphysSettings(strings.NewReader(doc), "bad.xml"); err == nil || !strings.Contains(err.Error(), "bad.xml") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Matching a stream to its probe.
	two := []NPProbe{{Names: []string{"Neuropixels 1.0"}}, {Names: []string{"Neuropixels 1.0"}}}
	if i := matchNPProbe(two, OebinStream{FolderName: "Neuropix-PXI-100.ProbeB-AP/"}); i != 1 {
		t.Errorf("ProbeB matched %d", i)
	}
	if i := matchNPProbe(two, OebinStream{FolderName: "Rhythm_FPGA-100.0/"}); i != -1 {
		t.Errorf("Rhythm matched %d", i)
	}
}

func FuzzParseOpenEphysSettings(f *testing.F) {
	f.Add([]byte(sessionSettings))
	f.Add([]byte(`<NP_PROBE><ELECTRODE_XPOS CH0="1"/><ELECTRODE_YPOS CH0="2"/></NP_PROBE>`))
	f.Add([]byte(`<NP_PROBE><CHANNELS CH1="0:1:2"/><ELECTRODE_XPOS CH99999999999="1"/></NP_PROBE>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := ParseOpenEphysSettings(strings.NewReader(string(data)), "fuzz.xml")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.xml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, p := range ps {
			if len(p.X) != len(p.Channel) || len(p.Y) != len(p.Channel) || len(p.Shank) != len(p.Channel) || !slices.IsSorted(p.Channel) {
				t.Fatalf("inconsistent probe %+v", p)
			}
			for i := range p.X {
				if math.IsNaN(p.X[i]) || math.IsInf(p.Y[i], 0) || p.Channel[i] < 0 || p.Shank[i] < 0 {
					t.Fatalf("bad entry %d of %+v", i, p)
				}
			}
			matchNPProbe(ps, OebinStream{FolderName: "Neuropix-PXI-100.ProbeA-AP", StreamName: "ProbeA-AP"})
		}
	})
}

// FuzzSelectOpenEphysStream checks the stream choice on fuzzed oebins and
// names: a choice is always one of the streams and matches the name.
func FuzzSelectOpenEphysStream(f *testing.F) {
	f.Add([]byte(sessionOebin), "ProbeA-AP")
	f.Add([]byte(oebinJSON), "")
	f.Add([]byte(sessionOebin), "#")
	f.Fuzz(func(t *testing.T, data []byte, want string) {
		o, err := ParseOebin(strings.NewReader(string(data)), "fuzz.oebin")
		if err != nil || len(o.Continuous) == 0 {
			return
		}
		var ss []OEStream
		for _, s := range o.Continuous {
			ss = append(ss, OEStream{Oebin: "x/structure.oebin", Node: "Record Node 101", Experiment: "experiment1", Recording: "recording1", Stream: s})
		}
		s, err := SelectOpenEphysStream(ss, want, "fuzz")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz") {
				t.Fatalf("error without the path: %v", err)
			}
			return
		}
		w := strings.TrimRight(want, `/\`)
		if want == "" {
			if s.Stream.SampleRate < MinSpikeRate && len(ss) > 1 {
				t.Fatalf("took %s at %g Hz unasked", s.FullName(), s.Stream.SampleRate)
			}
		} else if !strings.Contains(s.FullName(), w) && !strings.Contains(s.Name(), w) && s.Stream.StreamName != w && s.Stream.Folder() != w {
			t.Fatalf("%q picked %s", want, s.FullName())
		}
	})
}
