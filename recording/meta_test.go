package recording

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"dspk/probe"
)

func readMetaFile(t testing.TB, name string) *Meta {
	t.Helper()
	path := filepath.Join("testdata", "spikeglx", name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := ParseMeta(f, path)
	if err != nil {
		t.Fatalf("ParseMeta(%s): %v", name, err)
	}
	return m
}

type site struct {
	row   int // row of the .bin
	shank int
	x, y  float64
}

// The expectations below were written from the files' own lines
// (imSampRate, imAiRangeMax, imMaxInt, imroTbl gains, snsShankMap /
// snsGeomMap entries). The positions derived from ~snsShankMap were also
// checked, for all sites, against SpikeInterface/probeinterface_library
// @ dca31ae imec/NP1000.json, NP2000.json and NP2014.json (electrode of
// each channel from the ~imroTbl), which are the same layout shifted so
// that the lower-left site is at x = 0: +11 µm for NP1.0, +27 µm for
// NP2.0.
var metaCases = []struct {
	file       string
	probeType  int
	rate       float64
	fileSize   int64
	saveChans0 []int // first and last acquired channel of the saved ones
	uv         float64
	used       int
	unused     []int // .bin rows whose site is marked unused
	sites      []site
}{
	{
		// NP1.0 3B: imroTbl apGain 500 → 0.6/512/500·1e6.
		file: "Noise_g0_t0.imec0.ap.meta", probeType: 0, rate: 30000, fileSize: 121625350,
		saveChans0: []int{0, 768}, uv: 2.34375, used: 383, unused: []int{191},
		sites: []site{{0, 0, 27, 0}, {1, 0, 59, 0}, {2, 0, 11, 20}, {3, 0, 43, 20}, {383, 0, 43, 3820}},
	},
	{
		file: "sample3B_g0_t0.imec1.ap.meta", probeType: 0, rate: 30000.390639481, fileSize: 19045367880,
		saveChans0: []int{0, 768}, uv: 2.34375, used: 383, unused: []int{191},
		sites: []site{{0, 0, 27, 0}, {190, 0, 11, 1900}, {192, 0, 27, 1920}},
	},
	{
		// 3A: no imDatPrb_type, no imMaxInt (512), imroTbl header
		// (serial,option,nChan), ten reference sites unused.
		file: "sample3A_g0_t0.imec.ap.meta", probeType: 0, rate: 30000, fileSize: 36233200080,
		saveChans0: []int{0, 768}, uv: 2.34375, used: 374,
		unused: []int{36, 75, 112, 151, 188, 227, 264, 303, 340, 379},
		sites:  []site{{0, 0, 27, 0}, {37, 0, 59, 360}},
	},
	{
		file: "phase3a.imec.ap.meta", probeType: 0, rate: 30000, fileSize: 4483321920,
		saveChans0: []int{0, 768}, uv: 2.34375, used: 374,
		unused: []int{36, 75, 112, 151, 188, 227, 264, 303, 340, 379},
		sites:  []site{{1, 0, 59, 0}, {383, 0, 43, 3820}},
	},
	{
		// NP2.0 single shank: 0.5/8192/80·1e6.
		file: "p2_g0_t0.imec0.ap.meta", probeType: 21, rate: 30000, fileSize: 45205648180,
		saveChans0: []int{0, 384}, uv: 0.762939453125, used: 383, unused: []int{127},
		sites: []site{{0, 0, 27, 0}, {1, 0, 59, 0}, {2, 0, 27, 15}, {383, 0, 59, 2865}},
	},
	{
		file: "sampleNP2.1_g0_t0.imec.ap.meta", probeType: 21, rate: 30000, fileSize: 69300000,
		saveChans0: []int{0, 384}, uv: 0.762939453125, used: 383, unused: []int{127},
		sites: []site{{3, 0, 59, 15}},
	},
	{
		// NP2.0 four shanks (type 24), shank pitch 250 µm.
		file: "NP2_4_shanks.imec0.ap.meta", probeType: 24, rate: 30000, fileSize: 23598960,
		saveChans0: []int{0, 384}, uv: 0.762939453125, used: 383, unused: []int{127},
		sites: []site{{0, 0, 27, 0}, {48, 1, 277, 0}, {49, 1, 309, 0}, {192, 2, 527, 0}, {383, 3, 809, 705}},
	},
	{
		file: "sampleNP2.4_4shanks_g0_t0.imec.ap.meta", probeType: 24, rate: 29999.757983, fileSize: 69300000,
		saveChans0: []int{0, 384}, uv: 0.762939453125, used: 383, unused: []int{127},
		sites: []site{{240, 3, 777, 0}, {96, 0, 27, 360}},
	},
	{
		// Type 2013 with ~snsGeomMap (NP2013,4,250,70) and imChan0apGain=100:
		// 0.62/2048/100·1e6.
		file: "NP2_2013_all_channels.imec0.ap.meta", probeType: 2013, rate: 30000, fileSize: 186155200,
		saveChans0: []int{0, 384}, uv: 3.02734375, used: 384,
		sites: []site{{0, 0, 27, 0}, {1, 0, 59, 0}, {47, 2, 559, 1065}, {48, 1, 277, 2880}, {96, 3, 777, 1800}, {383, 0, 59, 2145}},
	},
}

func TestParseMetaRealFiles(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/spikeglx/*.meta")
	if err != nil || len(files) != len(metaCases) {
		t.Fatalf("testdata holds %d metas (%v), cases cover %d", len(files), err, len(metaCases))
	}
	for _, tc := range metaCases {
		t.Run(tc.file, func(t *testing.T) {
			m := readMetaFile(t, tc.file)
			if m.TypeThis != "imec" || m.NSavedChans != 385 || m.SavedAPLFSY != [3]int{384, 0, 1} {
				t.Errorf("typeThis %q nSavedChans %d snsApLfSy %v", m.TypeThis, m.NSavedChans, m.SavedAPLFSY)
			}
			if m.SampleRate != tc.rate {
				t.Errorf("rate %v, want %v", m.SampleRate, tc.rate)
			}
			if m.ProbeType != tc.probeType {
				t.Errorf("probe type %d, want %d", m.ProbeType, tc.probeType)
			}
			if m.FileSizeBytes != tc.fileSize {
				t.Errorf("fileSizeBytes %d, want %d", m.FileSizeBytes, tc.fileSize)
			}
			if len(m.SaveChans) != 385 || m.SaveChans[0] != tc.saveChans0[0] || m.SaveChans[384] != tc.saveChans0[1] || m.SaveChans[383] != 383 {
				t.Errorf("SaveChans %v…%v", m.SaveChans[:2], m.SaveChans[383:])
			}
			if m.Fields["imroTbl"] == "" || strings.HasPrefix(m.Keys[len(m.Keys)-1], "~") {
				t.Errorf("tables not stored under their names without '~'")
			}
			uv, err := m.MicrovoltsPerCount()
			if err != nil {
				t.Fatal(err)
			}
			for c, v := range uv {
				want := tc.uv
				if c == 384 {
					want = 0 // sync
				}
				if math.Abs(v-want) > 1e-12*want {
					t.Fatalf("µV/count of channel %d = %v, want %v", c, v, want)
				}
			}
			p, err := m.Probe()
			if err != nil || p == nil {
				t.Fatalf("Probe: %v, %v", p, err)
			}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			if p.Len() != tc.used || p.NChanFile != 385 {
				t.Errorf("%d used sites of %d channels, want %d of 385", p.Len(), p.NChanFile, tc.used)
			}
			at := map[int]int{}
			for i, r := range p.ChanMap {
				at[r] = i
				if i > 0 && r <= p.ChanMap[i-1] {
					t.Fatalf("ChanMap not in file order at %d", i)
				}
			}
			if _, ok := at[384]; ok {
				t.Errorf("sync channel 384 is a site")
			}
			for _, r := range tc.unused {
				if _, ok := at[r]; ok {
					t.Errorf("row %d is marked unused but is a site", r)
				}
			}
			for _, s := range tc.sites {
				i, ok := at[s.row]
				if !ok {
					t.Errorf("row %d missing", s.row)
					continue
				}
				if p.X[i] != s.x || p.Y[i] != s.y || p.Shank[i] != s.shank {
					t.Errorf("row %d at (%v, %v) shank %d, want (%v, %v) shank %d", s.row, p.X[i], p.Y[i], p.Shank[i], s.x, s.y, s.shank)
				}
			}
		})
	}
}

func TestParseMetaSyntax(t *testing.T) {
	t.Parallel()
	in := "nSavedChans=3\r\n\r\ntypeThis=imec\r\nimSampRate=2500.5\r\nuserNotes=\r\n" +
		"odd=a=b==c\r\n  spaced  =  v  \r\n~snsShankMap=(1,2,2)\r\nimDatBsc_pn=NP2_QBSC_00\t\r\n" +
		"snsSaveChanSubset=all" // no final newline
	m, err := ParseMeta(strings.NewReader(in), "x.meta")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"nSavedChans": "3", "typeThis": "imec", "imSampRate": "2500.5", "userNotes": "",
		"odd": "a=b==c", "spaced": "v", "snsShankMap": "(1,2,2)", "imDatBsc_pn": "NP2_QBSC_00",
		"snsSaveChanSubset": "all",
	}
	if !reflect.DeepEqual(m.Fields, want) {
		t.Errorf("Fields = %q\nwant %q", m.Fields, want)
	}
	if len(m.Keys) != len(want) || m.Keys[0] != "nSavedChans" || m.Keys[len(m.Keys)-1] != "snsSaveChanSubset" {
		t.Errorf("Keys = %q", m.Keys)
	}
	if m.SampleRate != 2500.5 || m.NSavedChans != 3 || !reflect.DeepEqual(m.SaveChans, []int{0, 1, 2}) || m.FileSizeBytes != -1 {
		t.Errorf("typed fields: %+v", m)
	}
	// A missing typeThis means imec; the Imax default comes from the type.
	m, err = ParseMeta(strings.NewReader("nSavedChans=1\nimSampRate=1\nimDatPrb_type=21\n"), "y.meta")
	if err != nil || m.TypeThis != "imec" || m.MaxInt() != 8192 {
		t.Errorf("defaults: %v, %+v", err, m)
	}
}

func TestParseMetaErrors(t *testing.T) {
	t.Parallel()
	base := "nSavedChans=4\nimSampRate=30000\n"
	cases := []struct {
		name, in, want string
	}{
		{"no equals", base + "garbage line\n", "bad.meta:3"},
		{"empty key", base + "=5\n", "empty key"},
		{"no channels", "imSampRate=1\n", "nSavedChans"},
		{"channels not int", "nSavedChans=3.5\nimSampRate=1\n", "nSavedChans"},
		{"zero channels", "nSavedChans=0\nimSampRate=1\n", "nSavedChans"},
		{"huge channels", "nSavedChans=99999999999\nimSampRate=1\n", "nSavedChans"},
		{"no rate", "nSavedChans=4\n", "imSampRate"},
		{"nan rate", "nSavedChans=4\nimSampRate=NaN\n", "imSampRate"},
		{"negative rate", "nSavedChans=4\nimSampRate=-3\n", "imSampRate"},
		{"nidq rate", "nSavedChans=4\ntypeThis=nidq\nimSampRate=3\n", "niSampRate"},
		{"unknown stream", "nSavedChans=4\ntypeThis=xyz\nimSampRate=3\n", "typeThis"},
		{"bad size", base + "fileSizeBytes=12x\n", "fileSizeBytes"},
		{"bad apLfSy", base + "snsApLfSy=3,1\n", "snsApLfSy"},
		{"apLfSy sum", base + "snsApLfSy=3,0,0\n", "snsApLfSy"},
		{"subset short", base + "snsSaveChanSubset=0:2\n", "lists 3 channels"},
		{"subset long", base + "snsSaveChanSubset=0:2000000000\n", "more than"},
		{"subset reversed", base + "snsSaveChanSubset=5:2,1\n", "not a channel or range"},
		{"subset junk", base + "snsSaveChanSubset=a\n", "not a channel or range"},
		{"imMaxInt", base + "imMaxInt=0\n", "imMaxInt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMeta(strings.NewReader(tc.in), "bad.meta")
			if err == nil {
				t.Fatalf("no error for %q", tc.in)
			}
			if !strings.Contains(err.Error(), "bad.meta") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name the file and %q", err, tc.want)
			}
		})
	}
}

// TestMicrovoltsSubset checks that gains follow snsSaveChanSubset to the
// acquired channel's imroTbl entry, LF channels use lfGain, and sync is 0.
func TestMicrovoltsSubset(t *testing.T) {
	t.Parallel()
	// 4 AP + 4 LF + 1 SY acquired; saved: AP 1, AP 3, LF 2, SY.
	in := "typeThis=imec\nimSampRate=30000\nnSavedChans=4\nacqApLfSy=4,4,1\nsnsApLfSy=2,1,1\n" +
		"snsSaveChanSubset=1,3,6,8\nimAiRangeMax=0.6\nimDatPrb_type=0\n" +
		"~imroTbl=(0,4)(0 0 0 50 125 1)(1 0 0 250 500 1)(2 0 0 1000 2000 1)(3 0 0 3000 1500 1)\n"
	m, err := ParseMeta(strings.NewReader(in), "sub.meta")
	if err != nil {
		t.Fatal(err)
	}
	uv, err := m.MicrovoltsPerCount()
	if err != nil {
		t.Fatal(err)
	}
	k := 0.6 / 512 * 1e6
	want := []float64{k / 250, k / 3000, k / 2000, 0}
	for i := range want {
		if math.Abs(uv[i]-want[i]) > 1e-12 {
			t.Errorf("channel %d: %v µV/count, want %v", i, uv[i], want[i])
		}
	}
	// Stated imChan0apGain wins over the fixed NP2 gain; unknown types get 0.
	for _, tc := range []struct {
		extra string
		want  float64
	}{
		{"imDatPrb_type=21\nimMaxInt=8192\n", 0.5 / 8192 / 80 * 1e6},
		{"imDatPrb_type=21\nimMaxInt=8192\nimChan0apGain=40\n", 0.5 / 8192 / 40 * 1e6},
		{"imDatPrb_type=9999\nimMaxInt=8192\n", 0},
	} {
		m, err := ParseMeta(strings.NewReader("imSampRate=1\nnSavedChans=2\nacqApLfSy=1,0,1\nsnsApLfSy=1,0,1\nimAiRangeMax=0.5\n"+tc.extra), "g.meta")
		if err != nil {
			t.Fatal(err)
		}
		uv, err := m.MicrovoltsPerCount()
		if err != nil || math.Abs(uv[0]-tc.want) > 1e-12 || uv[1] != 0 {
			t.Errorf("%q: %v, %v; want %v", tc.extra, uv, err, tc.want)
		}
	}
}

func TestMetaTableErrors(t *testing.T) {
	t.Parallel()
	head := "imSampRate=1\nnSavedChans=3\nacqApLfSy=2,0,1\nsnsApLfSy=2,0,1\nimAiRangeMax=0.6\n"
	cases := []struct {
		name, in, want string
		probe          bool // the error comes from Probe, not MicrovoltsPerCount
	}{
		{"no imro", head + "imDatPrb_type=0\n", "imroTbl", false},
		{"short imro entry", head + "imroTbl=(0,2)(0 0 0 500)(1 0 0 500 250)\n", "entry 0", false},
		{"zero gain", head + "imroTbl=(0,2)(0 0 0 0 250)(1 0 0 500 250)\n", "gain", false},
		{"too few imro entries", head + "imroTbl=(0,1)(0 0 0 500 250)\n", "1 entries", false},
		{"unclosed", head + "imroTbl=(0,2)(0 0 0 500 250\n", "unclosed", false},
		{"no range", "imSampRate=1\nnSavedChans=3\nacqApLfSy=2,0,1\nimDatPrb_type=21\n", "imAiRangeMax", false},
		{"geom count", head + "imDatPrb_type=21\nsnsGeomMap=(NP2000,1,0,70)(0:27:0:1)\n", "1 entries but 2", true},
		{"geom header", head + "imDatPrb_type=21\nsnsGeomMap=(NP2000,1)(0:27:0:1)(0:59:0:1)\n", "header", true},
		{"geom shank", head + "imDatPrb_type=21\nsnsGeomMap=(NP2000,1,0,70)(0:27:0:1)(1:59:0:1)\n", "shank 1 of 1", true},
		{"geom fields", head + "imDatPrb_type=21\nsnsGeomMap=(NP2000,1,0,70)(0:27:0)(0:59:0:1)\n", "four", true},
		{"used not int", head + "imDatPrb_type=21\nsnsGeomMap=(NP2000,1,0,70)(0:27:0:yes)(0:59:0:1)\n", "not a valid number", true},
		{"none used", head + "imDatPrb_type=21\nsnsGeomMap=(NP2000,1,0,70)(0:27:0:0)(0:59:0:0)\n", "no site", true},
		{"same place ok but grid", head + "imDatPrb_type=21\nsnsShankMap=(1,2,2)(0:0:0:1)(0:2:0:1)\n", "outside", true},
		{"unknown type", head + "imDatPrb_type=7777\nsnsShankMap=(1,2,2)(0:0:0:1)(0:1:0:1)\n", "probe type 7777", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseMeta(strings.NewReader(tc.in), "tbl.meta")
			if err != nil {
				t.Fatal(err)
			}
			if tc.probe {
				p, err := m.Probe()
				if err == nil || p != nil {
					t.Fatalf("Probe() = %v, %v", p, err)
				}
				checkErr(t, err, "tbl.meta", tc.want)
				return
			}
			_, err = m.MicrovoltsPerCount()
			checkErr(t, err, "tbl.meta", tc.want)
		})
	}
	// No table at all is not an error.
	m, err := ParseMeta(strings.NewReader(head), "none.meta")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := m.Probe(); p != nil || err != nil {
		t.Errorf("Probe() without tables = %v, %v", p, err)
	}
}

func checkErr(t *testing.T, err error, name, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error (want one naming %s and %q)", name, want)
	}
	if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q and %q", err, name, want)
	}
}

func TestMetaErrorType(t *testing.T) {
	_, err := ParseMeta(strings.NewReader("nSavedChans=2\nimSampRate=x\n"), "e.meta")
	var me *MetaError
	if !errors.As(err, &me) || me.Line != 2 || me.Key != "imSampRate" || me.Name != "e.meta" {
		t.Errorf("error %#v", err)
	}
}

func FuzzParseMeta(f *testing.F) {
	files, _ := filepath.Glob("testdata/spikeglx/*.meta")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("nSavedChans=3\nimSampRate=1\nsnsApLfSy=2,0,1\nacqApLfSy=2,0,1\nimAiRangeMax=1\nsnsGeomMap=(x,1,0,1)(0:1:2:1)(0:3:4:1)\n"))
	f.Add([]byte("nSavedChans=3\nimSampRate=1\nsnsApLfSy=2,0,1\nsnsShankMap=(1,2,2)(0:0:0:1)(0:1:1:1)\nimroTbl=(0,2)(0 0 0 500 250)(1 0 0 500 250)\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMeta(bytes.NewReader(data), "fuzz.meta")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.meta") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if len(m.SaveChans) != m.NSavedChans || !(m.SampleRate > 0) {
			t.Fatalf("inconsistent meta: %d saved of %d, rate %v", len(m.SaveChans), m.NSavedChans, m.SampleRate)
		}
		m2, err := ParseMeta(bytes.NewReader(data), "fuzz.meta")
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("not deterministic")
		}
		if uv, err := m.MicrovoltsPerCount(); err == nil && len(uv) != m.NSavedChans {
			t.Fatalf("%d scales for %d channels", len(uv), m.NSavedChans)
		}
		if p, err := m.Probe(); err == nil && p != nil {
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestProbeContradictions checks that a -probe contradicting the meta's
// geometry or probe type is reported, and a shifted or mirrored copy of
// it is not.
func TestProbeContradictions(t *testing.T) {
	meta := func(typ int, geom string) *Meta {
		m := &Meta{Name: "x.meta", TypeThis: "imec", ProbeType: typ, NSavedChans: 3,
			SavedAPLFSY: [3]int{2, 0, 1}, Fields: map[string]string{"snsApLfSy": "2,0,1"}}
		if geom != "" {
			m.Fields["snsGeomMap"] = geom
		}
		return m
	}
	p := &probe.Probe{Name: "p.json", X: []float64{0, 32}, Y: []float64{0, 0}, Shank: []int{0, 0}, ChanMap: []int{0, 1}, NChanFile: 3}
	for _, c := range []struct {
		name   string
		m      *Meta
		preset string
		want   string
	}{
		{"same", meta(0, "(NP1000,1,0,70)(0:0:0:1)(0:32:0:1)"), "", ""},
		{"shifted", meta(0, "(NP1000,1,0,70)(0:27:20:1)(0:59:20:1)"), "", ""},
		{"mirrored", meta(0, "(NP1000,1,0,70)(0:32:0:1)(0:0:0:1)"), "", ""},
		{"other pitch", meta(0, "(NP1000,1,0,70)(0:0:0:1)(0:0:15:1)"), "", "contradicts the meta's geometry (1 of 2 sites elsewhere; file row 1 at (32, 0)"},
		{"fewer sites", meta(0, "(NP1000,1,0,70)(0:0:0:1)(0:32:0:0)"), "", "1 sites in the meta, 2 given"},
		{"malformed", meta(0, "(NP1000,1,0,70)(0:0:0:1)(0:x:0:1)"), "", "using -probe p.json instead"},
		{"np2 on NP1", meta(0, ""), "np2", "-probe np2, but the meta's imDatPrb_type is 0"},
		{"np1 on NP2", meta(21, ""), "np1", "imDatPrb_type is 21"},
		{"np2 on NP2", meta(21, ""), "np2", ""},
	} {
		got := strings.Join(c.m.ProbeContradictions(p, c.preset), "\n")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
