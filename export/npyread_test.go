package export

import (
	"bytes"
	"encoding/binary"
	"math"
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

// TestReadNPYBroken checks the errors of truncated payloads and
// unsupported dtypes.
func TestReadNPYBroken(t *testing.T) {
	for _, c := range []struct {
		file []byte
		want string
	}{
		{npyFile("<f4", false, "(3,)", make([]byte, 11)), "truncated: 11 bytes of data for a (3,) <f4 array of 12 bytes"},
		{npyFile("<f4", false, "(1000000000,)", nil), "truncated: 0 bytes"},
		{npyFile("<f4", false, "(1000000000000,)", nil), "too large"},
		{npyFile("<c8", false, "(1,)", make([]byte, 8)), "unsupported dtype"},
		{npyFile("|i4", false, "(1,)", make([]byte, 4)), "unsupported dtype"},
		{[]byte("\x93NUMPZ\x01\x00\x00\x00"), "not a .npy file"},
	} {
		if _, err := ReadNPY(bytes.NewReader(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}
