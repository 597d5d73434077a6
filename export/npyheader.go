package export

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// maxNPYHeader bounds the header length ReadNPYHeader accepts, so that a
// corrupt length field cannot make it allocate gigabytes.
const maxNPYHeader = 1 << 20

// ReadNPYHeader reads the preamble and header of a .npy file of format
// 1.0, 2.0 or 3.0 from r, leaving r at the first data byte. It returns the
// dtype description, whether the data are in Fortran order, and the shape.
// A simple dtype is returned as numpy writes it ("<f4", "|b1"); a structured
// dtype as its list in canonical Python syntax
// ("[('a', '<i8'), ('b', '<f4')]"). Errors carry the byte offset in the
// header at which parsing failed.
func ReadNPYHeader(r io.Reader) (descr string, fortran bool, shape []int, err error) {
	var pre [len(npyMagic) + 2]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return "", false, nil, fmt.Errorf("npy: reading preamble: %w", noEOF(err))
	}
	if string(pre[:len(npyMagic)]) != npyMagic {
		return "", false, nil, fmt.Errorf("npy: not a .npy file (magic %q)", pre[:len(npyMagic)])
	}
	major, minor := pre[len(npyMagic)], pre[len(npyMagic)+1]
	var hlen int
	var start int
	switch major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", false, nil, fmt.Errorf("npy: reading header length: %w", noEOF(err))
		}
		hlen, start = int(binary.LittleEndian.Uint16(b[:])), 10
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", false, nil, fmt.Errorf("npy: reading header length: %w", noEOF(err))
		}
		n := binary.LittleEndian.Uint32(b[:])
		if n > maxNPYHeader {
			return "", false, nil, fmt.Errorf("npy: header length %d exceeds %d bytes", n, maxNPYHeader)
		}
		hlen, start = int(n), 12
	default:
		return "", false, nil, fmt.Errorf("npy: unsupported format version %d.%d", major, minor)
	}
	if minor != 0 {
		return "", false, nil, fmt.Errorf("npy: unsupported format version %d.%d", major, minor)
	}
	h := make([]byte, hlen)
	if _, err := io.ReadFull(r, h); err != nil {
		return "", false, nil, fmt.Errorf("npy: reading %d-byte header: %w", hlen, noEOF(err))
	}
	return parseNPYDict(h, start)
}

// noEOF turns a bare io.EOF into io.ErrUnexpectedEOF: a file that ends
// inside the preamble is truncated.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseNPYDict parses the header dict; base is the file offset of h[0].
func parseNPYDict(h []byte, base int) (descr string, fortran bool, shape []int, err error) {
	p := &pyParser{s: string(h), base: base}
	v, err := p.value(0)
	if err != nil {
		return "", false, nil, err
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return "", false, nil, p.errorf("trailing data after header dict")
	}
	d, ok := v.(pyDict)
	if !ok {
		return "", false, nil, fmt.Errorf("npy: header at offset %d is not a dict", base)
	}
	if len(d.keys) != 3 {
		return "", false, nil, fmt.Errorf("npy: header has keys %v; want descr, fortran_order, shape", d.keys)
	}
	got := map[string]bool{}
	for k, key := range d.keys {
		val := d.vals[k]
		switch key {
		case "descr":
			descr, err = descrString(val)
			if err != nil {
				return "", false, nil, err
			}
		case "fortran_order":
			b, ok := val.(bool)
			if !ok {
				return "", false, nil, fmt.Errorf("npy: fortran_order is %s, not True or False", pyRepr(val))
			}
			fortran = b
		case "shape":
			t, ok := val.(pyTuple)
			if !ok {
				return "", false, nil, fmt.Errorf("npy: shape is %s, not a tuple", pyRepr(val))
			}
			shape = make([]int, len(t))
			prod := 1
			for i, x := range t {
				n, ok := x.(int)
				if !ok || n < 0 {
					return "", false, nil, fmt.Errorf("npy: shape %s has a dimension that is not a non-negative integer", pyRepr(val))
				}
				if n != 0 && prod > math.MaxInt64/n {
					return "", false, nil, fmt.Errorf("npy: shape %s overflows", pyRepr(val))
				}
				prod *= n
				shape[i] = n
			}
		default:
			return "", false, nil, fmt.Errorf("npy: unexpected header key %q", key)
		}
		if got[key] {
			return "", false, nil, fmt.Errorf("npy: repeated header key %q", key)
		}
		got[key] = true
	}
	if len(got) != 3 {
		return "", false, nil, fmt.Errorf("npy: header has keys %v; want descr, fortran_order, shape", d.keys)
	}
	return descr, fortran, shape, nil
}

// descrString checks a descr value (a string, or a list of (name, dtype)
// or (name, dtype, shape) tuples) and returns its canonical form.
func descrString(v any) (string, error) {
	switch d := v.(type) {
	case string:
		if d == "" {
			return "", fmt.Errorf("npy: empty descr")
		}
		// numpy's type strings ('<f4', '|b1', '<M8[ns]') are printable
		// ASCII without quotes; one starting with '[' would read as a
		// structured descr.
		for i := 0; i < len(d); i++ {
			if c := d[i]; c <= ' ' || c >= 0x7f || c == '\'' || c == '"' || c == '\\' {
				return "", fmt.Errorf("npy: descr %s is not a type string", pyQuote(d))
			}
		}
		if d[0] == '[' {
			return "", fmt.Errorf("npy: descr %s is not a type string", pyQuote(d))
		}
		return d, nil
	case pyList:
		if len(d) == 0 {
			return "", fmt.Errorf("npy: empty structured descr")
		}
		for _, f := range d {
			t, ok := f.(pyTuple)
			if !ok || len(t) < 2 || len(t) > 3 {
				return "", fmt.Errorf("npy: structured descr field %s is not (name, dtype[, shape])", pyRepr(f))
			}
			if _, ok := t[0].(string); !ok {
				if nt, ok := t[0].(pyTuple); !ok || len(nt) != 2 {
					return "", fmt.Errorf("npy: structured descr field name %s is not a string", pyRepr(t[0]))
				}
			}
			if _, err := descrString(t[1]); err != nil {
				return "", err
			}
			if len(t) == 3 {
				if _, ok := t[2].(pyTuple); !ok {
					if _, ok := t[2].(int); !ok {
						return "", fmt.Errorf("npy: structured descr field shape %s is not a tuple", pyRepr(t[2]))
					}
				}
			}
		}
		return pyRepr(d), nil
	}
	return "", fmt.Errorf("npy: descr is %s, not a string or a list", pyRepr(v))
}

// Python literal values: string, int, bool, nil (None), pyTuple, pyList,
// pyDict.
type (
	pyTuple []any
	pyList  []any
	pyDict  struct {
		keys []string
		vals []any
	}
)

// pyRepr formats a parsed value in Python syntax.
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case string:
		b.WriteString(pyQuote(x))
	case pyTuple:
		b.WriteByte('(')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		if len(x) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case pyList:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	case pyDict:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyQuote(k))
			b.WriteString(": ")
			writeRepr(b, x.vals[i])
		}
		b.WriteByte('}')
	}
}

// pyQuote returns s as a single-quoted Python string literal, escaping
// backslashes, quotes and non-printable bytes.
func pyQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// maxPyDepth bounds nesting so that hostile headers cannot exhaust the
// stack.
const maxPyDepth = 32

// pyParser parses the subset of Python literals that numpy writes in .npy
// headers.
type pyParser struct {
	s    string
	i    int
	base int
}

func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf("npy: header offset %d: %s", p.base+p.i, fmt.Sprintf(format, args...))
}

func (p *pyParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.i++
		default:
			return
		}
	}
}

func (p *pyParser) value(depth int) (any, error) {
	if depth > maxPyDepth {
		return nil, p.errorf("nested too deeply")
	}
	p.skipSpace()
	if p.i >= len(p.s) {
		return nil, p.errorf("unexpected end of header")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		var d pyDict
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return d, nil
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, p.errorf("dict key %s is not a string", pyRepr(k))
			}
			p.skipSpace()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.errorf("expected ':' after dict key")
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			d.keys = append(d.keys, ks)
			d.vals = append(d.vals, v)
			if done, err := p.sep('}'); err != nil || done {
				return d, err
			}
		}
	case c == '(' || c == '[':
		end := byte(')')
		if c == '[' {
			end = ']'
		}
		p.i++
		var xs []any
		trailingComma := false
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == end {
				p.i++
				break
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			xs = append(xs, v)
			p.skipSpace()
			trailingComma = p.i < len(p.s) && p.s[p.i] == ','
			if done, err := p.sep(end); err != nil {
				return nil, err
			} else if done {
				break
			}
		}
		if c == '[' {
			return pyList(xs), nil
		}
		if len(xs) == 1 && !trailingComma {
			return xs[0], nil // a parenthesised expression
		}
		return pyTuple(xs), nil
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || (c >= '0' && c <= '9'):
		return p.int()
	default:
		start := p.i
		for p.i < len(p.s) && isIdent(p.s[p.i]) {
			p.i++
		}
		switch w := p.s[start:p.i]; w {
		case "True":
			return true, nil
		case "False":
			return false, nil
		case "None":
			return nil, nil
		}
		p.i = start
		return nil, p.errorf("unexpected %q", p.s[p.i])
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// sep consumes a ',' or the closing byte end; done reports the latter.
func (p *pyParser) sep(end byte) (done bool, err error) {
	p.skipSpace()
	if p.i >= len(p.s) {
		return false, p.errorf("unexpected end of header, expected ',' or %q", end)
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		return false, nil
	case end:
		p.i++
		return true, nil
	}
	return false, p.errorf("expected ',' or %q, found %q", end, p.s[p.i])
}

func (p *pyParser) int() (any, error) {
	start := p.i
	if p.s[p.i] == '-' || p.s[p.i] == '+' {
		p.i++
	}
	d0 := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	// numpy may write Python 2 longs as "10L".
	lit := p.s[start:p.i]
	if p.i < len(p.s) && p.s[p.i] == 'L' {
		p.i++
	}
	if p.i == d0 {
		p.i = start
		return nil, p.errorf("malformed number")
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil || n > math.MaxInt || n < math.MinInt {
		p.i = start
		return nil, p.errorf("integer %s out of range", lit)
	}
	return int(n), nil
}

func (p *pyParser) str() (any, error) {
	q := p.s[p.i]
	start := p.i
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\n':
			p.i = start
			return nil, p.errorf("newline in string literal")
		case c == '\\':
			if p.i+1 >= len(p.s) {
				p.i = start
				return nil, p.errorf("unterminated string literal")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x':
				if p.i+2 > len(p.s) {
					p.i = start
					return nil, p.errorf("bad \\x escape")
				}
				v, err := strconv.ParseUint(p.s[p.i:p.i+2], 16, 8)
				if err != nil {
					p.i = start
					return nil, p.errorf("bad \\x escape")
				}
				b.WriteByte(byte(v))
				p.i += 2
			default:
				p.i -= 2
				return nil, p.errorf("unsupported escape \\%c", e)
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	p.i = start
	return nil, p.errorf("unterminated string literal")
}
