package export

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// NPY is an array read from a .npy file by [ReadNPY]: its header and its
// payload as stored.
type NPY struct {
	// Descr is the dtype as numpy writes it ("<f4", "<i8", …).
	Descr string
	// Fortran reports column-major data.
	Fortran bool
	// Shape is the array's shape.
	Shape []int
	// Data is the payload, Len()·itemsize bytes in the file's byte order.
	Data []byte
}

// Len returns the number of elements, the product of Shape.
func (a *NPY) Len() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// ShapeString formats Shape as numpy prints it: "(3, 61)", "(5,)".
func (a *NPY) ShapeString() string {
	parts := make([]string, len(a.Shape))
	for i, v := range a.Shape {
		parts[i] = fmt.Sprint(v)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// maxNPYElements bounds the elements ReadNPY accepts, so that a corrupt
// shape cannot make it allocate without bound before the data run out.
const maxNPYElements = 1 << 40

// ReadNPY reads a whole .npy array of a simple numeric dtype (bool,
// signed and unsigned integers, float16/32/64; either byte order) from r:
// the header by [ReadNPYHeader], then exactly the payload its shape
// needs. A payload shorter than that is an error giving the byte counts;
// bytes after it are not read.
func ReadNPY(r io.Reader) (*NPY, error) {
	return readNPY(r, nil)
}

// ReadNPYFile is [ReadNPY] of the file at path. Knowing the file's size,
// it allocates the payload once, at its size, and refuses a shape the
// file is too short for before allocating anything; errors name path.
func ReadNPYFile(path string) (*NPY, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The header is read unbuffered (three small reads), so that the
	// file's offset is where the payload starts. Only a regular file's
	// size is known (a pipe's is 0): others are read as ReadNPY reads.
	cr := &countingReader{r: f}
	var room func() int64
	if st.Mode().IsRegular() {
		room = func() int64 { return st.Size() - cr.n }
	}
	a, err := readNPY(cr, room)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readNPY is ReadNPY; room, if not nil, gives the bytes left in r once
// the header is read, so that the payload is allocated once, at its size.
func readNPY(r io.Reader, room func() int64) (*NPY, error) {
	descr, fortran, shape, err := ReadNPYHeader(r)
	if err != nil {
		return nil, err
	}
	a := &NPY{Descr: descr, Fortran: fortran, Shape: shape}
	_, item, err := npyKind(descr)
	if err != nil {
		return nil, err
	}
	n := a.Len()
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("npy: negative dimension in shape %s", a.ShapeString())
		}
	}
	if n > maxNPYElements/item {
		return nil, fmt.Errorf("npy: shape %s is too large", a.ShapeString())
	}
	want := n * item
	truncated := func(m int64) error {
		return fmt.Errorf("npy: truncated: %d bytes of data for a %s %s array of %d bytes", m, a.ShapeString(), descr, want)
	}
	if room != nil {
		if left := room(); left < int64(want) {
			return nil, truncated(max(left, 0))
		}
		a.Data = make([]byte, want)
		if m, err := io.ReadFull(r, a.Data); err != nil {
			return nil, truncated(int64(m))
		}
		return a, nil
	}
	// A buffer that grows as data arrive: a lying shape costs only the
	// bytes present.
	var buf bytes.Buffer
	if m, err := io.CopyN(&buf, r, int64(want)); err != nil {
		return nil, truncated(m)
	}
	a.Data = buf.Bytes()
	return a, nil
}

// npyKind returns the kind ('b', 'i', 'u', 'f') and item size of a simple
// dtype, or an error.
func npyKind(descr string) (byte, int, error) {
	if len(descr) == 3 && strings.ContainsRune("<>|=", rune(descr[0])) {
		size := int(descr[2] - '0')
		switch k := descr[1]; {
		case k == 'b' && size == 1, (k == 'i' || k == 'u') && (size == 1 || size == 2 || size == 4 || size == 8),
			k == 'f' && (size == 2 || size == 4 || size == 8):
			if size > 1 && descr[0] == '|' {
				break
			}
			return k, size, nil
		}
	}
	return 0, 0, fmt.Errorf("npy: unsupported dtype %q (want a bool, integer or float)", descr)
}

// order returns the payload's byte order.
func (a *NPY) order() binary.ByteOrder {
	if a.Descr[0] == '>' {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// inOrder reports that element e of the C-ordered array is stored at
// index e (C order, or fewer than two dimensions).
func (a *NPY) inOrder() bool { return !a.Fortran || len(a.Shape) < 2 }

// index returns the storage index of element e of the C-ordered array.
func (a *NPY) index(e int) int {
	if a.inOrder() {
		return e
	}
	// e's C-order coordinates, then its Fortran-order offset.
	off, stride := 0, 1
	rest := e
	coords := make([]int, len(a.Shape))
	for d := len(a.Shape) - 1; d >= 0; d-- {
		coords[d] = rest % a.Shape[d]
		rest /= a.Shape[d]
	}
	for d := range a.Shape {
		off += coords[d] * stride
		stride *= a.Shape[d]
	}
	return off
}

// Float64 returns the elements in C order as float64s, converting any
// numeric dtype (integers exactly up to 2⁵³).
func (a *NPY) Float64() ([]float64, error) {
	kind, size, err := npyKind(a.Descr)
	if err != nil {
		return nil, err
	}
	o := a.order()
	out := make([]float64, a.Len())
	for e := range out {
		p := a.Data[a.index(e)*size:]
		switch {
		case kind == 'f' && size == 2:
			out[e] = halfToFloat64(o.Uint16(p))
		case kind == 'f' && size == 4:
			out[e] = float64(math.Float32frombits(o.Uint32(p)))
		case kind == 'f':
			out[e] = math.Float64frombits(o.Uint64(p))
		default:
			out[e] = float64(a.intAt(kind, size, p, o))
		}
	}
	return out, nil
}

// Float32 returns the elements in C order as float32s (see Float64;
// float64 values are rounded).
func (a *NPY) Float32() ([]float32, error) {
	if kind, size, err := npyKind(a.Descr); err == nil && kind == 'f' && size == 4 && a.inOrder() {
		// float32 as stored: decoded directly, without the float64 copy.
		o := a.order()
		out := make([]float32, a.Len())
		for e := range out {
			out[e] = math.Float32frombits(o.Uint32(a.Data[4*e:]))
		}
		return out, nil
	}
	v, err := a.Float64()
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out, nil
}

// Int64 returns the elements in C order as int64s; the dtype must be a
// bool or an integer (uint64 values above 2⁶³−1 are an error).
func (a *NPY) Int64() ([]int64, error) {
	kind, size, err := npyKind(a.Descr)
	if err != nil {
		return nil, err
	}
	if kind == 'f' {
		return nil, fmt.Errorf("npy: dtype %q is not an integer", a.Descr)
	}
	o := a.order()
	out := make([]int64, a.Len())
	if kind == 'i' && size == 8 && a.inOrder() {
		for e := range out {
			out[e] = int64(o.Uint64(a.Data[8*e:]))
		}
		return out, nil
	}
	for e := range out {
		p := a.Data[a.index(e)*size:]
		if kind == 'u' && size == 8 && o.Uint64(p) > math.MaxInt64 {
			return nil, fmt.Errorf("npy: element %d = %d overflows int64", e, o.Uint64(p))
		}
		out[e] = a.intAt(kind, size, p, o)
	}
	return out, nil
}

// intAt decodes one bool or integer element.
func (a *NPY) intAt(kind byte, size int, p []byte, o binary.ByteOrder) int64 {
	switch size {
	case 1:
		if kind == 'i' {
			return int64(int8(p[0]))
		}
		return int64(p[0])
	case 2:
		if kind == 'i' {
			return int64(int16(o.Uint16(p)))
		}
		return int64(o.Uint16(p))
	case 4:
		if kind == 'i' {
			return int64(int32(o.Uint32(p)))
		}
		return int64(o.Uint32(p))
	}
	return int64(o.Uint64(p))
}

// halfToFloat64 converts IEEE binary16 bits.
func halfToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 31:
		if frac == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}
