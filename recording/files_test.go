package recording

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// writeInt16 writes data little-endian to path.
func writeInt16(t testing.TB, path string, data []int16) {
	t.Helper()
	b := make([]byte, 2*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func randInt16(rng *rand.Rand, n int) []int16 {
	d := make([]int16, n)
	for i := range d {
		d[i] = int16(rng.Uint32())
	}
	d[0], d[n-1] = math.MinInt16, math.MaxInt16
	return d
}

var fileSizeRE = regexp.MustCompile(`(?m)^fileSizeBytes=\d+`)

// writeSpikeGLX writes a real meta from testdata, with fileSizeBytes set
// to size (or to the data's size when size < 0), and data as the .bin.
func writeSpikeGLX(t testing.TB, dir, metaName string, data []int16, size int64) string {
	t.Helper()
	meta, err := os.ReadFile(filepath.Join("testdata", "spikeglx", metaName))
	if err != nil {
		t.Fatal(err)
	}
	if size < 0 {
		size = int64(2 * len(data))
	}
	meta = fileSizeRE.ReplaceAll(meta, []byte("fileSizeBytes="+strconv.FormatInt(size, 10)))
	bin := filepath.Join(dir, "run_g0_t0.imec0.ap.bin")
	if err := os.WriteFile(MetaPath(bin), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	writeInt16(t, bin, data)
	return bin
}

func TestSpikeGLXSynthetic(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1001
	data := randInt16(rng, n*385)
	bin := writeSpikeGLX(t, t.TempDir(), "Noise_g0_t0.imec0.ap.meta", data, -1)
	s, err := OpenSpikeGLX(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Format() != "spikeglx" || s.Channels() != 385 || s.Samples() != n || s.SampleRate() != 30000 || s.Name() != bin {
		t.Errorf("%s %d ch %d samples %v Hz %s", s.Format(), s.Channels(), s.Samples(), s.SampleRate(), s.Name())
	}
	uv := s.MicrovoltsPerCount()
	if uv[0] != 2.34375 || uv[384] != 0 {
		t.Errorf("µV/count %v … %v", uv[0], uv[384])
	}
	uv[0] = 7 // a copy
	if s.MicrovoltsPerCount()[0] != 2.34375 {
		t.Error("MicrovoltsPerCount returned its own slice")
	}
	var rec Recording = s
	p, ok := rec.(Prober)
	if !ok || p.Probe() == nil || p.Probe().Len() != 383 || s.ProbeError() != nil {
		t.Fatalf("probe: %v %v", ok, s.ProbeError())
	}
	checkReads(t, s, data, rng)

	// Through Open, with and without consistent options.
	r, err := Open(bin, OpenOptions{Channels: 385, Rate: 30000})
	if err != nil || r.Format() != "spikeglx" {
		t.Fatalf("Open: %v", err)
	}
	r.Close()
	if _, err := Open(bin, OpenOptions{Channels: 384}); err == nil || !strings.Contains(err.Error(), "385") {
		t.Errorf("Open with a contradicting channel count: %v", err)
	}
}

// checkReads compares random reads of rec, including reads at both ends,
// of one sample and of nothing, with data.
func checkReads(t *testing.T, rec Recording, data []int16, rng *rand.Rand) {
	t.Helper()
	c, n := rec.Channels(), int(rec.Samples())
	spans := [][2]int{{0, n}, {0, 1}, {n - 1, 1}, {n, 0}, {0, 0}}
	for range 20 {
		a := rng.IntN(n)
		spans = append(spans, [2]int{a, rng.IntN(n-a) + 1})
	}
	for _, sp := range spans {
		dst := make([]int16, sp[1]*c+3)
		for i := range dst {
			dst[i] = 12345
		}
		if err := rec.ReadInt16(dst, int64(sp[0]), sp[1]); err != nil {
			t.Fatalf("read [%d,+%d): %v", sp[0], sp[1], err)
		}
		want := data[sp[0]*c : (sp[0]+sp[1])*c]
		for i, v := range want {
			if dst[i] != v {
				t.Fatalf("read [%d,+%d): value %d = %d, want %d", sp[0], sp[1], i, dst[i], v)
			}
		}
		for _, v := range dst[len(want):] {
			if v != 12345 {
				t.Fatalf("read [%d,+%d) wrote past n·channels", sp[0], sp[1])
			}
		}
	}
	for _, sp := range [][2]int{{n, 1}, {n - 1, 2}, {-1, 1}, {1 << 40, 1}} {
		err := rec.ReadInt16(make([]int16, sp[1]*c), int64(sp[0]), sp[1])
		if err == nil || !strings.Contains(err.Error(), rec.Name()) || !strings.Contains(err.Error(), strconv.Itoa(sp[0])) {
			t.Errorf("read [%d,+%d) past the end: %v", sp[0], sp[1], err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("short dst did not panic")
		}
	}()
	rec.ReadInt16(make([]int16, c-1), 0, 1)
}

// TestDecodeMatchesDirect checks the portable decoding read path (the
// reference) against the zero-copy one on the same file, including reads
// longer than its buffer.
func TestDecodeMatchesDirect(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []int{1, 3, 385} {
		n := decodeChunk/(2*c)*2 + 17 // spans more than two buffers
		data := randInt16(rng, n*c)
		path := filepath.Join(t.TempDir(), "x.dat")
		writeInt16(t, path, data)
		for _, direct := range []bool{true, false} {
			r, err := openRaw(path, c, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if direct && !r.bin.direct {
				t.Skip("big-endian host: no direct path")
			}
			r.bin.direct = direct
			checkReads(t, r, data, rng)
			r.Close()
		}
	}
}

func TestLocustTetrode(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "locust", "locust_trial_01.raw")
	rec, err := Open(path, OpenOptions{}) // channels and rate from info.json
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if rec.Format() != "raw" || rec.Channels() != 4 || rec.SampleRate() != 15000 || rec.Samples() != 431548 {
		t.Fatalf("%s: %d channels at %v Hz, %d samples", rec.Format(), rec.Channels(), rec.SampleRate(), rec.Samples())
	}
	if uv := rec.MicrovoltsPerCount(); len(uv) != 4 || uv[0] != 0 {
		t.Errorf("µV/count %v, want 4 zeros", uv)
	}
	lo, hi := int16(math.MaxInt16), int16(math.MinInt16)
	buf := make([]int16, 4*50000)
	for s := int64(0); s < rec.Samples(); s += 50000 {
		n := int(min(50000, rec.Samples()-s))
		if err := rec.ReadInt16(buf, s, n); err != nil {
			t.Fatal(err)
		}
		for _, v := range buf[:4*n] {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if lo != 967 || hi != 2654 {
		t.Errorf("values in %d..%d, want 967..2654", lo, hi)
	}
	// Explicit options agree with info.json; contradicting ones fail.
	if r, err := Open(path, OpenOptions{Channels: 4, Rate: 15000}); err != nil {
		t.Error(err)
	} else {
		r.Close()
	}
	if _, err := Open(path, OpenOptions{Channels: 8}); err == nil || !strings.Contains(err.Error(), "info.json") {
		t.Errorf("contradicting --channels: %v", err)
	}
}

func TestMemory(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []int{1, 2, 7} {
		data := randInt16(rng, 53*c)
		rec := NewMemory("mem", data, c, 100, nil)
		if rec.Samples() != 53 || rec.Channels() != c || rec.Format() != "memory" || len(rec.MicrovoltsPerCount()) != c {
			t.Fatal("memory recording shape")
		}
		checkReads(t, rec, data, rng)
	}
	for _, f := range []func(){
		func() { NewMemory("m", make([]int16, 5), 2, 1, nil) },
		func() { NewMemory("m", make([]int16, 4), 0, 1, nil) },
		func() { NewMemory("m", make([]int16, 4), 2, 1, []float64{1}) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(r.(string), "recording: ") {
					t.Errorf("panic %v", r)
				}
			}()
			f()
		}()
	}
}

// oebinJSON is a structure.oebin in the layout of Open Ephys GUI 0.6
// (formats.md §2): a Neuropixels AP stream and an ADC stream in volts.
const oebinJSON = `{
  "GUI version": "0.6.4",
  "continuous": [
    {"folder_name": "Neuropix-PXI-100.ProbeA-AP/", "sample_rate": 30000.0,
     "source_processor_name": "Neuropix-PXI", "source_processor_id": 100,
     "stream_name": "ProbeA-AP", "recorded_processor": "Record Node", "recorded_processor_id": 101,
     "num_channels": 3,
     "channels": [
       {"channel_name": "AP1", "description": "", "identifier": "", "history": "", "bit_volts": 0.1949999928474426, "units": "uV"},
       {"channel_name": "AP2", "description": "", "identifier": "", "history": "", "bit_volts": 0.1949999928474426, "units": "uV"},
       {"channel_name": "AP3", "description": "", "identifier": "", "history": "", "bit_volts": 0.1949999928474426, "units": "uV"}]},
    {"folder_name": "NI-DAQmx-102.PXIe-6341/", "sample_rate": 5000.0, "stream_name": "PXIe-6341",
     "num_channels": 2,
     "channels": [
       {"channel_name": "AI0", "bit_volts": 0.00030517578125, "units": "V"},
       {"channel_name": "AI1", "bit_volts": 0.00030517578125, "units": "mV"}]}
  ],
  "events": [], "spikes": []
}`

// writeOpenEphys writes structure.oebin and one continuous.dat per stream
// (with the given data) under dir.
func writeOpenEphys(t testing.TB, dir, oebin string, data map[string][]int16) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "structure.oebin"), []byte(oebin), 0o644); err != nil {
		t.Fatal(err)
	}
	for folder, d := range data {
		sub := filepath.Join(dir, "continuous", folder)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		writeInt16(t, filepath.Join(sub, "continuous.dat"), d)
	}
}

func TestOpenEphys(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	ap, ni := randInt16(rng, 3*211), randInt16(rng, 2*50)
	writeOpenEphys(t, dir, oebinJSON, map[string][]int16{
		"Neuropix-PXI-100.ProbeA-AP": ap, "NI-DAQmx-102.PXIe-6341": ni,
	})
	for _, path := range []string{dir, filepath.Join(dir, "structure.oebin")} {
		rec, err := OpenOpenEphys(path)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Format() != "openephys" || rec.Channels() != 3 || rec.Samples() != 211 || rec.SampleRate() != 30000 {
			t.Errorf("%s: %d ch %d samples %v Hz", rec.Format(), rec.Channels(), rec.Samples(), rec.SampleRate())
		}
		if uv := rec.MicrovoltsPerCount(); uv[2] != 0.1949999928474426 {
			t.Errorf("µV %v", uv)
		}
		checkReads(t, rec, ap, rng)
		rec.Close()
	}
	for _, stream := range []string{"NI-DAQmx-102.PXIe-6341", "NI-DAQmx-102.PXIe-6341/", "PXIe-6341"} {
		rec, err := OpenOpenEphysStream(dir, stream)
		if err != nil {
			t.Fatal(err)
		}
		uv := rec.MicrovoltsPerCount()
		if rec.Channels() != 2 || rec.SampleRate() != 5000 || uv[0] != 0.00030517578125*1e6 || uv[1] != 0.00030517578125*1e3 {
			t.Errorf("stream %s: %d ch %v Hz µV %v", stream, rec.Channels(), rec.SampleRate(), uv)
		}
		checkReads(t, rec, ni, rng)
		if oe := rec.(*OpenEphys); oe.Stream().StreamName != "PXIe-6341" || oe.Oebin() != filepath.Join(dir, "structure.oebin") {
			t.Errorf("Stream/Oebin: %+v %s", oe.Stream(), oe.Oebin())
		}
		rec.Close()
	}
	// Open finds the oebin from the folder, the file, and a continuous.dat.
	for path, wantCh := range map[string]int{
		dir:                                   3,
		filepath.Join(dir, "structure.oebin"): 3,
		filepath.Join(dir, "continuous", "NI-DAQmx-102.PXIe-6341", "continuous.dat"): 2,
	} {
		rec, err := Open(path, OpenOptions{})
		if err != nil || rec.Format() != "openephys" || rec.Channels() != wantCh {
			t.Errorf("Open(%s): %v", path, err)
			continue
		}
		rec.Close()
	}
}

func TestOpenRawNeedsFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "data.dat")
	writeInt16(t, path, make([]int16, 12))
	for _, tc := range []struct {
		opts OpenOptions
		want string
	}{
		{OpenOptions{}, "give --channels and --rate"},
		{OpenOptions{Channels: 4}, "give --rate"},
		{OpenOptions{Rate: 1}, "give --channels"},
	} {
		_, err := Open(path, tc.opts)
		checkErr(t, err, path, tc.want)
	}
	rec, err := Open(path, OpenOptions{Channels: 4, Rate: 10})
	if err != nil || rec.Samples() != 3 || rec.Format() != "raw" {
		t.Fatalf("%v", err)
	}
	rec.Close()
}

// TestBrokenFiles opens deliberately broken inputs; every error must name
// the offending file.
func TestBrokenFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
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
	oebin := func(sub, js string, dat []byte) string {
		p := write(filepath.Join(sub, "structure.oebin"), []byte(js))
		if dat != nil {
			write(filepath.Join(sub, "continuous", "s", "continuous.dat"), dat)
		}
		return p
	}
	const oneStream = `{"continuous":[{"folder_name":"s/","sample_rate":1000,"num_channels":2,"channels":[{"bit_volts":1,"units":"uV"},{"bit_volts":1,"units":"uV"}]}]}`

	sglxDir := filepath.Join(dir, "sglx")
	os.MkdirAll(sglxDir, 0o755)
	metaContradicts := writeSpikeGLX(t, sglxDir, "Noise_g0_t0.imec0.ap.meta", make([]int16, 385*10), 385*2*11)
	notWholeDir := filepath.Join(dir, "sglx2")
	os.MkdirAll(notWholeDir, 0o755)
	notWhole := writeSpikeGLX(t, notWholeDir, "Noise_g0_t0.imec0.ap.meta", make([]int16, 385*10+1), -1)
	noMeta := write("lonely.ap.bin", make([]byte, 770))
	badMeta := write("bad.ap.bin", make([]byte, 770))
	write("bad.ap.meta", []byte("nSavedChans=385\nimSampRate=zero\n"))

	cases := []struct {
		name string
		open func() (Recording, error)
		file string // must appear in the error
	}{
		{"raw odd byte count (truncated)", func() (Recording, error) { return OpenRaw(write("odd.bin", make([]byte, 4*2*10+1)), 4, 1) }, "odd.bin"},
		{"raw not whole time points", func() (Recording, error) { return OpenRaw(write("part.dat", make([]byte, 4*2*10+2)), 4, 1) }, "part.dat"},
		{"raw zero channels", func() (Recording, error) { return OpenRaw(write("z.raw", nil), 0, 1) }, "z.raw"},
		{"raw zero rate", func() (Recording, error) { return OpenRaw(write("r.raw", nil), 1, 0) }, "r.raw"},
		{"raw missing", func() (Recording, error) { return OpenRaw(filepath.Join(dir, "gone.bin"), 1, 1) }, "gone.bin"},
		{"spikeglx meta contradicts size", func() (Recording, error) { return OpenSpikeGLX(metaContradicts) }, "run_g0_t0.imec0.ap.meta"},
		{"spikeglx size numbers", func() (Recording, error) { return OpenSpikeGLX(metaContradicts) }, "7700 bytes"},
		{"spikeglx not whole", func() (Recording, error) { return OpenSpikeGLX(notWhole) }, notWhole},
		{"spikeglx missing meta", func() (Recording, error) { return OpenSpikeGLX(noMeta) }, "lonely.ap.meta"},
		{"spikeglx bad meta", func() (Recording, error) { return OpenSpikeGLX(badMeta) }, "bad.ap.meta"},
		{"spikeglx not .bin", func() (Recording, error) { return OpenSpikeGLX(write("x.dat", nil)) }, "x.dat"},
		{"open missing meta", func() (Recording, error) { return Open(noMeta, OpenOptions{}) }, "lonely.ap.bin"},
		{"open meta given", func() (Recording, error) { return Open(MetaPath(badMeta), OpenOptions{}) }, "bad.ap.meta"},
		{"open unknown ext", func() (Recording, error) { return Open(write("x.txt", nil), OpenOptions{}) }, "x.txt"},
		{"open empty folder", func() (Recording, error) {
			os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
			return Open(filepath.Join(dir, "empty"), OpenOptions{})
		}, "empty"},
		{"open SpikeGLX folder, meta contradicts size", func() (Recording, error) {
			return Open(sglxDir, OpenOptions{StrictSize: true})
		}, "run_g0_t0.imec0.ap.meta"},
		{"bad info.json", func() (Recording, error) {
			write("inf/info.json", []byte(`{"sample_rate": 1, "shape": [-1, 2], "dtype": "float32"}`))
			return Open(write("inf/d.raw", make([]byte, 8)), OpenOptions{})
		}, "info.json"},
		{"bad oebin JSON", func() (Recording, error) { return OpenOpenEphys(oebin("o1", `{"continuous": [`, nil)) }, filepath.Join("o1", "structure.oebin")},
		{"oebin no streams", func() (Recording, error) { return OpenOpenEphys(oebin("o2", `{"continuous": []}`, nil)) }, filepath.Join("o2", "structure.oebin")},
		{"oebin channel count", func() (Recording, error) {
			return OpenOpenEphys(oebin("o3", strings.Replace(oneStream, `"num_channels":2`, `"num_channels":3`, 1), nil))
		}, filepath.Join("o3", "structure.oebin")},
		{"oebin escaping folder", func() (Recording, error) {
			return OpenOpenEphys(oebin("o4", strings.Replace(oneStream, `"s/"`, `"../../x"`, 1), nil))
		}, filepath.Join("o4", "structure.oebin")},
		{"missing continuous.dat", func() (Recording, error) { return OpenOpenEphys(oebin("o5", oneStream, nil)) }, "continuous.dat"},
		{"continuous.dat not whole", func() (Recording, error) { return OpenOpenEphys(oebin("o6", oneStream, make([]byte, 6))) }, filepath.Join("o6", "continuous", "s", "continuous.dat")},
		{"no such stream", func() (Recording, error) { return OpenOpenEphysStream(oebin("o7", oneStream, make([]byte, 8)), "t") }, filepath.Join("o7", "structure.oebin")},
		{"missing oebin", func() (Recording, error) { return OpenOpenEphys(filepath.Join(dir, "o8", "structure.oebin")) }, filepath.Join("o8", "structure.oebin")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := tc.open()
			if err == nil {
				rec.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.file) {
				t.Errorf("error %q does not name %s", err, tc.file)
			}
			t.Log(err)
		})
	}
}

// TestTruncatedAfterOpen reads a file that shrank after it was opened.
func TestTruncatedAfterOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shrink.bin")
	writeInt16(t, path, make([]int16, 2*100))
	rec, err := OpenRaw(path, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := os.Truncate(path, 2*2*50); err != nil {
		t.Fatal(err)
	}
	err = rec.ReadInt16(make([]int16, 2*10), 45, 10)
	if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "[45, 55)") {
		t.Errorf("error %v", err)
	}
}

func FuzzOebin(f *testing.F) {
	f.Add([]byte(oebinJSON))
	f.Add([]byte(`{"continuous":[{"folder_name":"a","sample_rate":1,"num_channels":1,"channels":[{"bit_volts":1e308,"units":"V"}]}]}`))
	f.Add([]byte(`{"continuous":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseOebin(strings.NewReader(string(data)), "fuzz.oebin")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.oebin") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, s := range o.Continuous {
			f := s.Folder()
			if len(s.MicrovoltsPerCount()) != s.NumChannels || s.NumChannels <= 0 || !(s.SampleRate > 0) ||
				!filepath.IsLocal(filepath.Join("continuous", f)) || strings.HasPrefix(filepath.Clean(f), "..") {
				t.Fatalf("accepted a bad stream %+v", s)
			}
		}
		if _, err := json.Marshal(o); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzRawInfo feeds arbitrary bytes to the info.json reader: it must
// return a usable channel count and rate or an error naming the file.
func FuzzRawInfo(f *testing.F) {
	f.Add([]byte(`{"sample_rate": 15000.0, "shape": [-1, 4], "dtype": "int16"}`))
	f.Add([]byte(`{"sample_rate": 1e400, "shape": [-1, 4], "dtype": "int16"}`))
	f.Add([]byte(`{"sample_rate": null, "shape": [null, null], "dtype": "int16"}`))
	f.Add([]byte(`{"shape": [1, 1, 1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "info.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		o, err := readRawInfo(path)
		c, rate := o.Channels, o.Rate
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if c <= 0 || c > 1<<20 || !(rate > 0) || math.IsInf(rate, 0) {
			t.Fatalf("accepted %d channels at %g Hz", c, rate)
		}
	})
}
