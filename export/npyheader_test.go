package export

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// rawNPY builds a .npy preamble of the given version around dict, without
// padding or alignment, as other writers may produce.
func rawNPY(major byte, dict string) []byte {
	b := []byte(npyMagic)
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
	}
	return append(b, dict...)
}

func TestReadNPYHeaderVariants(t *testing.T) {
	for _, c := range []struct {
		name    string
		file    []byte
		descr   string
		fortran bool
		shape   []int
	}{
		{"v1", rawNPY(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 61), }\n"), "<f4", false, []int{6, 61}},
		{"fortran", rawNPY(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (6, 61), }  \n"), "<f4", true, []int{6, 61}},
		{"v2", rawNPY(2, "{'descr': '>i2', 'fortran_order': False, 'shape': (4,), }\n"), ">i2", false, []int{4}},
		{"v3", rawNPY(3, "{'descr': '<U3', 'fortran_order': False, 'shape': (), }\n"), "<U3", false, []int{}},
		{"key order, double quotes", rawNPY(1, `{"shape": (2,3), "fortran_order": False, "descr": "|u1"}`), "|u1", false, []int{2, 3}},
		{"python2 long", rawNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3L, 4L), }\n"), "<i8", false, []int{3, 4}},
		{"no trailing comma", rawNPY(1, "{'descr':'<i8','fortran_order':False,'shape':(0,)}"), "<i8", false, []int{0}},
		{"growth padding", rawNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }                     \n"), "<i8", false, []int{5}},
		{"structured", rawNPY(1, `{'descr': [('sample_index', '<i8'), ("amp", '<f8', (3,)), ('n', '<i4', 2)], 'fortran_order': False, 'shape': (9,), }`),
			"[('sample_index', '<i8'), ('amp', '<f8', (3,)), ('n', '<i4', 2)]", false, []int{9}},
		{"escapes", rawNPY(1, `{'descr': [('a\'b\\c', '<i8')], 'fortran_order': False, 'shape': (1,)}`), `[('a\'b\\c', '<i8')]`, false, []int{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := []byte("DATA")
			r := bytes.NewReader(append(c.file, data...))
			descr, fortran, shape, err := ReadNPYHeader(r)
			if err != nil {
				t.Fatal(err)
			}
			if descr != c.descr || fortran != c.fortran || !reflect.DeepEqual(shape, c.shape) {
				t.Errorf("got %q %v %v; want %q %v %v", descr, fortran, shape, c.descr, c.fortran, c.shape)
			}
			if r.Len() != len(data) {
				t.Errorf("left %d bytes; want %d", r.Len(), len(data))
			}
		})
	}
}

// TestReadNPYHeaderBroken is the table of broken headers with the error
// each must produce.
func TestReadNPYHeaderBroken(t *testing.T) {
	good := "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }"
	deep := "{'descr': " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + ", 'fortran_order': False, 'shape': (3,)}"
	huge := append([]byte(npyMagic), 2, 0, 0xff, 0xff, 0xff, 0x7f)
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "preamble"},
		{"short magic", []byte("\x93NUM"), "preamble"},
		{"bad magic", append([]byte("\x93NUMPZ"), 1, 0, 0, 0), "not a .npy"},
		{"no length", []byte(npyMagic + "\x01\x00\x05"), "header length"},
		{"version 4", rawNPY(4, good), "version 4.0"},
		{"version 1.1", append([]byte(npyMagic), 1, 1, 0, 0), "version 1.1"},
		{"truncated", rawNPY(1, good)[:30], "57-byte header"},
		{"huge v2", huge, "exceeds"},
		{"not dict", rawNPY(1, "('<i8', False, (3,))"), "not a dict"},
		{"missing key", rawNPY(1, "{'descr': '<i8', 'shape': (3,)}"), "want descr"},
		{"extra key", rawNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), 'x': 1}"), "want descr"},
		{"repeated key", rawNPY(1, "{'descr': '<i8', 'descr': '<i8', 'shape': (3,)}"), "repeated"},
		{"unknown key", rawNPY(1, "{'descr': '<i8', 'fortran': False, 'shape': (3,)}"), "unexpected header key"},
		{"negative dim", rawNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (-3,)}"), "non-negative"},
		{"float dim", rawNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3.5,)}"), "offset"},
		{"overflow", rawNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"), "overflows"},
		{"big int", rawNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (99999999999999999999,)}"), "out of range"},
		{"shape list", rawNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': [3]}"), "not a tuple"},
		{"shape scalar", rawNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3)}"), "not a tuple"},
		{"order string", rawNPY(1, "{'descr': '<i8', 'fortran_order': 'False', 'shape': (3,)}"), "not True or False"},
		{"descr int", rawNPY(1, "{'descr': 8, 'fortran_order': False, 'shape': (3,)}"), "not a string or a list"},
		{"descr bracket", rawNPY(1, "{'descr': '[00', 'fortran_order': False, 'shape': (3,)}"), "not a type string"},
		{"descr space", rawNPY(1, "{'descr': '<i 8', 'fortran_order': False, 'shape': (3,)}"), "not a type string"},
		{"descr empty", rawNPY(1, "{'descr': '', 'fortran_order': False, 'shape': (3,)}"), "empty descr"},
		{"field", rawNPY(1, "{'descr': [('a',)], 'fortran_order': False, 'shape': (3,)}"), "not (name, dtype"},
		{"field name", rawNPY(1, "{'descr': [(1, '<i8')], 'fortran_order': False, 'shape': (3,)}"), "not a string"},
		{"unterminated", rawNPY(1, "{'descr': '<i8, 'fortran_order': False, 'shape': (3,)}"), "offset"},
		{"newline in string", rawNPY(1, "{'descr': '<i8\n', 'fortran_order': False, 'shape': (3,)}"), "newline"},
		{"bad escape", rawNPY(1, `{'descr': '<i8\q', 'fortran_order': False, 'shape': (3,)}`), "escape"},
		{"unclosed dict", rawNPY(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,)"), "end of header"},
		{"trailing", rawNPY(1, good+"x"), "trailing"},
		{"garbage word", rawNPY(1, "{'descr': '<i8', 'fortran_order': Maybe, 'shape': (3,)}"), "unexpected"},
		{"too deep", rawNPY(1, deep), "nested too deeply"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := ReadNPYHeader(bytes.NewReader(c.file))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "npy: ") {
				t.Errorf("error %q; want it to contain %q", err, c.want)
			}
		})
	}
}

// TestReadNPYHeaderOffset checks that parse errors give the byte offset in
// the file.
func TestReadNPYHeaderOffset(t *testing.T) {
	f := rawNPY(1, "{'descr': '<i8', 'fortran_order': Maybe, 'shape': (3,)}")
	_, _, _, err := ReadNPYHeader(bytes.NewReader(f))
	want := "offset " + strconv.Itoa(bytes.Index(f, []byte("Maybe")))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v; want %q", err, want)
	}
}

// FuzzReadNPYHeader checks that ReadNPYHeader never panics, and that every
// header it accepts survives a write with npyHeader and a second read
// unchanged (the structured descr is already canonical).
func FuzzReadNPYHeader(f *testing.F) {
	for _, d := range []string{
		"{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }\n",
		"{'descr': '<f4', 'fortran_order': True, 'shape': (6, 61), }",
		"{'descr': [('a', '<i8'), ('b', '<f4', (2, 3))], 'fortran_order': False, 'shape': (), }",
		`{"descr": "|b1", "fortran_order": False, "shape": (0, 10)}`,
	} {
		f.Add(rawNPY(1, d))
		f.Add(rawNPY(2, d))
	}
	var b bytes.Buffer
	WriteNPY(&b, []int{2, 3}, make([]float32, 6))
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, file []byte) {
		descr, fortran, shape, err := ReadNPYHeader(bytes.NewReader(file))
		if err != nil {
			return
		}
		q := descr
		if !strings.HasPrefix(descr, "[") {
			q = pyQuote(descr)
		}
		h, err := npyHeader(q, fortran, shape)
		if err != nil {
			return // too long for format 1.0
		}
		if len(h)%npyAlign != 0 {
			t.Fatalf("header length %d not aligned", len(h))
		}
		d2, f2, s2, err := ReadNPYHeader(bytes.NewReader(h))
		if err != nil {
			t.Fatalf("re-reading %q: %v", h, err)
		}
		if d2 != descr || f2 != fortran || !reflect.DeepEqual(s2, shape) {
			t.Fatalf("round trip: %q %v %v -> %q %v %v", descr, fortran, shape, d2, f2, s2)
		}
	})
}
