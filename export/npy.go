package export

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// npyMagic starts every .npy file.
const npyMagic = "\x93NUMPY"

// npyAlign is the alignment of the data start that numpy uses for new files.
const npyAlign = 64

// littleEndian reports whether the host stores integers little-endian, in
// which case slices are written by reinterpreting their memory.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// elemInfo describes how a Go slice maps to a numpy dtype.
type elemInfo struct {
	descr string // numpy descr, e.g. "<i8"
	size  int    // bytes per element
	n     int    // number of elements
	raw   []byte // the slice's memory (little-endian hosts) or nil
	// put writes element i into dst in little-endian order (used on
	// big-endian hosts and for structured records).
	put func(dst []byte, i int)
}

// asBytes reinterprets a slice's memory as bytes.
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// describe returns the dtype information of a supported slice, or ok=false.
func describe(data any) (e elemInfo, ok bool) {
	le := binary.LittleEndian
	switch s := data.(type) {
	case []bool:
		e = elemInfo{"|b1", 1, len(s), asBytes(s), func(d []byte, i int) {
			d[0] = 0
			if s[i] {
				d[0] = 1
			}
		}}
	case []int8:
		e = elemInfo{"|i1", 1, len(s), asBytes(s), func(d []byte, i int) { d[0] = byte(s[i]) }}
	case []uint8:
		e = elemInfo{"|u1", 1, len(s), s, func(d []byte, i int) { d[0] = s[i] }}
	case []int16:
		e = elemInfo{"<i2", 2, len(s), asBytes(s), func(d []byte, i int) { le.PutUint16(d, uint16(s[i])) }}
	case []uint16:
		e = elemInfo{"<u2", 2, len(s), asBytes(s), func(d []byte, i int) { le.PutUint16(d, s[i]) }}
	case []int32:
		e = elemInfo{"<i4", 4, len(s), asBytes(s), func(d []byte, i int) { le.PutUint32(d, uint32(s[i])) }}
	case []uint32:
		e = elemInfo{"<u4", 4, len(s), asBytes(s), func(d []byte, i int) { le.PutUint32(d, s[i]) }}
	case []int64:
		e = elemInfo{"<i8", 8, len(s), asBytes(s), func(d []byte, i int) { le.PutUint64(d, uint64(s[i])) }}
	case []uint64:
		e = elemInfo{"<u8", 8, len(s), asBytes(s), func(d []byte, i int) { le.PutUint64(d, s[i]) }}
	case []float32:
		e = elemInfo{"<f4", 4, len(s), asBytes(s), func(d []byte, i int) { le.PutUint32(d, math.Float32bits(s[i])) }}
	case []float64:
		e = elemInfo{"<f8", 8, len(s), asBytes(s), func(d []byte, i int) { le.PutUint64(d, math.Float64bits(s[i])) }}
	default:
		return e, false
	}
	if !littleEndian {
		e.raw = nil
	}
	return e, true
}

// shapeString formats a shape as a Python tuple: (), (n,), (a, b).
func shapeString(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// npyHeader returns the complete format-1.0 preamble (magic, version,
// length and padded dict) for descr (already in Python syntax), the
// Fortran-order flag and shape.
func npyHeader(descr string, fortran bool, shape []int) ([]byte, error) {
	order := "False"
	if fortran {
		order = "True"
	}
	dict := "{'descr': " + descr + ", 'fortran_order': " + order + ", 'shape': " + shapeString(shape) + ", }"
	pre := len(npyMagic) + 2 + 2
	total := pre + len(dict) + 1 // + '\n'
	total = (total + npyAlign - 1) / npyAlign * npyAlign
	hlen := total - pre
	if hlen > math.MaxUint16 {
		return nil, fmt.Errorf("export: npy header of %d bytes does not fit format 1.0", hlen)
	}
	h := make([]byte, 0, total)
	h = append(h, npyMagic...)
	h = append(h, 1, 0)
	h = binary.LittleEndian.AppendUint16(h, uint16(hlen))
	h = append(h, dict...)
	for len(h) < total-1 {
		h = append(h, ' ')
	}
	return append(h, '\n'), nil
}

// checkShape panics unless shape has non-negative dimensions whose product
// is n.
func checkShape(shape []int, n int) {
	prod := 1
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("export: negative dimension in shape %v", shape))
		}
		if d != 0 && prod > math.MaxInt/d {
			panic(fmt.Sprintf("export: shape %v overflows", shape))
		}
		prod *= d
	}
	if prod != n {
		panic(fmt.Sprintf("export: shape %v holds %d elements but data has %d", shape, prod, n))
	}
}

// WriteNPY writes data as a .npy array (format 1.0, C order, little-endian)
// of the given shape to w: the header in one write, then the data in one
// write. data must be a slice of bool, int8, uint8, int16, uint16, int32,
// uint32, int64, uint64, float32 or float64 whose length is the product of
// shape; shape may have any number of dimensions, including zero-length
// ones such as (0,) or (0, 10), and an empty shape writes a scalar (one
// element). WriteNPY panics on an unsupported type or a shape mismatch.
func WriteNPY(w io.Writer, shape []int, data any) error {
	e, ok := describe(data)
	if !ok {
		panic(fmt.Sprintf("export: WriteNPY of unsupported type %T", data))
	}
	checkShape(shape, e.n)
	h, err := npyHeader("'"+e.descr+"'", false, shape)
	if err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	if e.n == 0 {
		return nil
	}
	buf := e.raw
	if buf == nil { // big-endian host: convert
		buf = make([]byte, e.n*e.size)
		for i := range e.n {
			e.put(buf[i*e.size:], i)
		}
	}
	_, err = w.Write(buf)
	return err
}

// WriteNPYFile writes data to a new file at path with [WriteNPY]; an
// existing file is truncated. Errors name the file.
func WriteNPYFile(path string, shape []int, data any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteNPY(f, shape, data); err != nil {
		f.Close()
		return fmt.Errorf("export: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export: writing %s: %w", path, err)
	}
	return nil
}

// Column is one field of a structured (record) array: its name and its
// values, a slice of any type [WriteNPY] accepts.
type Column struct {
	// Name is the field name, e.g. "sample_index".
	Name string
	// Data holds one value per record.
	Data any
}

// recordBuf is the size of the interleaving buffer of WriteNPYRecords.
const recordBuf = 1 << 20

// WriteNPYRecords writes a one-dimensional .npy array of a structured dtype
// whose fields are cols, in order, packed without padding (numpy's
// align=False), e.g. SpikeInterface's peak dtype
//
//	[('sample_index', '<i8'), ('channel_index', '<i8'), ('amplitude', '<f8'), ('segment_index', '<i8')]
//
// Record i holds element i of every column. The records are interleaved in
// a bounded buffer and written in chunks. WriteNPYRecords panics if there
// are no columns, if the columns differ in length, if a name is empty,
// repeated or contains a quote, backslash or control character, or if a
// column has an unsupported type.
func WriteNPYRecords(w io.Writer, cols ...Column) error {
	if len(cols) == 0 {
		panic("export: WriteNPYRecords with no columns")
	}
	infos := make([]elemInfo, len(cols))
	offs := make([]int, len(cols))
	var descr strings.Builder
	descr.WriteByte('[')
	seen := map[string]bool{}
	rec := 0
	for j, c := range cols {
		if c.Name == "" || strings.ContainsAny(c.Name, "'\"\\") || strings.ContainsFunc(c.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			panic(fmt.Sprintf("export: bad field name %q", c.Name))
		}
		if seen[c.Name] {
			panic(fmt.Sprintf("export: repeated field name %q", c.Name))
		}
		seen[c.Name] = true
		e, ok := describe(c.Data)
		if !ok {
			panic(fmt.Sprintf("export: field %q of unsupported type %T", c.Name, c.Data))
		}
		if j > 0 && e.n != infos[0].n {
			panic(fmt.Sprintf("export: field %q has %d values but field %q has %d", c.Name, e.n, cols[0].Name, infos[0].n))
		}
		infos[j] = e
		offs[j] = rec
		rec += e.size
		if j > 0 {
			descr.WriteString(", ")
		}
		fmt.Fprintf(&descr, "('%s', '%s')", c.Name, e.descr)
	}
	descr.WriteByte(']')
	n := infos[0].n
	h, err := npyHeader(descr.String(), false, []int{n})
	if err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	per := max(1, recordBuf/rec)
	buf := make([]byte, min(n, per)*rec)
	for lo := 0; lo < n; lo += per {
		hi := min(n, lo+per)
		b := buf[:(hi-lo)*rec]
		for j, e := range infos {
			o := offs[j]
			if e.raw != nil {
				interleave(b, e.raw[lo*e.size:hi*e.size], e.size, rec, o)
				continue
			}
			for i := lo; i < hi; i++ {
				e.put(b[(i-lo)*rec+o:], i)
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// WriteNPYRecordsFile writes a structured array to a new file at path with
// [WriteNPYRecords], through a buffered writer. Errors name the file.
func WriteNPYRecordsFile(path string, cols ...Column) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = WriteNPYRecords(bw, cols...)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("export: writing %s: %w", path, err)
	}
	return nil
}

// interleave copies the elements of src (size bytes each) into dst, one
// per record of rec bytes at offset o.
func interleave(dst, src []byte, size, rec, o int) {
	le := binary.LittleEndian
	n := len(src) / size
	switch size {
	case 8:
		for i := range n {
			le.PutUint64(dst[i*rec+o:], le.Uint64(src[i*8:]))
		}
	case 4:
		for i := range n {
			le.PutUint32(dst[i*rec+o:], le.Uint32(src[i*4:]))
		}
	case 2:
		for i := range n {
			le.PutUint16(dst[i*rec+o:], le.Uint16(src[i*2:]))
		}
	default:
		for i := range n {
			copy(dst[i*rec+o:i*rec+o+size], src[i*size:(i+1)*size])
		}
	}
}
