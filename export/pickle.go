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
	opTuple3      = 0x87
	opEmptyList   = ']'
	opAppend      = 'a'
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
// map[string]any (a nested dict) and []float64, []float32, []int64 or
// []int32 (1-d numpy arrays of float64, float32, int64 or int32). An
// existing file is truncated; errors name the file.
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

// array writes a 1-d numpy array of n elements of dtype name ("f8",
// "i4", ...) from its little-endian bytes raw.
func (p *pickler) array(name string, n int, raw []byte) {
	p.global(numpyReconstruct)
	p.global("numpy\nndarray\n")
	p.int(0)
	p.b = append(p.b, opTuple1)
	p.bytes([]byte("b"))
	p.b = append(p.b, opTuple3, opReduce, opMark)
	p.int(1)
	p.int(int64(n))
	p.b = append(p.b, opTuple1)
	p.dtype(name, "<", 0)
	p.b = append(p.b, opNewFalse)
	p.bytes(raw)
	p.b = append(p.b, opTuple, opBuild)
}

// maxPickleDepth bounds the nesting of dicts.
const maxPickleDepth = 8

func (p *pickler) value(v any, depth int) error {
	le := binary.LittleEndian
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
	case []float64:
		var raw []byte
		for _, f := range x {
			raw = le.AppendUint64(raw, math.Float64bits(f))
		}
		p.array("f8", len(x), raw)
	case []float32:
		var raw []byte
		for _, f := range x {
			raw = le.AppendUint32(raw, math.Float32bits(f))
		}
		p.array("f4", len(x), raw)
	case []int64:
		var raw []byte
		for _, i := range x {
			raw = le.AppendUint64(raw, uint64(i))
		}
		p.array("i8", len(x), raw)
	case []int32:
		var raw []byte
		for _, i := range x {
			raw = le.AppendUint32(raw, uint32(i))
		}
		p.array("i4", len(x), raw)
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
