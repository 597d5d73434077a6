package sim

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"dspk/export"
	"dspk/probe"
	"dspk/recording"
)

func TestTruthDirRoundTrip(t *testing.T) {
	for _, cfg := range []Config{
		func() Config { c := shortConfig(3); c.DriftUmPerS = 5; return c }(),
		func() Config { c := shortConfig(0.2); c.Probe = smallProbe(); c.Units = 3; return c }(),
		func() Config { c := shortConfig(0.2); c.Units = 0; return c }(),
		func() Config {
			c, _ := Preset("ladder-hard")
			c.Seconds, c.Units, c.SimilarPairs = 1.5, 30, 5
			c.MotionSteps = []MotionStep{{TimeS: 0.7, Um: 8}}
			return c
		}(),
	} {
		rec, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr := rec.Truth()
		dir := t.TempDir()
		if err := tr.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		back, err := ReadTruthDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		// Waveforms travel as float32.
		want := *tr
		want.UnitWaveform = make([][]float64, len(tr.UnitWaveform))
		for i, w := range tr.UnitWaveform {
			want.UnitWaveform[i] = make([]float64, len(w))
			for j, v := range w {
				want.UnitWaveform[i][j] = float64(float32(v))
			}
		}
		if d := cmp.Diff(&want, back, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%d units: truth changed through WriteDir/ReadTruthDir (-want +got):\n%s", tr.Units(), d)
		}

		// The .npy files are what Python expects.
		nu := tr.Units()
		for _, f := range []struct {
			name  string
			descr string
			shape []int
		}{
			{FileSpikeTimes, "<i8", []int{len(tr.SpikeTimes)}},
			{FileSpikeClusters, "<i4", []int{len(tr.SpikeTimes)}},
			{FileUnitPositions, "<f4", []int{nu, 2}},
			{FileUnitAmplitudes, "<f4", []int{nu}},
			{FileUnitPeakChannel, "<i4", []int{nu}},
			{FileUnitWaveforms, "<f4", []int{nu, tr.waveformLen()}},
		} {
			fh, err := os.Open(filepath.Join(dir, f.name))
			if err != nil {
				t.Fatal(err)
			}
			r, err := npyio.NewReader(fh)
			fh.Close()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Trim(r.Header.Descr.Type, "'") != f.descr || r.Header.Descr.Fortran {
				t.Errorf("%s: dtype %s fortran %v, want %s", f.name, r.Header.Descr.Type, r.Header.Descr.Fortran, f.descr)
			}
			if !slices.Equal(r.Header.Descr.Shape, f.shape) {
				t.Errorf("%s: shape %v, want %v", f.name, r.Header.Descr.Shape, f.shape)
			}
		}
		var pos []float32
		fh, _ := os.Open(filepath.Join(dir, FileUnitPositions))
		if err := npyio.Read(fh, &pos); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		for u := range nu {
			if pos[2*u] != float32(tr.UnitX[u]) || pos[2*u+1] != float32(tr.UnitY[u]) {
				t.Fatalf("unit %d at (%g, %g) in %s, truth (%g, %g)", u, pos[2*u], pos[2*u+1], FileUnitPositions, tr.UnitX[u], tr.UnitY[u])
			}
		}
		left, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
		if len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
}

func TestReadTruthDirErrors(t *testing.T) {
	cfg := shortConfig(1)
	rec, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Truth()
	n := len(tr.SpikeTimes)
	for _, tc := range []struct {
		name, file string
		breakIt    func(dir string) error
	}{
		{"missing", FileSpikeClusters, func(dir string) error { return os.Remove(filepath.Join(dir, FileSpikeClusters)) }},
		{"cluster out of range", FileSpikeClusters, func(dir string) error {
			c := slices.Clone(tr.SpikeClusters)
			c[n/2] = int32(tr.Units())
			return export.WriteNPYFile(filepath.Join(dir, FileSpikeClusters), []int{n}, c)
		}},
		{"unsorted", FileSpikeTimes, func(dir string) error {
			s := slices.Clone(tr.SpikeTimes)
			s[1], s[n-1] = s[n-1], s[1]
			return export.WriteNPYFile(filepath.Join(dir, FileSpikeTimes), []int{n}, s)
		}},
		{"wrong dtype", FileSpikeTimes, func(dir string) error {
			s := make([]int32, n)
			return export.WriteNPYFile(filepath.Join(dir, FileSpikeTimes), []int{n}, s)
		}},
		{"wrong length", FileSpikeTimes, func(dir string) error {
			return export.WriteNPYFile(filepath.Join(dir, FileSpikeTimes), []int{n - 1}, tr.SpikeTimes[:n-1])
		}},
		{"moved unit", FileUnitPositions, func(dir string) error {
			p := make([]float32, 2*tr.Units())
			return export.WriteNPYFile(filepath.Join(dir, FileUnitPositions), []int{tr.Units(), 2}, p)
		}},
		{"bad json", FileTruthJSON, func(dir string) error {
			return os.WriteFile(filepath.Join(dir, FileTruthJSON), []byte("{"), 0o644)
		}},
		{"other generator", FileTruthJSON, func(dir string) error {
			p := filepath.Join(dir, FileTruthJSON)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, bytes.Replace(b, []byte(`"version": 1`), []byte(`"version": 99`), 1), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tr.WriteDir(dir); err != nil {
				t.Fatal(err)
			}
			if err := tc.breakIt(dir); err != nil {
				t.Fatal(err)
			}
			_, err := ReadTruthDir(dir)
			if err == nil {
				t.Fatal("ReadTruthDir accepted a broken directory")
			}
			if !strings.Contains(err.Error(), tc.file) {
				t.Errorf("error %q does not name %s", err, tc.file)
			}
		})
	}
	if err := tr.WriteDir(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("WriteDir into a missing directory succeeded")
	}
}

// parseMeta splits a .meta into key → value, checking CRLF line ends.
func parseMeta(t *testing.T, b []byte) map[string]string {
	t.Helper()
	s := string(b)
	if !strings.HasSuffix(s, "\r\n") {
		t.Fatal("meta does not end with CRLF")
	}
	kv := map[string]string{}
	var keys []string
	for _, line := range strings.Split(strings.TrimSuffix(s, "\r\n"), "\r\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.ContainsAny(line, "\r\n") {
			t.Fatalf("bad meta line %q", line)
		}
		if _, dup := kv[k]; dup {
			t.Fatalf("key %s twice", k)
		}
		kv[k] = v
		keys = append(keys, k)
	}
	if !slices.IsSorted(keys) {
		t.Error("meta keys are not sorted")
	}
	return kv
}

// tableEntries returns the parenthesised entries of a meta table.
func tableEntries(t *testing.T, v string) []string {
	t.Helper()
	if !strings.HasPrefix(v, "(") || !strings.HasSuffix(v, ")") {
		t.Fatalf("table %q", v)
	}
	return strings.Split(v[1:len(v)-1], ")(")
}

func TestWriteSpikeGLX(t *testing.T) {
	cfg := shortConfig(0.5)
	dir := t.TempDir()
	binPath, tr, err := WriteSpikeGLX(dir, "sim_g0_t0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(binPath) != "sim_g0_t0.imec0.ap.bin" {
		t.Errorf("bin path %s", binPath)
	}
	bin, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bin, fileBytes(t, rec)) {
		t.Fatal("the .bin differs from the recording's bytes")
	}
	if !slices.Equal(tr.SpikeTimes, rec.Truth().SpikeTimes) {
		t.Error("returned truth differs from Generate's")
	}
	mb, err := os.ReadFile(filepath.Join(dir, "sim_g0_t0.imec0.ap.meta"))
	if err != nil {
		t.Fatal(err)
	}
	kv := parseMeta(t, mb)
	if _, ok := kv["fileSHA1"]; ok {
		t.Error("fileSHA1 is written")
	}
	for k, want := range map[string]string{
		"typeThis": "imec", "nSavedChans": "385", "imSampRate": "30000", "snsApLfSy": "384,0,1",
		"acqApLfSy": "384,384,1", "snsSaveChanSubset": "0:383,768", "fileSizeBytes": strconv.Itoa(len(bin)),
		"fileTimeSecs": "0.5", "firstSample": "0", "imAiRangeMax": "0.6", "imAiRangeMin": "-0.6", "imMaxInt": "512",
		"imDatPrb_type": "0", "fileName": filepath.Base(binPath),
		"syncSourcePeriod": "1",
	} {
		if kv[k] != want {
			t.Errorf("%s=%q, want %q", k, kv[k], want)
		}
	}
	if len(bin) != 15000*385*2 {
		t.Errorf(".bin holds %d bytes, want %d", len(bin), 15000*385*2)
	}

	imro := tableEntries(t, kv["~imroTbl"])
	if len(imro) != 385 || imro[0] != "0,384" {
		t.Fatalf("imroTbl: header %q and %d entries", imro[0], len(imro)-1)
	}
	for i, e := range imro[1:] {
		f := strings.Fields(e)
		if len(f) != 6 || f[0] != strconv.Itoa(i) || f[3] != "500" || f[4] != "250" {
			t.Fatalf("imroTbl entry %d: %q", i, e)
		}
		gain, _ := strconv.ParseFloat(f[3], 64)
		if uv := 0.6 / 512 / gain * 1e6; uv != cfg.MicrovoltsPerCount {
			t.Errorf("entry %d: %g µV per count, want %g", i, uv, cfg.MicrovoltsPerCount)
		}
	}
	chans := tableEntries(t, kv["~snsChanMap"])
	if len(chans) != 386 || chans[0] != "384,384,1" || chans[1] != "AP0;0:0" || chans[385] != "SY0;768:768" {
		t.Errorf("snsChanMap: %d entries, %q … %q", len(chans), chans[0], chans[len(chans)-1])
	}
	geom := tableEntries(t, kv["~snsGeomMap"])
	np1 := probe.NP1()
	if len(geom) != 385 || geom[0] != "NP1000,1,0,70" {
		t.Fatalf("snsGeomMap: header %q and %d entries", geom[0], len(geom)-1)
	}
	for i, e := range geom[1:] {
		f := strings.Split(e, ":")
		x, _ := strconv.ParseFloat(f[1], 64)
		y, _ := strconv.ParseFloat(f[2], 64)
		if len(f) != 4 || f[0] != "0" || f[3] != "1" || x != np1.X[i] || y != np1.Y[i] {
			t.Fatalf("snsGeomMap entry %d: %q, want (0:%g:%g:1)", i, e, np1.X[i], np1.Y[i])
		}
	}
	shank := tableEntries(t, kv["~snsShankMap"])
	if len(shank) != 385 || shank[0] != "1,2,480" || shank[1] != "0:0:0:1" || shank[384] != "0:1:191:1" {
		t.Errorf("snsShankMap: %d entries, %q, %q … %q", len(shank), shank[0], shank[1], shank[len(shank)-1])
	}

	// The same config writes the same files.
	dir2 := t.TempDir()
	bin2, _, err := WriteSpikeGLX(dir2, "sim_g0_t0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(bin2)
	m2, _ := os.ReadFile(filepath.Join(dir2, "sim_g0_t0.imec0.ap.meta"))
	if !bytes.Equal(b2, bin) || !bytes.Equal(m2, mb) {
		t.Error("a second WriteSpikeGLX of the same config differs")
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 2 {
		t.Errorf("dir holds %d entries, want the .bin and .meta", len(names))
	}
}

func TestWriteSpikeGLXOtherProbe(t *testing.T) {
	cfg := shortConfig(0.1)
	cfg.Probe = smallProbe()
	dir := t.TempDir()
	if _, _, err := WriteSpikeGLX(dir, "small", cfg); err != nil {
		t.Fatal(err)
	}
	mb, err := os.ReadFile(filepath.Join(dir, "small.imec0.ap.meta"))
	if err != nil {
		t.Fatal(err)
	}
	kv := parseMeta(t, mb)
	if kv["nSavedChans"] != "12" || kv["snsApLfSy"] != "11,0,1" || kv["snsSaveChanSubset"] != "0:10,22" {
		t.Errorf("nSavedChans %s snsApLfSy %s subset %s", kv["nSavedChans"], kv["snsApLfSy"], kv["snsSaveChanSubset"])
	}
	// Geometry by file row, with row 4 unused.
	p := smallProbe()
	geom := tableEntries(t, kv["~snsGeomMap"])
	if geom[0] != "NP1000,2,0,70" || len(geom) != 12 {
		t.Fatalf("snsGeomMap %v", geom)
	}
	for i, r := range p.ChanMap {
		want := strconv.Itoa(p.Shank[i]) + ":" + strconv.FormatFloat(p.X[i], 'g', -1, 64) + ":" +
			strconv.FormatFloat(p.Y[i], 'g', -1, 64) + ":1"
		if geom[1+r] != want {
			t.Errorf("row %d: %q, want %q", r, geom[1+r], want)
		}
	}
	if geom[1+4] != "0:0:0:0" {
		t.Errorf("unused row 4: %q", geom[5])
	}
	shank := tableEntries(t, kv["~snsShankMap"])
	if shank[0] != "2,2,3" || shank[1+3] != "0:0:0:1" || shank[1+7] != "1:1:1:1" || shank[1+4] != "0:0:0:0" {
		t.Errorf("snsShankMap %v", shank)
	}
}

func TestWriteSpikeGLXErrors(t *testing.T) {
	noSync := shortConfig(0.1)
	noSync.Probe = &probe.Probe{Name: "nosync", X: []float64{0, 1}, Y: []float64{0, 20}, Shank: []int{0, 0}, ChanMap: []int{0, 1}, NChanFile: 2}
	oddGain := shortConfig(0.1)
	oddGain.MicrovoltsPerCount = 1
	bad := shortConfig(-1)
	for name, tc := range map[string]struct {
		dir string
		cfg Config
	}{
		"no sync row": {t.TempDir(), noSync},
		"gain":        {t.TempDir(), oddGain},
		"config":      {t.TempDir(), bad},
		"no dir":      {filepath.Join(t.TempDir(), "absent"), shortConfig(0.1)},
	} {
		if _, _, err := WriteSpikeGLX(tc.dir, "x", tc.cfg); err == nil {
			t.Errorf("%s: WriteSpikeGLX succeeded", name)
		}
		if names, _ := os.ReadDir(tc.dir); len(names) != 0 {
			t.Errorf("%s: left %d files behind", name, len(names))
		}
	}
	// Other NP1.0 gains are fine: gain 250 is 4.6875 µV per count.
	g := shortConfig(0.05)
	g.MicrovoltsPerCount = 0.6 / 512 / 250 * 1e6
	dir := t.TempDir()
	if _, _, err := WriteSpikeGLX(dir, "g", g); err != nil {
		t.Fatal(err)
	}
	mb, _ := os.ReadFile(filepath.Join(dir, "g.imec0.ap.meta"))
	if !strings.Contains(string(mb), "(0 0 0 250 250 1)") {
		t.Error("gain 250 not in the imroTbl")
	}
}

func TestSpikeGLXReadBack(t *testing.T) {
	// dspk's own SpikeGLX reader sees the same samples, scale and probe.
	for _, p := range []*probe.Probe{nil, smallProbe()} {
		cfg := shortConfig(0.3)
		cfg.Probe = p
		dir := t.TempDir()
		binPath, _, err := WriteSpikeGLX(dir, "rb_g0_t0", cfg)
		if err != nil {
			t.Fatal(err)
		}
		f, err := recording.OpenSpikeGLX(binPath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rec, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if f.Channels() != rec.Channels() || f.Samples() != rec.Samples() || f.SampleRate() != rec.SampleRate() {
			t.Errorf("reader: %d channels, %d samples at %g Hz; generator %d, %d, %g",
				f.Channels(), f.Samples(), f.SampleRate(), rec.Channels(), rec.Samples(), rec.SampleRate())
		}
		if !slices.Equal(f.MicrovoltsPerCount(), rec.MicrovoltsPerCount()) {
			t.Errorf("µV per count: reader %v…, generator %v…", f.MicrovoltsPerCount()[:3], rec.MicrovoltsPerCount()[:3])
		}
		got := make([]int16, 100*f.Channels())
		want := make([]int16, 100*f.Channels())
		for _, s := range []int64{0, 5990, f.Samples() - 100} {
			if err := f.ReadInt16(got, s, 100); err != nil {
				t.Fatal(err)
			}
			if err := rec.ReadInt16(want, s, 100); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("samples from %d differ", s)
			}
		}
		if f.ProbeError() != nil {
			t.Fatal(f.ProbeError())
		}
		// The reader lists sites by file row; compare site by site.
		fp, gp := f.Probe(), rec.Probe()
		if fp == nil || fp.Len() != gp.Len() || fp.NChanFile != gp.NChanFile {
			t.Fatalf("reader probe %+v", fp)
		}
		row := map[int]int{}
		for i, r := range fp.ChanMap {
			row[r] = i
		}
		for i, r := range gp.ChanMap {
			j, ok := row[r]
			if !ok || fp.X[j] != gp.X[i] || fp.Y[j] != gp.Y[i] || fp.Shank[j] != gp.Shank[i] {
				t.Errorf("site %d (row %d): reader %v", i, r, ok)
			}
		}
	}
}

// Recording is a recording source and a file-like byte stream.
var (
	_ recording.Recording = (*Recording)(nil)
	_ recording.Prober    = (*Recording)(nil)
	_ io.ReadSeeker       = (*Recording)(nil)
	_ io.WriterTo         = (*Recording)(nil)
)

// TestWriteSpikeGLXNP2 checks that a simulation on the NP2 layout writes
// a Neuropixels 2.0 meta that the recording package (and so any SpikeGLX
// reader) takes for one: the probe type, part number, range and imro
// format of a real NP2.0 meta, the NP2 gain, and the geometry back.
func TestWriteSpikeGLXNP2(t *testing.T) {
	cfg := shortConfig(0.2)
	cfg.Probe = probe.NP2()
	dir := t.TempDir()
	if _, _, err := WriteSpikeGLX(dir, "np2", cfg); err == nil || !strings.Contains(err.Error(), "gain 80") {
		t.Fatalf("NP2 at the NP1 scale: %v", err)
	}
	cfg.MicrovoltsPerCount = NP2MicrovoltsPerCount
	binPath, _, err := WriteSpikeGLX(dir, "np2", cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := recording.OpenSpikeGLX(binPath)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	f, err := os.Open("testdata/p2_g0_t0.imec0.ap.meta")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	real, err := recording.ParseMeta(f, "p2_g0_t0.imec0.ap.meta")
	if err != nil {
		t.Fatal(err)
	}
	m := rec.Meta
	if m.ProbeType != 21 || m.ProbePart != "NP2000" || m.ProbeType != real.ProbeType {
		t.Errorf("probe type %d part %q, want 21 NP2000", m.ProbeType, m.ProbePart)
	}
	if m.ImAiRangeMax != real.ImAiRangeMax || m.MaxInt() != real.MaxInt() || m.SavedAPLFSY != real.SavedAPLFSY ||
		m.AcquiredAPLFSY != real.AcquiredAPLFSY || !slices.Equal(m.SaveChans, real.SaveChans) {
		t.Errorf("range %g / %d, saved %v acquired %v chans %v; the real NP2 meta has %g / %d, %v, %v, %v",
			m.ImAiRangeMax, m.MaxInt(), m.SavedAPLFSY, m.AcquiredAPLFSY, m.SaveChans[len(m.SaveChans)-2:],
			real.ImAiRangeMax, real.MaxInt(), real.SavedAPLFSY, real.AcquiredAPLFSY, real.SaveChans[len(real.SaveChans)-2:])
	}
	// The imro table: same header type and four fields per entry, bank 0.
	ours, theirs := m.Fields["imroTbl"], real.Fields["imroTbl"]
	if !strings.HasPrefix(ours, "(21,384)(0 1 0 0)(1 1 0 1)") || !strings.HasPrefix(theirs, "(21,384)(0 1 0 0)(1 1 0 1)") {
		t.Errorf("imroTbl %.40s…, the real one %.40s…", ours, theirs)
	}
	if !strings.HasPrefix(m.Fields["snsShankMap"], "(1,2,640)(0:0:0:1)(0:1:0:1)(0:0:1:1)") ||
		!strings.HasPrefix(m.Fields["snsGeomMap"], "(NP2000,1,0,70)") {
		t.Errorf("shank map %.40s…, geometry map %.40s…", m.Fields["snsShankMap"], m.Fields["snsGeomMap"])
	}
	uv := rec.MicrovoltsPerCount()
	for i := range 384 {
		if uv[i] != NP2MicrovoltsPerCount {
			t.Fatalf("channel %d: %g µV per count, want %g", i, uv[i], NP2MicrovoltsPerCount)
		}
	}
	if uv[384] != 0 {
		t.Errorf("sync channel scaled by %g", uv[384])
	}
	pr := rec.Probe()
	if pr == nil {
		t.Fatalf("no probe: %v", rec.ProbeError())
	}
	want := probe.NP2()
	if !slices.Equal(pr.X, want.X) || !slices.Equal(pr.Y, want.Y) || !slices.Equal(pr.ChanMap, want.ChanMap) {
		t.Error("the geometry read back differs from the NP2 layout")
	}
}
