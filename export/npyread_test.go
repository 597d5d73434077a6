package export

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// npyFile builds a .npy file with the given header dict fields and payload.
func npyFile(descr string, fortran bool, shape string, payload []byte) []byte {
	f := "False"
	if fortran {
		f = "True"
	}
	h := "{'descr': '" + descr + "', 'fortran_order': " + f + ", 'shape': " + shape + ", }"
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	var b bytes.Buffer
	b.WriteString(npyMagic + "\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	b.Write(payload)
	return b.Bytes()
}

// TestReadNPY reads float, integer and bool arrays in both byte orders and
// both layouts, written by WriteNPY and by hand, against the values.
func TestReadNPY(t *testing.T) {
	// WriteNPY's own float32 and int64 files.
	for _, c := range []struct {
		write func(*bytes.Buffer) error
		f64   []float64
	}{
		{func(b *bytes.Buffer) error { return WriteNPY(b, []int{2, 3}, []float32{1, 2, 3, 4, 5, -6.5}) }, []float64{1, 2, 3, 4, 5, -6.5}},
		{func(b *bytes.Buffer) error { return WriteNPY(b, []int{4}, []int64{-1, 0, 1 << 40, 7}) }, []float64{-1, 0, 1 << 40, 7}},
	} {
		var b bytes.Buffer
		if err := c.write(&b); err != nil {
			t.Fatal(err)
		}
		a, err := ReadNPY(&b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.Float64()
		if err != nil || !slices.Equal(got, c.f64) {
			t.Errorf("%s %s: Float64 = %v, %v; want %v", a.Descr, a.ShapeString(), got, err, c.f64)
		}
	}
	// A big-endian Fortran-order float64 2×3 array [[1 2 3] [4 5 6]].
	var p bytes.Buffer
	for _, v := range []float64{1, 4, 2, 5, 3, 6} {
		binary.Write(&p, binary.BigEndian, v)
	}
	a, err := ReadNPY(bytes.NewReader(npyFile(">f8", true, "(2, 3)", p.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Float32(); !slices.Equal(got, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("Fortran >f8: %v", got)
	}
	if _, err := a.Int64(); err == nil {
		t.Error("Int64 of a float array: no error")
	}
	// int16, uint8, bool and float16.
	for _, c := range []struct {
		descr   string
		payload []byte
		want    []int64
		f       []float64
	}{
		{"<i2", []byte{0xff, 0xff, 0x00, 0x80}, []int64{-1, -32768}, nil},
		{"|u1", []byte{255, 3}, []int64{255, 3}, nil},
		{"|b1", []byte{1, 0}, []int64{1, 0}, nil},
		{"<f2", []byte{0x00, 0x3c, 0x00, 0xc0}, nil, []float64{1, -2}},
	} {
		a, err := ReadNPY(bytes.NewReader(npyFile(c.descr, false, "(2,)", c.payload)))
		if err != nil {
			t.Fatalf("%s: %v", c.descr, err)
		}
		if c.want != nil {
			if got, err := a.Int64(); err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%s: Int64 = %v, %v; want %v", c.descr, got, err, c.want)
			}
		} else if got, _ := a.Float64(); !slices.Equal(got, c.f) {
			t.Errorf("%s: Float64 = %v, want %v", c.descr, got, c.f)
		}
	}
	if h := halfToFloat64(0x7c00); !math.IsInf(h, 1) {
		t.Errorf("half +Inf = %v", h)
	}
}

// brokenNPY are broken .npy files and a part of the error each must give:
// truncated payloads, lying shapes, unsupported dtypes, a wrong magic and
// a truncated preamble.
var brokenNPY = []struct {
	file []byte
	want string
}{
	{npyFile("<f4", false, "(3,)", make([]byte, 11)), "truncated: 11 bytes of data for a (3,) <f4 array of 12 bytes"},
	{npyFile("<f4", false, "(1000000000,)", nil), "truncated: 0 bytes"},
	{npyFile("<f4", false, "(1000000000000,)", nil), "too large"},
	{npyFile("<c8", false, "(1,)", make([]byte, 8)), "unsupported dtype"},
	{npyFile("|i4", false, "(1,)", make([]byte, 4)), "unsupported dtype"},
	{[]byte("\x93NUMPZ\x01\x00\x00\x00"), "not a .npy file"},
	{[]byte("\x93NUM"), "reading preamble"},
}

// TestReadNPYBroken checks the errors of brokenNPY.
func TestReadNPYBroken(t *testing.T) {
	for _, c := range brokenNPY {
		if _, err := ReadNPY(bytes.NewReader(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}

// TestReadNPYFile checks that ReadNPYFile reads what ReadNPY reads, with
// bytes after the payload left alone, and that its errors (those of
// brokenNPY, and a missing file) name the file.
func TestReadNPYFile(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 100003} {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		var b bytes.Buffer
		if err := WriteNPY(&b, []int{n}, v); err != nil {
			t.Fatal(err)
		}
		b.WriteString("trailing bytes")
		path := filepath.Join(dir, fmt.Sprintf("a%d.npy", n))
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := ReadNPY(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadNPYFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Descr != want.Descr || got.Fortran != want.Fortran || !slices.Equal(got.Shape, want.Shape) ||
			!bytes.Equal(got.Data, want.Data) || len(got.Data) != 8*n {
			t.Errorf("n=%d: ReadNPYFile %s %v, %d bytes; ReadNPY %s %v, %d bytes", n, got.Descr, got.Shape, len(got.Data),
				want.Descr, want.Shape, len(want.Data))
		}
	}
	for i, c := range brokenNPY {
		path := filepath.Join(dir, fmt.Sprintf("bad%d.npy", i))
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadNPYFile(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the file and containing %q", path, err, c.want)
		}
	}
	if _, err := ReadNPYFile(filepath.Join(dir, "missing.npy")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error %v, want fs.ErrNotExist", err)
	}
}

// TestNPYDirectDecode checks the direct paths of Float32 (float32 data)
// and Int64 (int64 data) against the element-by-element conversion, in
// both byte orders and both layouts, on random values with NaN and ±Inf.
func TestNPYDirectDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, o := range []struct {
		c  byte
		bo binary.ByteOrder
	}{{'<', binary.LittleEndian}, {'>', binary.BigEndian}} {
		for _, sh := range []struct {
			shape   string
			dims    []int
			fortran bool
		}{{"(7,)", []int{7}, false}, {"(3, 5)", []int{3, 5}, false}, {"(3, 5)", []int{3, 5}, true}, {"(0,)", []int{0}, false}} {
			n := 1
			for _, d := range sh.dims {
				n *= d
			}
			f := make([]byte, 4*n)
			g := make([]byte, 8*n)
			for i := range n {
				v := float32(rng.NormFloat64())
				switch i % 5 {
				case 3:
					v = float32(math.NaN())
				case 4:
					v = float32(math.Inf(1 - 2*(i%2)))
				}
				o.bo.PutUint32(f[4*i:], math.Float32bits(v))
				o.bo.PutUint64(g[8*i:], uint64(rng.Int64()-rng.Int64()))
			}
			fa, err := ReadNPY(bytes.NewReader(npyFile(string(o.c)+"f4", sh.fortran, sh.shape, f)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := fa.Float32()
			if err != nil {
				t.Fatal(err)
			}
			ia, err := ReadNPY(bytes.NewReader(npyFile(string(o.c)+"i8", sh.fortran, sh.shape, g)))
			if err != nil {
				t.Fatal(err)
			}
			gotI, err := ia.Int64()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != n || len(gotI) != n {
				t.Fatalf("%c %s: %d and %d elements, want %d", o.c, sh.shape, len(got), len(gotI), n)
			}
			for e := range n {
				p := fa.index(e)
				want := math.Float32frombits(o.bo.Uint32(f[4*p:]))
				if math.Float32bits(got[e]) != math.Float32bits(want) && !(want != want && got[e] != got[e]) {
					t.Errorf("%c %s fortran %v: Float32[%d] = %v, want %v", o.c, sh.shape, sh.fortran, e, got[e], want)
				}
				if wantI := int64(o.bo.Uint64(g[8*ia.index(e):])); gotI[e] != wantI {
					t.Errorf("%c %s fortran %v: Int64[%d] = %d, want %d", o.c, sh.shape, sh.fortran, e, gotI[e], wantI)
				}
			}
		}
	}
}
