package export

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o666); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		os.WriteFile(path+".got", got, 0o666)
		t.Errorf("%s differs from the golden file (got written to %s.got)\n got:\n%s\nwant:\n%s", name, path, got, want)
	}
}

func TestWriteParamsPyGolden(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		p    ParamsPy
	}{
		{"params_np1.py", ParamsPy{DatPath: []string{"rec_g0_t0.imec0.ap.bin"}, NChannelsDat: 385, DType: "int16", SampleRate: 30000}},
		{"params_whitened.py", ParamsPy{DatPath: []string{"temp_wh.dat"}, NChannelsDat: 384, DType: "int16", Offset: 0, SampleRate: 30000.390639481, HPFiltered: true}},
		{"params_list.py", ParamsPy{DatPath: []string{`C:\data\a.bin`, "it's.bin"}, NChannelsDat: 4, DType: "float32", Offset: 1024, SampleRate: 15000}},
		{"params_empty.py", ParamsPy{NChannelsDat: 1, DType: "int16", SampleRate: 2.5e16}},
	} {
		path := filepath.Join(dir, c.name)
		if err := WriteParamsPy(path, c.p); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, c.name, got)
	}
}

func TestWriteParamsPyInvalid(t *testing.T) {
	good := ParamsPy{DatPath: []string{"a.bin"}, NChannelsDat: 385, DType: "int16", SampleRate: 30000}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		edit func(*ParamsPy)
		want string
	}{
		{"channels", func(p *ParamsPy) { p.NChannelsDat = 0 }, "n_channels_dat"},
		{"dtype empty", func(p *ParamsPy) { p.DType = "" }, "dtype"},
		{"dtype inject", func(p *ParamsPy) { p.DType = "int16'; import os" }, "dtype"},
		{"offset", func(p *ParamsPy) { p.Offset = -1 }, "offset"},
		{"rate zero", func(p *ParamsPy) { p.SampleRate = 0 }, "sample_rate"},
		{"rate nan", func(p *ParamsPy) { p.SampleRate = math.NaN() }, "sample_rate"},
		{"rate inf", func(p *ParamsPy) { p.SampleRate = math.Inf(1) }, "sample_rate"},
	} {
		p := good
		c.edit(&p)
		path := filepath.Join(dir, c.name+".py")
		err := WriteParamsPy(path, p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v; want one naming %q and the file", c.name, err, c.want)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s: file written despite the error", c.name)
		}
	}
	if err := WriteParamsPy(filepath.Join(dir, "no", "params.py"), good); err == nil || !strings.Contains(err.Error(), "no") {
		t.Errorf("missing folder: %v", err)
	}
}

func TestPyFloat(t *testing.T) {
	// Python's repr of each value.
	for v, want := range map[float64]string{
		30000:            "30000.0",
		30000.390639481:  "30000.390639481",
		29999.757983:     "29999.757983",
		0.5:              "0.5",
		1e-4:             "0.0001",
		1e-5:             "1e-05",
		1.5e-7:           "1.5e-07",
		1e16:             "1e+16",
		9999999999999998: "9999999999999998.0",
		0:                "0.0",
		-2:               "-2.0",
	} {
		if got := pyFloat(v); got != want {
			t.Errorf("pyFloat(%v) = %s; want %s", v, got, want)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	dir := t.TempDir()
	type prov struct {
		Version string             `json:"version"`
		Params  map[string]float64 `json:"params"`
	}
	in := prov{"dspk test", map[string]float64{"Th_universal": 9, "fs": 30000}}
	path := filepath.Join(dir, "dspk.json")
	if err := WriteJSON(path, in); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "provenance.json", b)
	var out prov
	if err := json.Unmarshal(b, &out); err != nil || out.Version != in.Version || out.Params["fs"] != 30000 {
		t.Errorf("read back %+v, %v", out, err)
	}
	err = WriteJSON(filepath.Join(dir, "bad.json"), map[string]float64{"x": math.NaN()})
	if err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("NaN: error %v; want one naming the file", err)
	}
}

// TestParamsPyASCII checks that params.py string literals are ASCII only
// whatever the path holds: non-ASCII characters as \x, \u and \U escapes,
// bytes of invalid UTF-8 as the \udcNN surrogates of Python's
// os.fsdecode (checked against python3: eval of each literal gives the
// string whose os.fsencode is the original bytes).
func TestParamsPyASCII(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/data/run.bin", `'/data/run.bin'`},
		{"/données/µ/é", `'/donn\xe9es/\xb5/\xe9'`},
		{"/мозг/脳/\U0001F9E0", `'/\u043c\u043e\u0437\u0433/\u8133/\U0001f9e0'`},
		{"/latin1-\xe9t\xe9/\xff", `'/latin1-\udce9t\udce9/\udcff'`},
		{"it's\\\n\t\x01", `'it\'s\\\n\t\x01'`},
	} {
		got := pyQuoteASCII(c.in)
		if got != c.want {
			t.Errorf("%q: got %s, want %s", c.in, got, c.want)
		}
		for i := range len(got) {
			if got[i] >= 0x80 {
				t.Errorf("%q: byte %d of %q is not ASCII", c.in, i, got)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "params.py")
	if err := WriteParamsPy(path, ParamsPy{DatPath: []string{"/données/\xff.bin"}, NChannelsDat: 385, DType: "int16", SampleRate: 30000}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `dat_path = '/donn\xe9es/\udcff.bin'`) {
		t.Errorf("params.py:\n%s", b)
	}
}
