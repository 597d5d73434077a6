package export

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestPickleBytes pins the exact bytes of a small object array: the
// opcodes numpy's ndarray.__reduce__ and pickle protocol 3 give for
// np.array({'a': 1, 'b': 'x'}, dtype=object), without the memo (PUT)
// opcodes, which a reader does not need.
func TestPickleBytes(t *testing.T) {
	got, err := PickleNPYObject(map[string]any{"b": "x", "a": 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("\x80\x03" +
		"cnumpy.core.multiarray\n_reconstruct\n" + "cnumpy\nndarray\n" + "K\x00\x85" + "C\x01b" + "\x87R" +
		"(" + "K\x01" + ")" +
		"cnumpy\ndtype\n" + "X\x02\x00\x00\x00O8" + "\x89\x88\x87R" +
		"(" + "K\x03" + "X\x01\x00\x00\x00|" + "NNN" + "J\xff\xff\xff\xff" + "J\xff\xff\xff\xff" + "K?" + "tb" +
		"\x89" + "]" +
		"}(" + "X\x01\x00\x00\x00a" + "K\x01" + "X\x01\x00\x00\x00b" + "X\x01\x00\x00\x00x" + "u" +
		"atb.")
	if !bytes.Equal(got, want) {
		t.Errorf("pickle bytes\n got %q\nwant %q", got, want)
	}
	// Integers: the shortest opcode of each range, LONG1 in two's
	// complement.
	for _, c := range []struct {
		v    int64
		want string
	}{
		{0, "K\x00"}, {255, "K\xff"}, {256, "J\x00\x01\x00\x00"}, {-1, "J\xff\xff\xff\xff"},
		{math.MaxInt32 + 1, "\x8a\x05\x00\x00\x00\x80\x00"}, {math.MinInt32 - 1, "\x8a\x05\xff\xff\xff\x7f\xff"},
		{math.MaxInt64, "\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f"}, {math.MinInt64, "\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80"},
	} {
		var p pickler
		p.int(c.v)
		if string(p.b) != c.want {
			t.Errorf("int %d: %q, want %q", c.v, p.b, c.want)
		}
	}
	if _, err := PickleNPYObject(map[string]any{"x": []bool{false}}); err == nil {
		t.Error("an unsupported type was pickled")
	}
	if _, err := PickleNPYObject(map[string]any{"x": "\xff"}); err == nil {
		t.Error("invalid UTF-8 was pickled")
	}
}

// stubNumpy is a Python program that loads an object .npy as numpy's
// np.load(allow_pickle=True) does (header, then pickle.load with
// encoding 'ASCII'), with stand-ins for numpy's ndarray, dtype and
// _reconstruct that check the arguments numpy's would receive, and
// prints the array's element as JSON (arrays as lists). With numpy
// installed it also loads the file with numpy itself and checks that
// both agree.
const stubNumpy = `
import ast, json, pickle, pickletools, struct, sys, types
path = sys.argv[1]
class dtype:
    def __init__(self, name, align, copy):
        assert (align, copy) == (False, True), (align, copy)
        self.name = name
    def __setstate__(self, st):
        order = '|' if self.name == 'O8' else '<'
        flags = 63 if self.name == 'O8' else 0
        assert st == (3, order, None, None, None, -1, -1, flags), st
class ndarray:
    def __setstate__(self, st):
        version, shape, dt, fortran, data = st
        assert version == 1 and fortran is False, st
        self.shape, self.dtype, self.data = shape, dt, data
def _reconstruct(cls, shape, code):
    assert cls is ndarray and shape == (0,) and code == b'b', (cls, shape, code)
    return ndarray()
numpy = types.ModuleType('numpy'); numpy.ndarray = ndarray; numpy.dtype = dtype
core = types.ModuleType('numpy.core'); ma = types.ModuleType('numpy.core.multiarray'); ma._reconstruct = _reconstruct
real = None
try:
    import numpy as real
except ImportError:
    pass
saved = dict(sys.modules)
sys.modules.update({'numpy': numpy, 'numpy.core': core, 'numpy.core.multiarray': ma})
with open(path, 'rb') as f:
    assert f.read(6) == b'\x93NUMPY' and f.read(2) == b'\x01\x00'
    n = struct.unpack('<H', f.read(2))[0]
    h = f.read(n)
    assert (10 + n) % 64 == 0 and h.endswith(b'\n'), h
    assert ast.literal_eval(h.decode('latin1')) == {'descr': '|O', 'fortran_order': False, 'shape': ()}, h
    body = f.read()
pickletools.dis(body, out=open('/dev/null', 'w'))
arr = pickle.loads(body, encoding='ASCII', fix_imports=True)
sys.modules.clear(); sys.modules.update(saved)
assert isinstance(arr, ndarray) and arr.shape == () and arr.dtype.name == 'O8' and len(arr.data) == 1
fmt = {'f8': 'd', 'f4': 'f', 'i8': 'q', 'i4': 'i'}
def plain(v):
    if isinstance(v, ndarray):
        k = fmt[v.dtype.name]
        assert len(v.shape) == 1 and len(v.data) == v.shape[0] * struct.calcsize(k)
        return list(struct.unpack('<%d%s' % (v.shape[0], k), v.data))
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v
out = plain(arr.data[0])
if real is not None:
    d = real.load(path, allow_pickle=True).item()
    assert isinstance(d, dict)
    def np_plain(v):
        if isinstance(v, real.ndarray):
            return v.tolist()
        if isinstance(v, dict):
            return {k: np_plain(x) for k, x in v.items()}
        return v
    assert np_plain(d) == out, (np_plain(d), out)
    print('numpy', real.__version__, file=sys.stderr)
print(json.dumps(out))
`

// TestWritePickledDictNPY writes a Kilosort-like ops dict and reads it
// back with Python's own pickle (and numpy, where installed): every
// value must come back as written.
func TestWritePickledDictNPY(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3: the byte layout is checked by TestPickleBytes")
	}
	d := map[string]any{
		"nt0min": 20, "nt": 61, "fs": 30000.0, "n_chan_bin": int64(385), "Th_universal": float32(9),
		"do_CAR": true, "invert_sign": false, "data_dtype": "int16", "tmax": math.Inf(1), "none": nil,
		"big": int64(1) << 40, "neg": -70000, "name": "µm ünïcode",
		"xc": []float64{43, 11, 59.5, -27}, "chanMap": []int64{0, 1, 2, 383}, "kcoords": []int32{0, 0, 1, 2},
		"w": []float32{0.5, -1.25}, "empty": []float64{},
		"settings": map[string]any{"nskip": 25, "nested": map[string]any{}},
	}
	path := filepath.Join(t.TempDir(), "ops.npy")
	if err := WritePickledDictNPY(path, d); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", stubNumpy, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	t.Logf("python: %s", strings.TrimSpace(stderr.String()))
	// Infinity is not JSON: Python writes it as Infinity, read here as a
	// string.
	var got map[string]any
	if err := json.Unmarshal(bytes.ReplaceAll(out, []byte("Infinity"), []byte(`"inf"`)), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]any{
		"nt0min": 20.0, "nt": 61.0, "fs": 30000.0, "n_chan_bin": 385.0, "Th_universal": 9.0,
		"do_CAR": true, "invert_sign": false, "data_dtype": "int16", "tmax": "inf", "none": nil,
		"big": float64(int64(1) << 40), "neg": -70000.0, "name": "µm ünïcode",
		"xc": []any{43.0, 11.0, 59.5, -27.0}, "chanMap": []any{0.0, 1.0, 2.0, 383.0}, "kcoords": []any{0.0, 0.0, 1.0, 2.0},
		"w": []any{0.5, -1.25}, "empty": []any{},
		"settings": map[string]any{"nskip": 25.0, "nested": map[string]any{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n got %v\nwant %v", got, want)
	}
	if b, _ := os.ReadFile(path); len(b) < 64 || string(b[:6]) != npyMagic {
		t.Errorf("not a .npy file: %q", b)
	}
}

// TestPickleListsAndArrays pins the bytes of a list of str and of a 2-d
// array, checks that a shape that does not match the data is refused,
// and, where a python3 with numpy is installed, that numpy reads both
// back.
func TestPickleListsAndArrays(t *testing.T) {
	var p pickler
	if err := p.value([]string{"a", "bc"}, 0); err != nil {
		t.Fatal(err)
	}
	if want := "](X\x01\x00\x00\x00aX\x02\x00\x00\x00bce"; string(p.b) != want {
		t.Errorf("list: %q, want %q", p.b, want)
	}
	p.b = nil
	if err := p.value(PickleArray{Shape: []int{2, 1}, Data: []int32{7, -1}}, 0); err != nil {
		t.Fatal(err)
	}
	if want := "K\x02K\x01\x86cnumpy\ndtype\nX\x02\x00\x00\x00i4"; !strings.Contains(string(p.b), want) ||
		!strings.HasSuffix(string(p.b), "\x89C\x08\x07\x00\x00\x00\xff\xff\xff\xfftb") {
		t.Errorf("array: %q", p.b)
	}
	for _, bad := range []PickleArray{{Shape: []int{3}, Data: []int32{1, 2}}, {Shape: []int{-1, -2}, Data: []int32{1, 2}}, {Shape: []int{1}, Data: []bool{true}}} {
		if err := p.value(bad, 0); err == nil {
			t.Errorf("%v was pickled", bad)
		}
	}
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Skip("no python3 with numpy at " + py)
	}
	path := filepath.Join(t.TempDir(), "d.npy")
	d := map[string]any{"names": []string{"a", "bc"}, "empty": []string{}, "m": PickleArray{Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}},
		"s": PickleArray{Shape: []int{}, Data: []float64{2.5}}, "q": PickleArray{Shape: []int{1, 1, 2, 1}, Data: []int64{-3, 4}}}
	if err := WritePickledDictNPY(path, d); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", `import sys, json, numpy as np
d = np.load(sys.argv[1], allow_pickle=True).item()
print(json.dumps({k: (v if isinstance(v, list) else [str(v.dtype), list(v.shape), v.tolist()]) for k, v in d.items()}, sort_keys=True))`, path).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v: %s", err, out)
	}
	want := `{"empty": [], "m": ["float32", [2, 3], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]], "names": ["a", "bc"], ` +
		`"q": ["int64", [1, 1, 2, 1], [[[[-3], [4]]]]], "s": ["float64", [], 2.5]}`
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("numpy read\n%s\nwant\n%s", got, want)
	}
}
