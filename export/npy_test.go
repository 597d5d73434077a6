package export

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio"
)

// TestWriteNPYKnownHeader pins the bytes numpy's np.save writes for
// np.arange(3) (int64): a 118-byte header ('v' = 0x76) padded to 128 bytes.
func TestWriteNPYKnownHeader(t *testing.T) {
	var b bytes.Buffer
	if err := WriteNPY(&b, []int{3}, []int64{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	dict := "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }"
	want := "\x93NUMPY\x01\x00v\x00" + dict + strings.Repeat(" ", 128-10-len(dict)-1) + "\n"
	got := b.Bytes()
	if string(got[:128]) != want {
		t.Fatalf("header\n got %q\nwant %q", got[:128], want)
	}
	if len(got) != 128+24 {
		t.Fatalf("file is %d bytes; want 152", len(got))
	}
	for i := range int64(3) {
		if v := int64(binary.LittleEndian.Uint64(got[128+8*i:])); v != i {
			t.Errorf("element %d = %d", i, v)
		}
	}
}

// randSlice returns a seeded random slice of the element type of proto.
func randSlice(rng *rand.Rand, proto any, n int) any {
	switch proto.(type) {
	case []bool:
		s := make([]bool, n)
		for i := range s {
			s[i] = rng.IntN(2) == 1
		}
		return s
	case []int8:
		s := make([]int8, n)
		for i := range s {
			s[i] = int8(rng.Uint32())
		}
		return s
	case []uint8:
		s := make([]uint8, n)
		for i := range s {
			s[i] = uint8(rng.Uint32())
		}
		return s
	case []int16:
		s := make([]int16, n)
		for i := range s {
			s[i] = int16(rng.Uint32())
		}
		if n > 1 {
			s[0], s[1] = math.MinInt16, math.MaxInt16
		}
		return s
	case []uint16:
		s := make([]uint16, n)
		for i := range s {
			s[i] = uint16(rng.Uint32())
		}
		return s
	case []int32:
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(rng.Uint32())
		}
		return s
	case []uint32:
		s := make([]uint32, n)
		for i := range s {
			s[i] = rng.Uint32()
		}
		return s
	case []int64:
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(rng.Uint64())
		}
		return s
	case []uint64:
		s := make([]uint64, n)
		for i := range s {
			s[i] = rng.Uint64()
		}
		return s
	case []float32:
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(rng.NormFloat64() * 100)
		}
		if n > 2 {
			s[0], s[1], s[2] = float32(math.Inf(-1)), math.MaxFloat32, math.SmallestNonzeroFloat32
		}
		return s
	case []float64:
		s := make([]float64, n)
		for i := range s {
			s[i] = rng.NormFloat64() * 1e6
		}
		if n > 1 {
			s[0], s[1] = math.Inf(1), -0.0
		}
		return s
	}
	panic("unreachable")
}

var npyTypes = []struct {
	descr string
	proto any
}{
	{"|b1", []bool(nil)},
	{"|i1", []int8(nil)},
	{"|u1", []uint8(nil)},
	{"<i2", []int16(nil)},
	{"<u2", []uint16(nil)},
	{"<i4", []int32(nil)},
	{"<u4", []uint32(nil)},
	{"<i8", []int64(nil)},
	{"<u8", []uint64(nil)},
	{"<f4", []float32(nil)},
	{"<f8", []float64(nil)},
}

var npyShapes = [][]int{
	{0}, {1}, {7}, {1000}, {0, 10}, {10, 0}, {1, 1}, {3, 5}, {64, 3}, {2, 3, 4}, {1, 7, 1}, {0, 2, 3}, {}, {2, 1, 3, 2},
}

// TestWriteNPYReadBack writes every dtype in every shape, reads the file
// back with npyio and with ReadNPYHeader, and checks the header alignment,
// the version bytes and the data.
func TestWriteNPYReadBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ty := range npyTypes {
		for _, shape := range npyShapes {
			n := 1
			for _, d := range shape {
				n *= d
			}
			data := randSlice(rng, ty.proto, n)
			var b bytes.Buffer
			if err := WriteNPY(&b, shape, data); err != nil {
				t.Fatal(err)
			}
			raw := b.Bytes()
			name := ty.descr + shapeString(shape)
			if raw[6] != 1 || raw[7] != 0 {
				t.Errorf("%s: version %d.%d", name, raw[6], raw[7])
			}
			hlen := int(binary.LittleEndian.Uint16(raw[8:]))
			if (10+hlen)%64 != 0 || raw[10+hlen-1] != '\n' {
				t.Errorf("%s: header length %d not 64-aligned or not newline-terminated", name, hlen)
			}
			size := int(reflect.TypeOf(ty.proto).Elem().Size())
			if len(raw) != 10+hlen+n*size {
				t.Errorf("%s: %d bytes; want %d", name, len(raw), 10+hlen+n*size)
			}

			// Our own header reader.
			r := bytes.NewReader(raw)
			descr, fortran, gotShape, err := ReadNPYHeader(r)
			if err != nil {
				t.Fatalf("%s: ReadNPYHeader: %v", name, err)
			}
			if descr != ty.descr || fortran || !reflect.DeepEqual(gotShape, append([]int{}, shape...)) {
				t.Errorf("%s: ReadNPYHeader = %q %v %v", name, descr, fortran, gotShape)
			}
			if r.Len() != n*size {
				t.Errorf("%s: ReadNPYHeader left %d bytes; want %d", name, r.Len(), n*size)
			}

			// npyio, independent reader.
			nr, err := npyio.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s: npyio: %v", name, err)
			}
			if len(nr.Header.Descr.Shape) != len(shape) || (len(shape) > 0 && !reflect.DeepEqual(nr.Header.Descr.Shape, shape)) {
				t.Errorf("%s: npyio shape %v", name, nr.Header.Descr.Shape)
			}
			if nr.Header.Descr.Fortran {
				t.Errorf("%s: npyio says Fortran order", name)
			}
			if len(shape) == 0 {
				continue // npyio reads scalars into scalars; the data check above suffices
			}
			got := reflect.New(reflect.TypeOf(ty.proto))
			if err := nr.Read(got.Interface()); err != nil {
				t.Fatalf("%s: npyio read: %v", name, err)
			}
			g := got.Elem()
			if g.Len() != n {
				t.Fatalf("%s: npyio read %d elements; want %d", name, g.Len(), n)
			}
			w := reflect.ValueOf(data)
			for i := range n {
				a, b := g.Index(i).Interface(), w.Index(i).Interface()
				if a != b {
					t.Fatalf("%s: element %d = %v; want %v", name, i, a, b)
				}
			}
		}
	}
}

// TestWriteNPYFloatBits checks that NaN payloads and -0 survive bit for bit.
func TestWriteNPYFloatBits(t *testing.T) {
	in := []float64{math.NaN(), math.Float64frombits(0x7ff8000000000123), math.Copysign(0, -1), 1}
	var b bytes.Buffer
	if err := WriteNPY(&b, []int{2, 2}, in); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()[b.Len()-32:]
	for i, v := range in {
		if got := binary.LittleEndian.Uint64(raw[8*i:]); got != math.Float64bits(v) {
			t.Errorf("element %d bits %x; want %x", i, got, math.Float64bits(v))
		}
	}
}

func TestWriteNPYFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "spike_times.npy")
	want := []int64{5, 7, 1 << 40}
	if err := WriteNPYFile(path, []int{3}, want); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []int64
	if err := npyio.Read(f, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %v; want %v", got, want)
	}
	err = WriteNPYFile(filepath.Join(dir, "missing", "x.npy"), []int{1}, []int64{1})
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("write into a missing folder: err = %v", err)
	}
}

// errWriter fails after limit bytes.
type errWriter struct{ n, limit int }

func (w *errWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		return 0, os.ErrClosed
	}
	w.n += len(p)
	return len(p), nil
}

// countWriter counts Write calls.
type countWriter struct{ calls, bytes int }

func (w *countWriter) Write(p []byte) (int, error) {
	w.calls++
	w.bytes += len(p)
	return len(p), nil
}

func TestWriteNPYWrites(t *testing.T) {
	// One write for the header, one for the data.
	var c countWriter
	if err := WriteNPY(&c, []int{1000, 3}, make([]float32, 3000)); err != nil {
		t.Fatal(err)
	}
	if c.calls != 2 {
		t.Errorf("%d writes; want 2", c.calls)
	}
	for _, limit := range []int{0, 64, 100} {
		if err := WriteNPY(&errWriter{limit: limit}, []int{100}, make([]int16, 100)); err == nil {
			t.Errorf("write failing after %d bytes: no error", limit)
		}
	}
}

func TestWriteNPYPanics(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape []int
		data  any
	}{
		{"mismatch", []int{3}, []int64{1, 2}},
		{"mismatch2d", []int{2, 2}, []int64{1, 2, 3}},
		{"negative", []int{-1, -2}, []int64{1, 2}},
		{"overflow", []int{math.MaxInt / 2, 4}, []int64{}},
		{"type", []int{2}, []int{1, 2}},
		{"nil", []int{0}, nil},
		{"complex", []int{1}, []complex64{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("no panic")
				}
				if s, ok := r.(string); !ok || !strings.HasPrefix(s, "export: ") {
					t.Errorf("panic %v lacks the package prefix", r)
				}
			}()
			WriteNPY(&bytes.Buffer{}, c.shape, c.data)
		})
	}
}

// peakDescr is SpikeInterface's peak dtype.
const peakDescr = "[('sample_index', '<i8'), ('channel_index', '<i8'), ('amplitude', '<f8'), ('segment_index', '<i8')]"

// TestWriteNPYRecords writes SpikeInterface's peak dtype and a mixed-size
// record, parses the header and checks every record byte by byte against
// an independent encoding with encoding/binary.
func TestWriteNPYRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// Sizes around the interleaving chunk (recordBuf/32 = 32768 peaks).
	for _, n := range []int{0, 1, 5, 32767, 32768, 32769, 70001} {
		si := randSlice(rng, []int64(nil), n).([]int64)
		ci := randSlice(rng, []int64(nil), n).([]int64)
		amp := randSlice(rng, []float64(nil), n).([]float64)
		seg := make([]int64, n)
		var b bytes.Buffer
		err := WriteNPYRecords(&b,
			Column{"sample_index", si}, Column{"channel_index", ci},
			Column{"amplitude", amp}, Column{"segment_index", seg})
		if err != nil {
			t.Fatal(err)
		}
		r := bytes.NewReader(b.Bytes())
		descr, fortran, shape, err := ReadNPYHeader(r)
		if err != nil {
			t.Fatal(err)
		}
		if descr != peakDescr || fortran || !reflect.DeepEqual(shape, []int{n}) {
			t.Fatalf("n=%d: header %q %v %v", n, descr, fortran, shape)
		}
		if (b.Len()-r.Len())%64 != 0 {
			t.Errorf("n=%d: data start %d not 64-aligned", n, b.Len()-r.Len())
		}
		var want bytes.Buffer
		for i := range n {
			binary.Write(&want, binary.LittleEndian, si[i])
			binary.Write(&want, binary.LittleEndian, ci[i])
			binary.Write(&want, binary.LittleEndian, amp[i])
			binary.Write(&want, binary.LittleEndian, seg[i])
		}
		rest := b.Bytes()[b.Len()-r.Len():]
		if !bytes.Equal(rest, want.Bytes()) {
			t.Fatalf("n=%d: record bytes differ", n)
		}
	}

	// Mixed sizes: 1 + 4 + 2 + 8 = 15 bytes, no padding.
	n := 9
	flags := randSlice(rng, []bool(nil), n).([]bool)
	f32 := randSlice(rng, []float32(nil), n).([]float32)
	i16 := randSlice(rng, []int16(nil), n).([]int16)
	u64 := randSlice(rng, []uint64(nil), n).([]uint64)
	var b bytes.Buffer
	if err := WriteNPYRecords(&b, Column{"ok", flags}, Column{"x", f32}, Column{"ch", i16}, Column{"id", u64}); err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(b.Bytes())
	descr, _, _, err := ReadNPYHeader(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[('ok', '|b1'), ('x', '<f4'), ('ch', '<i2'), ('id', '<u8')]"; descr != want {
		t.Errorf("descr %q; want %q", descr, want)
	}
	var want bytes.Buffer
	for i := range n {
		binary.Write(&want, binary.LittleEndian, flags[i])
		binary.Write(&want, binary.LittleEndian, f32[i])
		binary.Write(&want, binary.LittleEndian, i16[i])
		binary.Write(&want, binary.LittleEndian, u64[i])
	}
	if rest := b.Bytes()[b.Len()-r.Len():]; !bytes.Equal(rest, want.Bytes()) {
		t.Error("mixed record bytes differ")
	}
}

func TestWriteNPYRecordsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peaks.npy")
	if err := WriteNPYRecordsFile(path, Column{"a", []int32{1, 2}}, Column{"b", []float32{3, 4}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	descr, _, shape, err := ReadNPYHeader(f)
	if err != nil || descr != "[('a', '<i4'), ('b', '<f4')]" || !reflect.DeepEqual(shape, []int{2}) {
		t.Errorf("header %q %v %v", descr, shape, err)
	}
}

func TestWriteNPYRecordsPanics(t *testing.T) {
	for name, cols := range map[string][]Column{
		"none":     nil,
		"length":   {{"a", []int64{1}}, {"b", []int64{1, 2}}},
		"empty":    {{"", []int64{1}}},
		"quote":    {{"a'b", []int64{1}}},
		"control":  {{"a\nb", []int64{1}}},
		"repeated": {{"a", []int64{1}}, {"a", []int64{1}}},
		"type":     {{"a", []string{"x"}}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Fatal("no panic")
				}
			}()
			WriteNPYRecords(&bytes.Buffer{}, cols...)
		})
	}
}

// BenchmarkWriteNPYFile writes 20 M int64 (160 MB) to a file, the size of
// a long recording's spike_times.npy.
func BenchmarkWriteNPYFile(b *testing.B) {
	const n = 20_000_000
	data := make([]int64, n)
	for i := range data {
		data[i] = int64(i) * 3
	}
	path := filepath.Join(b.TempDir(), "x.npy")
	b.SetBytes(n * 8)
	b.ResetTimer()
	for b.Loop() {
		if err := WriteNPYFile(path, []int{n}, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteNPYMemory writes 20 M int64 into a preallocated buffer: the
// cost of the writer itself, without the file system.
func BenchmarkWriteNPYMemory(b *testing.B) {
	const n = 20_000_000
	data := make([]int64, n)
	var buf bytes.Buffer
	buf.Grow(n*8 + 128)
	b.SetBytes(n * 8)
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		if err := WriteNPY(&buf, []int{n}, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteNPYRecords writes 2 M SpikeInterface peaks (64 MB).
func BenchmarkWriteNPYRecords(b *testing.B) {
	const n = 2_000_000
	si, ci, seg := make([]int64, n), make([]int64, n), make([]int64, n)
	amp := make([]float64, n)
	b.SetBytes(n * 32)
	for b.Loop() {
		if err := WriteNPYRecords(io.Discard, Column{"sample_index", si}, Column{"channel_index", ci},
			Column{"amplitude", amp}, Column{"segment_index", seg}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteFileBaseline writes the same 160 MB as raw bytes with
// os.WriteFile: the file-system floor that BenchmarkWriteNPYFile is
// measured against.
func BenchmarkWriteFileBaseline(b *testing.B) {
	const n = 20_000_000
	data := make([]byte, n*8)
	for i := range data {
		data[i] = byte(i)
	}
	path := filepath.Join(b.TempDir(), "x.raw")
	b.SetBytes(n * 8)
	b.ResetTimer()
	for b.Loop() {
		if err := os.WriteFile(path, data, 0o666); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNpyioWrite2M is the comparison with npyio.Write (one element at
// a time) on 2 M int64 through a 1 MiB bufio.Writer into io.Discard.
func BenchmarkNpyioWrite2M(b *testing.B) {
	const n = 2_000_000
	data := make([]int64, n)
	b.SetBytes(n * 8)
	for b.Loop() {
		w := bufio.NewWriterSize(io.Discard, 1<<20)
		if err := npyio.Write(w, data); err != nil {
			b.Fatal(err)
		}
		w.Flush()
	}
}
