package probe

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestNeuropixelsLibrary reads the four probeinterface library files and
// checks the counts in formats.md §4 and each model's layout rule.
func TestNeuropixelsLibrary(t *testing.T) {
	for _, c := range []struct {
		file   string
		n      int
		shanks int
		// pos is the expected position of contact i (file row i, since
		// the files have no device_channel_indices).
		pos func(i int) (x, y float64, shank int)
	}{
		// NP1.0: 4 staggered columns, 20 µm rows of two.
		{"NP1000.json", 960, 1, func(i int) (float64, float64, int) {
			return [4]float64{16, 48, 0, 32}[i%4], float64(20 * (i / 2)), 0
		}},
		// NP2.0 single shank: 2 columns 32 µm apart, 15 µm rows.
		{"NP2000.json", 1280, 1, func(i int) (float64, float64, int) {
			return float64(32 * (i % 2)), float64(15 * (i / 2)), 0
		}},
		// NP2.0 four shanks 250 µm apart, 1280 electrodes each.
		{"NP2013.json", 4 * 1280, 4, func(i int) (float64, float64, int) {
			s, e := i/1280, i%1280
			return float64(250*s + 32*(e%2)), float64(15 * (e / 2)), s
		}},
		{"NP2014.json", 4 * 1280, 4, func(i int) (float64, float64, int) {
			s, e := i/1280, i%1280
			return float64(250*s + 32*(e%2)), float64(15 * (e / 2)), s
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", c.file)
			p, err := ReadProbeInterface(path)
			if err != nil {
				t.Fatal(err)
			}
			if p.Len() != c.n || p.NChanFile != c.n || p.Name != path {
				t.Fatalf("%d sites, %d file channels, name %q; want %d, %d, %q", p.Len(), p.NChanFile, p.Name, c.n, c.n, path)
			}
			shanks := map[int]int{}
			bad := 0
			for i := range p.Len() {
				x, y, s := c.pos(i)
				if p.ChanMap[i] != i || p.X[i] != x || p.Y[i] != y || p.Shank[i] != s {
					if bad++; bad < 5 {
						t.Errorf("site %d: row %d at (%g, %g) shank %d; want row %d at (%g, %g) shank %d",
							i, p.ChanMap[i], p.X[i], p.Y[i], p.Shank[i], i, x, y, s)
					}
				}
				shanks[p.Shank[i]]++
			}
			if len(shanks) != c.shanks {
				t.Errorf("%d shanks; want %d", len(shanks), c.shanks)
			}
			for s, k := range shanks {
				if k != c.n/c.shanks {
					t.Errorf("shank %d has %d sites", s, k)
				}
			}
		})
	}
}

// TestNP1MirrorsNP1000 checks formats.md §4: Kilosort's NP1 map is the
// mirror image of NP1000 bank 0 (electrodes e0…e383 on channels 0…383):
// x_KS = 59 − x_PI, y_KS = y_PI + 20.
func TestNP1MirrorsNP1000(t *testing.T) {
	pi, err := ReadProbeInterface(filepath.Join("testdata", "NP1000.json"))
	if err != nil {
		t.Fatal(err)
	}
	ks := NP1()
	for i := range ks.Len() {
		if ks.X[i] != 59-pi.X[i] || ks.Y[i] != pi.Y[i]+20 {
			t.Errorf("site %d: NP1 (%g, %g), NP1000 (%g, %g)", i, ks.X[i], ks.Y[i], pi.X[i], pi.Y[i])
		}
	}
	// NP2 is NP2000 bank 0 as is.
	pi2, err := ReadProbeInterface(filepath.Join("testdata", "NP2000.json"))
	if err != nil {
		t.Fatal(err)
	}
	np2 := NP2()
	for i := range np2.Len() {
		if np2.X[i] != pi2.X[i] || np2.Y[i] != pi2.Y[i] {
			t.Errorf("site %d: NP2 (%g, %g), NP2000 (%g, %g)", i, np2.X[i], np2.Y[i], pi2.X[i], pi2.Y[i])
		}
	}
}

// piDoc builds a one-probe probeinterface document from probe-level JSON
// members.
func piDoc(members string) string {
	return `{"specification": "probeinterface", "version": "0.3.2", "probes": [{"ndim": 2, "si_units": "um", ` + members + `}]}`
}

func TestParseProbeInterfaceDevice(t *testing.T) {
	// Four contacts; contact 1 not recorded; rows out of contact order;
	// shank ids as ints.
	doc := piDoc(`"contact_positions": [[0, 0], [10, 0], [0, 20], [10, 20]],
		"shank_ids": [0, 0, 1, 1], "device_channel_indices": [5, -1, 2, 7]`)
	p, err := ParseProbeInterface([]byte(doc), "dev.json")
	if err != nil {
		t.Fatal(err)
	}
	// Sites ordered by file row: contact 2 (row 2), 0 (row 5), 3 (row 7).
	want := &Probe{Name: "dev.json", X: []float64{0, 0, 10}, Y: []float64{20, 0, 20}, Shank: []int{1, 0, 1}, ChanMap: []int{2, 5, 7}, NChanFile: 8}
	if !equalProbe(p, want) {
		t.Errorf("got %+v\nwant %+v", p, want)
	}

	// mm → µm; string shank ids, numeric and not.
	doc = `{"specification": "probeinterface", "probes": [{"ndim": 2, "si_units": "mm",
		"contact_positions": [[0.016, 0.02], [0.048, 0.5]], "shank_ids": ["b", "a"]}]}`
	p, err = ParseProbeInterface([]byte(doc), "mm.json")
	if err != nil {
		t.Fatal(err)
	}
	want = &Probe{Name: "mm.json", X: []float64{16, 48}, Y: []float64{20, 500}, Shank: []int{1, 0}, ChanMap: []int{0, 1}, NChanFile: 2}
	if !equalProbe(p, want) {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	p, err = ParseProbeInterface([]byte(piDoc(`"contact_positions": [[0, 0], [1, 1]], "shank_ids": ["", ""]`)), "empty-shank.json")
	if err != nil || p.Shank[0] != 0 || p.Shank[1] != 0 {
		t.Errorf("empty shank ids: %v %v", p, err)
	}
}

func TestParseProbeInterfaceIndex(t *testing.T) {
	doc := `{"specification": "probeinterface", "probes": [
		{"ndim": 2, "si_units": "um", "contact_positions": [[0, 0], [0, 20]], "device_channel_indices": [0, 1]},
		{"ndim": 2, "si_units": "um", "contact_positions": [[100, 0], [100, 20], [100, 40]], "device_channel_indices": [2, 3, 4]}]}`
	if _, err := ParseProbeInterface([]byte(doc), "two.json"); err == nil || !strings.Contains(err.Error(), "2 probes") {
		t.Errorf("two probes without index: %v", err)
	}
	p, err := ParseProbeInterfaceIndex([]byte(doc), "two.json", 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != 3 || p.X[0] != 100 || p.ChanMap[2] != 4 || p.NChanFile != 5 || p.Name != "two.json[1]" {
		t.Errorf("probe 1: %+v", p)
	}
	if _, err := ParseProbeInterfaceIndex([]byte(doc), "two.json", 2); err == nil || !strings.Contains(err.Error(), "two.json") {
		t.Errorf("index 2: %v", err)
	}
	p, err = ReadProbeInterfaceIndex(filepath.Join("testdata", "NP2000.json"), 0)
	if err != nil || p.Len() != 1280 {
		t.Errorf("ReadProbeInterfaceIndex: %v", err)
	}
	if _, err := ReadProbeInterface(filepath.Join("testdata", "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

// TestBrokenProbes is the table of broken probe files; each error must name
// the file and say what is wrong.
func TestBrokenProbes(t *testing.T) {
	for _, c := range []struct {
		name, doc, want string
	}{
		{"pi-not-json", `{"specification": "probeinterface", `, "line 1"},
		{"pi-spec", `{"specification": "other", "probes": []}`, "not a probeinterface"},
		{"pi-no-probes", `{"specification": "probeinterface", "probes": []}`, "no probes"},
		{"pi-ndim3", `{"specification": "probeinterface", "probes": [{"ndim": 3, "contact_positions": [[0,0,0]]}]}`, "ndim 3"},
		{"pi-units", `{"specification": "probeinterface", "probes": [{"ndim": 2, "si_units": "cm", "contact_positions": [[0,0]]}]}`, "si_units"},
		{"pi-coords", piDoc(`"contact_positions": [[0, 0], [1]]`), "contact 1 has 1 coordinates"},
		{"pi-no-contacts", piDoc(`"contact_positions": []`), "no sites"},
		{"pi-none-connected", piDoc(`"contact_positions": [[0, 0]], "device_channel_indices": [-1]`), "none of the 1 contacts"},
		// Fewer contacts than device channel indices, shank ids or ids.
		{"pi-fewer-sites-than-channels", piDoc(`"contact_positions": [[0, 0]], "device_channel_indices": [0, 1]`), "1 contact positions but 2 device_channel_indices"},
		{"pi-shank-length", piDoc(`"contact_positions": [[0, 0]], "shank_ids": ["0", "1"]`), "1 contact positions but 2 shank_ids"},
		{"pi-ids-length", piDoc(`"contact_positions": [[0, 0]], "contact_ids": ["e0", "e1"]`), "contact_ids"},
		{"pi-duplicate", piDoc(`"contact_positions": [[0, 0], [0, 20]], "device_channel_indices": [3, 3]`), "both map to file channel 3"},
		{"pi-negative", piDoc(`"contact_positions": [[0, 0]], "device_channel_indices": [-2]`), "device_channel_indices[0]"},
		{"pi-fraction", piDoc(`"contact_positions": [[0, 0]], "device_channel_indices": [1.5]`), "device_channel_indices[0]"},
		{"pi-shank-type", piDoc(`"contact_positions": [[0, 0]], "shank_ids": [[0]]`), "shank_ids[0]"},
		{"pi-huge", piDoc(`"contact_positions": [[1e308, 0]], "si_units": "mm"`), "non-finite"},
		{"pi-nan", piDoc(`"contact_positions": [[NaN, 0]]`), "invalid character"},
		{"ks-lengths", `{"chanMap": [0, 1, 2], "xc": [0, 1], "yc": [0, 1, 2], "kcoords": [0, 0, 0], "n_chan": 3}`, "3 chanMap entries but 2 xc"},
		{"ks-kcoords-length", `{"chanMap": [0, 1], "xc": [0, 1], "yc": [0, 1], "kcoords": [0], "n_chan": 3}`, "1 kcoords"},
		{"ks-duplicate", `{"chanMap": [0, 0], "xc": [0, 1], "yc": [0, 1], "n_chan": 3}`, "both map to file channel 0"},
		{"ks-negative", `{"chanMap": [-1], "xc": [0], "yc": [0], "n_chan": 3}`, "chanMap[0] = -1"},
		{"ks-fraction", `{"chanMap": [0.5], "xc": [0], "yc": [0]}`, "chanMap[0] = 0.5"},
		{"ks-kcoords", `{"chanMap": [0], "xc": [0], "yc": [0], "kcoords": [0.5]}`, "kcoords[0] = 0.5"},
		{"ks-nchan-small", `{"chanMap": [0, 1, 2, 3], "xc": [0, 0, 0, 0], "yc": [0, 1, 2, 3], "n_chan": 2}`, "n_chan = 2 but chanMap uses file channel 3"},
		{"ks-nchan-bad", `{"chanMap": [0], "xc": [0], "yc": [0], "n_chan": 0}`, "n_chan = 0"},
		{"ks-no-chanmap", `{"xc": [0], "yc": [0]}`, "no \"chanMap\""},
		{"ks-huge", `{"chanMap": [0], "xc": [1e999], "yc": [0]}`, "xc"},
		{"ks-type", `{"chanMap": "0", "xc": [0], "yc": [0]}`, "chanMap"},
		{"neither", `{"x": 1}`, "neither a probeinterface"},
		{"not-object", `[1, 2]`, "not a JSON probe file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "testdata/" + c.name + ".json"
			p, err := Parse([]byte(c.doc), name)
			if err == nil {
				t.Fatalf("no error; got %+v", p)
			}
			if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q; want it to name the file and contain %q", err, c.want)
			}
		})
	}
}

// equalProbe compares two probes exactly.
// equalProbe compares the geometry of two probes: every field but the
// channel count a probe file states.
func equalProbe(a, b *Probe) bool {
	x, y := *a, *b
	x.StatedChannels, y.StatedChannels = 0, 0
	return fmt.Sprintf("%+v", x) == fmt.Sprintf("%+v", y)
}
