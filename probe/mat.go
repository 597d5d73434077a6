package probe

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// MAT-file v5 data types and array classes (MathWorks, "MAT-File Format",
// level 5) that the channel-map reader handles.
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15

	mxDOUBLE = 6
	mxUINT64 = 15 // numeric classes are mxDOUBLE … mxUINT64
)

// matLimit bounds the decompressed bytes of one compressed element and
// the values of one array, so that a hostile file cannot exhaust memory.
const matLimit = 64 << 20

// matArray is a real numeric (or logical) array of a MAT-file, as
// float64 in column-major order.
type matArray struct {
	dims []int
	data []float64
}

// readMatV5 returns the real numeric and logical arrays stored at the top
// level of a MATLAB level-5 MAT-file (what save writes up to -v7, zlib
// compressed elements included), by name. Other variables (char, cell,
// struct, sparse, complex) are skipped. It is an error if data is not a
// level-5 file (a -v7.3 HDF5 file or a level-4 file) or is malformed.
func readMatV5(data []byte) (map[string]matArray, error) {
	if len(data) < 128 {
		return nil, fmt.Errorf("not a MATLAB MAT-file (%d bytes, shorter than the 128-byte header)", len(data))
	}
	text := string(data[:116])
	if strings.HasPrefix(text, "MATLAB 7.3") || binary.LittleEndian.Uint16(data[124:]) == 0x0200 || binary.BigEndian.Uint16(data[124:]) == 0x0200 {
		return nil, fmt.Errorf("a MATLAB -v7.3 (HDF5) MAT-file; save it with save(..., '-v7') or as Kilosort probe JSON")
	}
	if !strings.HasPrefix(text, "MATLAB 5.0 MAT-file") {
		return nil, fmt.Errorf("not a MATLAB level-5 MAT-file (no \"MATLAB 5.0 MAT-file\" header)")
	}
	var bo binary.ByteOrder
	switch string(data[126:128]) {
	case "IM":
		bo = binary.LittleEndian
	case "MI":
		bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("MAT-file header: bad endian indicator %q", data[126:128])
	}
	out := map[string]matArray{}
	if err := matElements(data[128:], 128, bo, out, false); err != nil {
		return nil, err
	}
	return out, nil
}

// matTag reads the tag at b[0:] and returns the type, the payload and the
// length of the whole element, padding included.
func matTag(b []byte, bo binary.ByteOrder, off int) (typ uint32, payload []byte, size int, err error) {
	if len(b) < 8 {
		return 0, nil, 0, fmt.Errorf("byte %d: %d bytes left, too short for an element tag", off, len(b))
	}
	w := bo.Uint32(b)
	if w>>16 != 0 { // small data element: type and size in 4 bytes, data in the next 4
		n := int(w >> 16)
		if n > 4 {
			return 0, nil, 0, fmt.Errorf("byte %d: small element of %d bytes", off, n)
		}
		return w & 0xffff, b[4 : 4+n], 8, nil
	}
	n := bo.Uint32(b[4:])
	if uint64(n) > uint64(len(b)-8) {
		return 0, nil, 0, fmt.Errorf("byte %d: element of %d bytes but %d bytes left", off, n, len(b)-8)
	}
	size = 8 + int(n)
	if w != miCOMPRESSED {
		size = (size + 7) &^ 7
		size = min(size, len(b)) // the last element may lack its padding
	}
	return w, b[8 : 8+int(n)], size, nil
}

// matElements reads the top-level elements of b into out.
func matElements(b []byte, base int, bo binary.ByteOrder, out map[string]matArray, inner bool) error {
	for off := 0; off < len(b); {
		if len(b)-off < 8 && allZero(b[off:]) {
			return nil // trailing padding
		}
		typ, payload, size, err := matTag(b[off:], bo, base+off)
		if err != nil {
			return err
		}
		switch typ {
		case miCOMPRESSED:
			if inner {
				return fmt.Errorf("byte %d: compressed element inside a compressed element", base+off)
			}
			zr, err := zlib.NewReader(bytes.NewReader(payload))
			if err != nil {
				return fmt.Errorf("byte %d: compressed element: %v", base+off, err)
			}
			raw, err := io.ReadAll(io.LimitReader(zr, matLimit+1))
			if err == nil && len(raw) > matLimit {
				err = fmt.Errorf("more than %d bytes decompressed", matLimit)
			}
			if err != nil {
				return fmt.Errorf("byte %d: compressed element: %v", base+off, err)
			}
			if err := matElements(raw, 0, bo, out, true); err != nil {
				return fmt.Errorf("in the compressed element at byte %d: %w", base+off, err)
			}
		case miMATRIX:
			name, arr, ok, err := matMatrix(payload, bo, base+off+8)
			if err != nil {
				return err
			}
			if ok {
				if _, dup := out[name]; dup {
					return fmt.Errorf("byte %d: variable %q stored twice", base+off, name)
				}
				out[name] = arr
			}
		}
		off += size
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// matMatrix parses the sub-elements of a miMATRIX: array flags,
// dimensions, name, real part. ok is false for arrays that are not real
// numeric or logical.
func matMatrix(b []byte, bo binary.ByteOrder, base int) (name string, arr matArray, ok bool, err error) {
	var sub [4][]byte
	var types [4]uint32
	off := 0
	for i := range sub {
		if len(b) == 0 && i == 0 {
			return "", arr, false, nil // an empty matrix element
		}
		t, p, size, err := matTag(b[off:], bo, base+off)
		if err != nil {
			return "", arr, false, err
		}
		types[i], sub[i] = t, p
		off += size
		if i == 2 {
			break
		}
	}
	if types[0] != miUINT32 || len(sub[0]) < 8 {
		return "", arr, false, fmt.Errorf("byte %d: matrix without array flags", base)
	}
	flags := bo.Uint32(sub[0])
	class := flags & 0xff
	complexFlag := flags&0x0800 != 0
	if types[1] != miINT32 || len(sub[1])%4 != 0 || len(sub[1]) < 8 {
		return "", arr, false, fmt.Errorf("byte %d: matrix without dimensions", base)
	}
	if types[2] != miINT8 && types[2] != miUINT8 {
		return "", arr, false, fmt.Errorf("byte %d: matrix without a name", base)
	}
	name = string(sub[2])
	if class < mxDOUBLE || class > mxUINT64 || complexFlag {
		return name, arr, false, nil // char, cell, struct, sparse, complex: not a channel-map array
	}
	n := 1
	for i := 0; i < len(sub[1]); i += 4 {
		d := int(int32(bo.Uint32(sub[1][i:])))
		if d < 0 || d > matLimit {
			return "", arr, false, fmt.Errorf("variable %q: dimension %d", name, d)
		}
		arr.dims = append(arr.dims, d)
		if n = n * d; n > matLimit {
			return "", arr, false, fmt.Errorf("variable %q: more than %d values", name, matLimit)
		}
	}
	if off >= len(b) {
		if n == 0 {
			return name, arr, true, nil
		}
		return "", arr, false, fmt.Errorf("variable %q: no real part", name)
	}
	t, p, _, err := matTag(b[off:], bo, base+off)
	if err != nil {
		return "", arr, false, err
	}
	arr.data, err = matNumbers(t, p, bo)
	if err != nil {
		return "", arr, false, fmt.Errorf("variable %q: %v", name, err)
	}
	if len(arr.data) != n {
		return "", arr, false, fmt.Errorf("variable %q: %d values for dimensions %v", name, len(arr.data), arr.dims)
	}
	return name, arr, true, nil
}

// matNumbers decodes a numeric element (MATLAB stores a double array
// of small integers as miUINT8 and the like).
func matNumbers(t uint32, p []byte, bo binary.ByteOrder) ([]float64, error) {
	size := map[uint32]int{miINT8: 1, miUINT8: 1, miINT16: 2, miUINT16: 2, miINT32: 4, miUINT32: 4,
		miSINGLE: 4, miDOUBLE: 8, miINT64: 8, miUINT64: 8}[t]
	if size == 0 {
		return nil, fmt.Errorf("data type %d is not numeric", t)
	}
	if len(p)%size != 0 {
		return nil, fmt.Errorf("%d bytes of %d-byte values", len(p), size)
	}
	out := make([]float64, len(p)/size)
	for i := range out {
		q := p[i*size:]
		switch t {
		case miINT8:
			out[i] = float64(int8(q[0]))
		case miUINT8:
			out[i] = float64(q[0])
		case miINT16:
			out[i] = float64(int16(bo.Uint16(q)))
		case miUINT16:
			out[i] = float64(bo.Uint16(q))
		case miINT32:
			out[i] = float64(int32(bo.Uint32(q)))
		case miUINT32:
			out[i] = float64(bo.Uint32(q))
		case miSINGLE:
			out[i] = float64(math.Float32frombits(bo.Uint32(q)))
		case miDOUBLE:
			out[i] = math.Float64frombits(bo.Uint64(q))
		case miINT64:
			out[i] = float64(int64(bo.Uint64(q)))
		case miUINT64:
			out[i] = float64(bo.Uint64(q))
		}
	}
	return out, nil
}

// ParseKilosortMat parses a Kilosort 1–3 channel map saved by MATLAB
// (level 5, as save writes by default, compressed or not): the arrays
// chanMap (1-based file rows; chanMap0ind, 0-based, if chanMap is
// absent), xcoords and ycoords (µm), and optionally kcoords (shank or
// group, default 0; shankInd in older maps) and connected (logical; sites with 0 are left out, as
// Kilosort does). All must have one value per channel. NChanFile is the
// largest used row plus one; the command fits it to the file
// ([Probe.ForFile]). name (the file name) is used in errors and as the
// probe's Name.
func ParseKilosortMat(data []byte, name string) (*Probe, error) {
	vars, err := readMatV5(data)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", name, err)
	}
	get := func(k string) []float64 {
		if a, ok := vars[k]; ok {
			return a.data
		}
		return nil
	}
	cm, offset := get("chanMap"), 1.0
	if _, ok := vars["chanMap"]; !ok {
		if _, ok := vars["chanMap0ind"]; !ok {
			keys := make([]string, 0, len(vars))
			for k := range vars {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return nil, fmt.Errorf("probe %s: no chanMap (or chanMap0ind) array; numeric variables: %s", name, strings.Join(keys, ", "))
		}
		cm, offset = get("chanMap0ind"), 0
	}
	n := len(cm)
	x, y, kc, conn := get("xcoords"), get("ycoords"), get("kcoords"), get("connected")
	if kc == nil {
		kc = get("shankInd") // older Kilosort maps (neuropixPhase3A)
	}
	if x == nil || y == nil {
		return nil, fmt.Errorf("probe %s: no xcoords and ycoords arrays", name)
	}
	if len(x) != n || len(y) != n || (kc != nil && len(kc) != n) || (conn != nil && len(conn) != n) {
		return nil, fmt.Errorf("probe %s: %d chanMap entries but %d xcoords, %d ycoords, %d kcoords and %d connected values",
			name, n, len(x), len(y), len(kc), len(conn))
	}
	if z := get("chanMap0ind"); offset == 1 && z != nil {
		for i := range min(len(z), n) {
			if len(z) != n || z[i] != cm[i]-1 {
				return nil, fmt.Errorf("probe %s: chanMap0ind is not chanMap − 1 (entry %d: %g and %g)", name, i, z[i], cm[i])
			}
		}
	}
	p := &Probe{Name: name}
	for i := range n {
		if conn != nil && conn[i] == 0 {
			continue
		}
		r, ok := exactInt(cm[i] - offset)
		if !ok || r < 0 {
			return nil, fmt.Errorf("probe %s: chanMap[%d] = %g is not a %g-based channel number", name, i, cm[i], offset)
		}
		s := 0
		if kc != nil {
			if s, ok = exactInt(kc[i]); !ok {
				return nil, fmt.Errorf("probe %s: kcoords[%d] = %g is not a shank number", name, i, kc[i])
			}
		}
		p.ChanMap = append(p.ChanMap, r)
		p.X = append(p.X, x[i])
		p.Y = append(p.Y, y[i])
		p.Shank = append(p.Shank, s)
		p.NChanFile = max(p.NChanFile, r+1)
	}
	if len(p.ChanMap) == 0 {
		return nil, fmt.Errorf("probe %s: no connected channel", name)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}
