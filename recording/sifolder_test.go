package recording

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// siTestdata holds two folders written by SpikeInterface 0.105
// (testdata/spikeinterface/make.py), the traces it reads back and
// reference.json, what it states about them.
const siTestdata = "testdata/spikeinterface"

type siReference struct {
	Locations [][2]float64 `json:"locations"`
	Groups    []int        `json:"groups"`
	Gains     []float64    `json:"gains"`
	Rate      float64      `json:"rate"`
	Samples   []int64      `json:"samples"`
}

func readSIReference(t *testing.T) map[string]siReference {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(siTestdata, "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]siReference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// readAll reads every sample of rec.
func readAll(t *testing.T, rec Recording) []int16 {
	t.Helper()
	v := make([]int16, int(rec.Samples())*rec.Channels())
	if err := rec.ReadInt16(v, 0, int(rec.Samples())); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSIFolderAsSpikeInterfaceReadsIt opens the folders SpikeInterface
// wrote and checks every value against what SpikeInterface reads from
// them: the samples (two int16 segments one after the other; float32 µV
// at 0.1 µV per count), rate, µV per count, and the probe's positions
// and groups per channel (two tetrodes are two shanks).
func TestSIFolderAsSpikeInterfaceReadsIt(t *testing.T) {
	ref := readSIReference(t)
	for _, name := range []string{"int16_2seg", "float32_tetrodes"} {
		t.Run(name, func(t *testing.T) {
			want := ref[name]
			rec, err := Open(filepath.Join(siTestdata, name), OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Close()
			s := rec.(*SIFolder)
			var total int64
			for _, n := range want.Samples {
				total += n
			}
			if s.Format() != "spikeinterface" || s.SampleRate() != want.Rate || s.Samples() != total || s.Channels() != len(want.Gains) {
				t.Fatalf("format %s, %g Hz, %d samples, %d channels; want %g Hz, %d samples, %d channels",
					s.Format(), s.SampleRate(), s.Samples(), s.Channels(), want.Rate, total, len(want.Gains))
			}
			if len(s.Files()) != len(want.Samples) || s.SegmentStarts()[len(want.Samples)-1] != total-want.Samples[len(want.Samples)-1] {
				t.Errorf("files %v, segment starts %v; want %d segments of %v", s.Files(), s.SegmentStarts(), len(want.Samples), want.Samples)
			}
			refBytes, err := os.ReadFile(filepath.Join(siTestdata, name+".ref.bin"))
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, s)
			uv := s.MicrovoltsPerCount()
			for i, g := range got {
				var w int16
				wantUV := want.Gains[i%len(want.Gains)]
				if s.DType() == Float32 {
					f := math.Float32frombits(binary.LittleEndian.Uint32(refBytes[4*i:]))
					w = int16(math.Round(float64(f) * wantUV / SIFloatMicrovoltsPerCount))
					wantUV = SIFloatMicrovoltsPerCount
				} else {
					w = int16(binary.LittleEndian.Uint16(refBytes[2*i:]))
				}
				if g != w || uv[i%len(uv)] != wantUV {
					t.Fatalf("value %d: %d at %g µV/count, want %d at %g", i, g, uv[i%len(uv)], w, wantUV)
				}
			}
			pr := s.Probe()
			if pr == nil || pr.Len() != len(want.Locations) {
				t.Fatalf("probe %+v; want %d sites", pr, len(want.Locations))
			}
			for i, r := range pr.ChanMap {
				loc := want.Locations[r]
				if math.Abs(pr.X[i]-loc[0]) > 1e-9 || math.Abs(pr.Y[i]-loc[1]) > 1e-9 || pr.Shank[i] != want.Groups[r] {
					t.Errorf("site %d (channel %d) at (%g, %g) shank %d; SpikeInterface: %v group %d", i, r, pr.X[i], pr.Y[i], pr.Shank[i], loc, want.Groups[r])
				}
			}
			// The binary.json path opens the same folder.
			again, err := Open(filepath.Join(siTestdata, name, "binary.json"), OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if !slices.Equal(readAll(t, again), got) {
				t.Error("the folder's binary.json reads other values than the folder")
			}
		})
	}
}

// TestSIFolderScale checks the scale of float32 samples: -scale replaces
// the default (µV per count = gain / scale), and a folder without gains
// needs one.
func TestSIFolderScale(t *testing.T) {
	src := filepath.Join(siTestdata, "float32_tetrodes")
	s, err := OpenSIFolder(src, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, _ := os.ReadFile(filepath.Join(src, "traces_cached_seg0.raw"))
	got := readAll(t, s)
	for i := range 50 {
		f := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if got[i] != int16(math.Round(float64(f)*3)) {
			t.Fatalf("value %d: %d, want round(%g·3)", i, got[i], f)
		}
	}
	if uv := s.MicrovoltsPerCount(); uv[0] != 1.0/3 {
		t.Errorf("µV per count %g, want 1/3", uv[0])
	}
	dir := copySIFolder(t, src, func(j string) string {
		return strings.Replace(j, `"gain_to_uV": [`, `"gain_to_uV": null, "unused": [`, 1)
	})
	if _, err := OpenSIFolder(dir, 0); err == nil || !strings.Contains(err.Error(), "give -scale") {
		t.Errorf("float32 without gains: %v", err)
	}
	if _, err := OpenSIFolder(dir, 2); err != nil {
		t.Errorf("float32 without gains, with a scale: %v", err)
	}
}

// copySIFolder copies a test folder into a temporary one, binary.json
// edited by edit.
func copySIFolder(t *testing.T, src string, edit func(string) string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	bj := filepath.Join(dir, "binary.json")
	b, err := os.ReadFile(bj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bj, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSIFolderRefused opens broken copies of a folder: each must fail
// with an error that names the file at fault and says what is wrong.
func TestSIFolderRefused(t *testing.T) {
	src := filepath.Join(siTestdata, "int16_2seg")
	same := func(j string) string { return j }
	cases := []struct {
		name  string
		edit  func(string) string
		files func(t *testing.T, dir string)
		opts  OpenOptions
		want  []string
	}{
		{name: "broken json", edit: func(j string) string { return strings.Replace(j, `"num_channels": 6,`, `"num_channels": 6`, 1) },
			want: []string{"binary.json", "line 13, column 10"}},
		{name: "missing segment", edit: same, files: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "traces_cached_seg1.raw"))
		}, want: []string{"binary.json", "segment 1", "traces_cached_seg1.raw is missing"}},
		{name: "wrong size", edit: same, files: func(t *testing.T, dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, "traces_cached_seg0.raw"), os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte{1, 2, 3})
			f.Close()
		}, want: []string{"traces_cached_seg0.raw", "18003 bytes", "6-channel", "binary.json"}},
		{name: "wrong channels", edit: func(j string) string { return strings.Replace(j, `"num_channels": 6,`, `"num_channels": 7,`, 1) },
			want: []string{"binary.json", "6 gain_to_uV values for 7 channels"}},
		{name: "dtype", edit: func(j string) string { return strings.Replace(j, `"<i2"`, `"<f8"`, 1) },
			want: []string{"binary.json", `"<f8"`, "int16, uint16 and float32"}},
		{name: "time axis", edit: func(j string) string { return strings.Replace(j, `"time_axis": 0`, `"time_axis": 1`, 1) },
			want: []string{"binary.json", "time_axis 1"}},
		{name: "class", edit: func(j string) string {
			return strings.Replace(j, "BinaryRecordingExtractor", "ZarrRecordingExtractor", 1)
		},
			want: []string{"binary.json", "ZarrRecordingExtractor"}},
		{name: "rate", edit: func(j string) string {
			return strings.Replace(j, `"sampling_frequency": 30000.0`, `"sampling_frequency": null`, 1)
		},
			want: []string{"binary.json", "sampling_frequency missing"}},
		{name: "no binary.json", edit: same, files: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "binary.json"))
		}, want: []string{"no binary.json", "si_folder.json", "BinaryFolderRecording"}},
		{name: "broken probe", edit: same, files: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "probegroup.json"), []byte(`{"specification": "probeinterface", "probes": [{"ndim": 3}]}`), 0o644)
		}, want: []string{"probegroup.json", "ndim 3", "give -probe"}},
		{name: "dtype option", edit: same, opts: OpenOptions{DType: "uint16"}, want: []string{"SpikeInterface folder", "leave -dtype out"}},
		{name: "scale option", edit: same, opts: OpenOptions{Scale: 2}, want: []string{"binary.json", "float32", "leave -scale out"}},
		{name: "channels option", edit: same, opts: OpenOptions{Channels: 5}, want: []string{"5 channels were given", "spikeinterface files state 6"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copySIFolder(t, src, c.edit)
			if c.files != nil {
				c.files(t, dir)
			}
			rec, _, _, err := Input{OpenOptions: c.opts}.Open(dir)
			if err == nil {
				rec.Close()
				t.Fatal("opened")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
