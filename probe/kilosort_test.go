package probe

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKilosortJSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// A random multi-shank probe with a scattered channel map.
	n := 37
	p := &Probe{Name: "rand", X: make([]float64, n), Y: make([]float64, n), Shank: make([]int, n), NChanFile: 64}
	p.ChanMap = rng.Perm(64)[:n]
	for i := range n {
		p.X[i] = rng.NormFloat64() * 100
		p.Y[i] = float64(rng.IntN(4000)) + 0.25
		p.Shank[i] = rng.IntN(4)
	}
	for _, q := range []*Probe{NP1(), NP2(), p} {
		var b bytes.Buffer
		if err := WriteKilosortJSON(&b, q); err != nil {
			t.Fatal(err)
		}
		// The keys Kilosort's load_probe reads.
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b.Bytes(), &keys); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"chanMap", "xc", "yc", "kcoords", "n_chan"} {
			if _, ok := keys[k]; !ok {
				t.Errorf("%s: key %s missing", q.Name, k)
			}
		}
		r, err := ParseKilosortJSON(b.Bytes(), q.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !equalProbe(r, q) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", q.Name, r, q)
		}
	}
	// An invalid probe is not written.
	bad := NP1()
	bad.ChanMap[1] = 0
	if err := WriteKilosortJSON(&bytes.Buffer{}, bad); err == nil {
		t.Error("invalid probe written")
	}
}

func TestParseKilosortJSONDefaults(t *testing.T) {
	// kcoords and n_chan absent; floats in chanMap that are integers.
	p, err := ParseKilosortJSON([]byte(`{"chanMap": [3.0, 1], "xc": [0, 16], "yc": [20, 20]}`), "min.json")
	if err != nil {
		t.Fatal(err)
	}
	want := &Probe{Name: "min.json", X: []float64{0, 16}, Y: []float64{20, 20}, Shank: []int{0, 0}, ChanMap: []int{3, 1}, NChanFile: 4}
	if !equalProbe(p, want) {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	ks := filepath.Join(dir, "chanmap.json")
	var b bytes.Buffer
	if err := WriteKilosortJSON(&b, NP2()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ks, b.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg  string
		n    int
		name string
	}{
		{"np1", 384, "np1"},
		{"NP2", 384, "np2"},
		{filepath.Join("testdata", "NP1000.json"), 960, filepath.Join("testdata", "NP1000.json")},
		{ks, 384, ks},
	} {
		p, err := Load(c.arg)
		if err != nil {
			t.Fatalf("Load(%s): %v", c.arg, err)
		}
		if p.Len() != c.n || p.Name != c.name {
			t.Errorf("Load(%s): %d sites, name %q", c.arg, p.Len(), p.Name)
		}
	}
	if p, _ := Load(ks); !equalProbe(p, &Probe{Name: ks, X: NP2().X, Y: NP2().Y, Shank: NP2().Shank, ChanMap: NP2().ChanMap, NChanFile: 385}) {
		t.Error("Load of the Kilosort file differs from NP2")
	}
	prb := filepath.Join(dir, "x.prb")
	os.WriteFile(prb, []byte("channel_groups = {0: {}}\n"), 0o666)
	for arg, want := range map[string]string{
		"np9":                     "neither a file nor a preset",
		prb:                       ".prb files",
		filepath.Join(dir, "d.t"): "neither a file nor a preset",
	} {
		if _, err := Load(arg); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), arg) {
			t.Errorf("Load(%s): %v; want %q", arg, err, want)
		}
	}
}

// FuzzProbeInterface checks that the probeinterface parser never panics and
// that every probe it returns is valid.
func FuzzProbeInterface(f *testing.F) {
	f.Add([]byte(piDoc(`"contact_positions": [[0, 0], [10, 0], [0, 20]], "shank_ids": [0, "1", ""], "device_channel_indices": [5, -1, 2]`)))
	f.Add([]byte(piDoc(`"contact_positions": [[0, 0]], "si_units": "mm"`)))
	f.Add([]byte(`{"specification": "probeinterface", "probes": [{"ndim": 2, "contact_positions": [[1, 2]]}, {"ndim": 2, "contact_positions": [[3, 4]]}]}`))
	small, _ := os.ReadFile(filepath.Join("testdata", "NP1000.json"))
	f.Add(small[:2000])
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func() (*Probe, error){
			func() (*Probe, error) { return ParseProbeInterface(data, "fuzz.json") },
			func() (*Probe, error) { return ParseProbeInterfaceIndex(data, "fuzz.json", 1) },
			func() (*Probe, error) { return Parse(data, "fuzz.json") },
		} {
			p, err := parse()
			if err != nil {
				if !strings.Contains(err.Error(), "fuzz.json") {
					t.Fatalf("error %q does not name the file", err)
				}
				continue
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("returned an invalid probe: %v", err)
			}
			_ = p.Summary()
		}
	})
}

// FuzzKilosortJSON checks that the Kilosort parser never panics, that
// every probe it returns is valid, and that it survives a write and a
// second parse unchanged.
func FuzzKilosortJSON(f *testing.F) {
	f.Add([]byte(`{"chanMap": [0, 1, 2], "xc": [43, 11, 59], "yc": [20, 20, 40], "kcoords": [0, 0, 1], "n_chan": 385}`))
	f.Add([]byte(`{"chanMap": [2], "xc": [0], "yc": [0]}`))
	f.Add([]byte(`{"chanMap": [0, 0], "xc": [0, 1], "yc": [0, 1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseKilosortJSON(data, "fuzz.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("returned an invalid probe: %v", err)
		}
		var b bytes.Buffer
		if err := WriteKilosortJSON(&b, p); err != nil {
			t.Fatalf("write: %v", err)
		}
		q, err := ParseKilosortJSON(b.Bytes(), "fuzz.json")
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b.Bytes(), err)
		}
		if !equalProbe(p, q) {
			t.Fatalf("round trip\n got %+v\nwant %+v", q, p)
		}
	})
}
