package export

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sort"
	"unicode/utf8"
)

// Pickle opcodes (protocol 2 and 3) that the writer uses; see Python's
// Lib/pickletools.py for their definitions.
const (
	opProto       = 0x80 // PROTO n
	opStop        = '.'
	opMark        = '('
	opTuple       = 't' // tuple of the items above the topmost mark
	opEmptyTuple  = ')'
	opTuple1      = 0x85
	opTuple2      = 0x86
	opTuple3      = 0x87
	opEmptyList   = ']'
	opAppend      = 'a'
	opAppends     = 'e' // list.extend with the items above the topmost mark
	opEmptyDict   = '}'
	opSetItems    = 'u' // dict[k] = v for the pairs above the topmost mark
	opGlobal      = 'c' // GLOBAL module\nname\n
	opReduce      = 'R'
	opBuild       = 'b'
	opNone        = 'N'
	opNewTrue     = 0x88
	opNewFalse    = 0x89
	opBinInt1     = 'K' // 1-byte unsigned
	opBinInt      = 'J' // 4-byte signed little-endian
	opLong1       = 0x8a
	opBinFloat    = 'G' // 8-byte big-endian IEEE double
	opBinUnicode  = 'X' // 4-byte length, UTF-8
	opShortBytes  = 'C' // 1-byte length (protocol 3)
	opBinBytes    = 'B' // 4-byte length (protocol 3)
	pickleVersion = 3
)

// numpyReconstruct is the global numpy's ndarray.__reduce__ names
// (numpy 2 keeps this module path in its pickles so that numpy 1 can
// read them).
const numpyReconstruct = "numpy.core.multiarray\n_reconstruct\n"

// WritePickledDictNPY writes d to path as numpy's np.save(path, d) does:
// a .npy of a 0-d object array (descr '|O', shape ()) whose data is the
// pickle (protocol 3) of that array holding the dict, so that
// np.load(path, allow_pickle=True).item() returns the dict. This is how
// Kilosort writes ops.npy. Keys are written in sorted order. Values may
// be nil, bool, int, int32, int64, float32, float64, string,
// map[string]any (a nested dict), []string (a list of str), []float64,
// []float32, []int64 or []int32 (1-d numpy arrays of float64, float32,
// int64 or int32) and [PickleArray] (an n-d numpy array). An existing
// file is truncated; errors name the file.
func WritePickledDictNPY(path string, d map[string]any) error {
	p, err := PickleNPYObject(d)
	if err != nil {
		return fmt.Errorf("export: %s: %w", path, err)
	}
	h, err := npyHeader("'|O'", false, nil)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(append(h, p...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("export: writing %s: %w", path, err)
	}
	return nil
}

// PickleNPYObject returns the pickle (protocol 3) of a 0-d numpy object
// array holding v (see [WritePickledDictNPY] for the types): the data
// part of an object .npy file.
func PickleNPYObject(v any) ([]byte, error) {
	var p pickler
	p.b = append(p.b, opProto, pickleVersion)
	// _reconstruct(ndarray, (0,), b'b') makes an empty array ...
	p.global(numpyReconstruct)
	p.global("numpy\nndarray\n")
	p.int(0)
	p.b = append(p.b, opTuple1)
	p.bytes([]byte("b"))
	p.b = append(p.b, opTuple3, opReduce)
	// ... and BUILD calls its __setstate__((1, (), dtype('O'), False,
	// [v])): version 1, shape (), object dtype, C order and the list of
	// the elements.
	p.b = append(p.b, opMark)
	p.int(1)
	p.b = append(p.b, opEmptyTuple)
	p.dtype("O8", "|", 63)
	p.b = append(p.b, opNewFalse, opEmptyList)
	if err := p.value(v, 0); err != nil {
		return nil, err
	}
	p.b = append(p.b, opAppend, opTuple, opBuild, opStop)
	return p.b, nil
}

// PickleArray is an n-d numpy array for [WritePickledDictNPY]: Data, a
// []float64, []float32, []int64 or []int32 of as many elements as Shape
// holds, in C order.
type PickleArray struct {
	Shape []int
	Data  any
}

// pickler appends opcodes to b.
type pickler struct{ b []byte }

func (p *pickler) global(modName string) {
	p.b = append(p.b, opGlobal)
	p.b = append(p.b, modName...)
}

// int writes a Python int: BININT1 for 0–255, BININT for the int32
// range, LONG1 (two's complement, little-endian, fewest bytes) beyond.
func (p *pickler) int(v int64) {
	switch {
	case v >= 0 && v < 256:
		p.b = append(p.b, opBinInt1, byte(v))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		p.b = append(p.b, opBinInt)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(int32(v)))
	default:
		var le []byte
		for x := v; ; x >>= 8 {
			le = append(le, byte(x))
			// Done once the rest is the sign extension of the last byte.
			if (x>>8 == 0 && byte(x)&0x80 == 0) || (x>>8 == -1 && byte(x)&0x80 != 0) {
				break
			}
		}
		p.b = append(p.b, opLong1, byte(len(le)))
		p.b = append(p.b, le...)
	}
}

func (p *pickler) float(v float64) {
	p.b = append(p.b, opBinFloat)
	p.b = binary.BigEndian.AppendUint64(p.b, math.Float64bits(v))
}

func (p *pickler) str(s string) {
	p.b = append(p.b, opBinUnicode)
	p.b = binary.LittleEndian.AppendUint32(p.b, uint32(len(s)))
	p.b = append(p.b, s...)
}

func (p *pickler) bytes(b []byte) {
	if len(b) < 256 {
		p.b = append(p.b, opShortBytes, byte(len(b)))
	} else {
		p.b = append(p.b, opBinBytes)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(len(b)))
	}
	p.b = append(p.b, b...)
}

// dtype writes numpy.dtype(name, False, True) with the state numpy's
// dtype.__reduce__ gives: (3, byteorder, None, None, None, -1, -1,
// flags).
func (p *pickler) dtype(name, order string, flags int64) {
	p.global("numpy\ndtype\n")
	p.str(name)
	p.b = append(p.b, opNewFalse, opNewTrue, opTuple3, opReduce, opMark)
	p.int(3)
	p.str(order)
	p.b = append(p.b, opNone, opNone, opNone)
	p.int(-1)
	p.int(-1)
	p.int(flags)
	p.b = append(p.b, opTuple, opBuild)
}

// array writes a numpy array of dtype name ("f8", "i4", ...) and the
// given shape from its little-endian bytes raw.
func (p *pickler) array(name string, shape []int, raw []byte) {
	p.global(numpyReconstruct)
	p.global("numpy\nndarray\n")
	p.int(0)
	p.b = append(p.b, opTuple1)
	p.bytes([]byte("b"))
	p.b = append(p.b, opTuple3, opReduce, opMark)
	p.int(1)
	p.tuple(shape)
	p.dtype(name, "<", 0)
	p.b = append(p.b, opNewFalse)
	p.bytes(raw)
	p.b = append(p.b, opTuple, opBuild)
}

// tuple writes a tuple of ints: TUPLE1, TUPLE2 or TUPLE3 for the short
// ones, MARK … TUPLE beyond.
func (p *pickler) tuple(v []int) {
	if len(v) > 3 {
		p.b = append(p.b, opMark)
	}
	for _, x := range v {
		p.int(int64(x))
	}
	switch len(v) {
	case 0:
		p.b = append(p.b, opEmptyTuple)
	case 1:
		p.b = append(p.b, opTuple1)
	case 2:
		p.b = append(p.b, opTuple2)
	case 3:
		p.b = append(p.b, opTuple3)
	default:
		p.b = append(p.b, opTuple)
	}
}

// rawArray returns the numpy dtype name, element count and
// little-endian bytes of a 1-d array type; ok is false for other types.
func rawArray(v any) (name string, n int, raw []byte, ok bool) {
	le := binary.LittleEndian
	switch x := v.(type) {
	case []float64:
		for _, f := range x {
			raw = le.AppendUint64(raw, math.Float64bits(f))
		}
		return "f8", len(x), raw, true
	case []float32:
		for _, f := range x {
			raw = le.AppendUint32(raw, math.Float32bits(f))
		}
		return "f4", len(x), raw, true
	case []int64:
		for _, i := range x {
			raw = le.AppendUint64(raw, uint64(i))
		}
		return "i8", len(x), raw, true
	case []int32:
		for _, i := range x {
			raw = le.AppendUint32(raw, uint32(i))
		}
		return "i4", len(x), raw, true
	}
	return "", 0, nil, false
}

// maxPickleDepth bounds the nesting of dicts.
const maxPickleDepth = 8

func (p *pickler) value(v any, depth int) error {
	switch x := v.(type) {
	case nil:
		p.b = append(p.b, opNone)
	case bool:
		if x {
			p.b = append(p.b, opNewTrue)
		} else {
			p.b = append(p.b, opNewFalse)
		}
	case int:
		p.int(int64(x))
	case int32:
		p.int(int64(x))
	case int64:
		p.int(x)
	case float32:
		p.float(float64(x))
	case float64:
		p.float(x)
	case string:
		if !utf8.ValidString(x) {
			return fmt.Errorf("pickle: string %q is not valid UTF-8", x)
		}
		p.str(x)
	case []string:
		p.b = append(p.b, opEmptyList)
		if len(x) == 0 {
			return nil
		}
		p.b = append(p.b, opMark)
		for _, e := range x {
			if !utf8.ValidString(e) {
				return fmt.Errorf("pickle: string %q is not valid UTF-8", e)
			}
			p.str(e)
		}
		p.b = append(p.b, opAppends)
	case []float64, []float32, []int64, []int32:
		name, n, raw, _ := rawArray(x)
		p.array(name, []int{n}, raw)
	case PickleArray:
		name, n, raw, ok := rawArray(x.Data)
		size := 1
		for _, d := range x.Shape {
			size *= max(d, 0)
			if d < 0 {
				size = -1
				break
			}
		}
		if !ok || size != n {
			return fmt.Errorf("pickle: array of shape %v holding %T of %d elements", x.Shape, x.Data, n)
		}
		p.array(name, x.Shape, raw)
	case map[string]any:
		if depth >= maxPickleDepth {
			return fmt.Errorf("pickle: dicts nested deeper than %d", maxPickleDepth)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		p.b = append(p.b, opEmptyDict)
		if len(keys) == 0 {
			return nil
		}
		p.b = append(p.b, opMark)
		for _, k := range keys {
			if !utf8.ValidString(k) {
				return fmt.Errorf("pickle: key %q is not valid UTF-8", k)
			}
			p.str(k)
			if err := p.value(x[k], depth+1); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		p.b = append(p.b, opSetItems)
	default:
		return fmt.Errorf("pickle: values of type %T are not supported", v)
	}
	return nil
}
