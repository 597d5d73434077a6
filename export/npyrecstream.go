package export

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strings"
)

// NPYRecordAppender writes a one-dimensional .npy array of a structured
// dtype whose length grows as records are appended, the streamed
// counterpart of [WriteNPYRecords]: a file written by appending the same
// columns is byte for byte the one WriteNPYRecords writes whenever the
// header of the final length pads to the same size (always for fewer
// than 10¹⁶ records of a header under 160 characters, such as
// SpikeInterface's peak dtype). The file is valid only after Close.
type NPYRecordAppender struct {
	a     *NPYAppender
	names []string
	infos []elemInfo // element type of each field (n is unused)
	rec   int        // bytes per record
	buf   []byte
}

// CreateNPYRecords creates the .npy file path for records whose fields
// are cols in order, packed without padding; each column's Data is a
// slice (e.g. []int64(nil)) giving the field's type. It panics on the
// misuse [WriteNPYRecords] panics on.
func CreateNPYRecords(path string, cols ...Column) (*NPYRecordAppender, error) {
	if len(cols) == 0 {
		panic("export: CreateNPYRecords with no columns")
	}
	r := &NPYRecordAppender{}
	var descr strings.Builder
	descr.WriteByte('[')
	seen := map[string]bool{}
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
		r.names = append(r.names, c.Name)
		r.infos = append(r.infos, e)
		r.rec += e.size
		if j > 0 {
			descr.WriteString(", ")
		}
		fmt.Fprintf(&descr, "('%s', '%s')", c.Name, e.descr)
	}
	descr.WriteByte(']')
	a := &NPYAppender{path: path, descr: descr.String(), row: 1}
	h, err := npyHeader(a.descr, false, []int{math.MaxInt64})
	if err != nil {
		return nil, err
	}
	a.hlen = len(h)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	a.f = f
	a.bw = bufio.NewWriterSize(f, 1<<20)
	if _, err := a.bw.Write(make([]byte, a.hlen)); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	r.a = a
	return r, nil
}

// Append writes one record per element of the columns, which are given
// in the order of the fields, each a slice of its field's type, all of
// one length. It panics on a type, count or length mismatch.
func (r *NPYRecordAppender) Append(cols ...any) error {
	a := r.a
	if a.err != nil {
		return a.err
	}
	if len(cols) != len(r.infos) {
		panic(fmt.Sprintf("export: Append of %d columns to records of %d fields", len(cols), len(r.infos)))
	}
	infos := make([]elemInfo, len(cols))
	for j, c := range cols {
		e, ok := describe(c)
		if !ok || e.descr != r.infos[j].descr {
			panic(fmt.Sprintf("export: Append of %T to field %q of type %s", c, r.names[j], r.infos[j].descr))
		}
		if e.n != infos[0].n && j > 0 {
			panic(fmt.Sprintf("export: field %q has %d values but field %q has %d", r.names[j], e.n, r.names[0], infos[0].n))
		}
		infos[j] = e
	}
	n := infos[0].n
	if n == 0 {
		return nil
	}
	per := max(1, recordBuf/r.rec)
	for lo := 0; lo < n; lo += per {
		hi := min(n, lo+per)
		need := (hi - lo) * r.rec
		if cap(r.buf) < need {
			r.buf = make([]byte, need)
		}
		b := r.buf[:need]
		o := 0
		for _, e := range infos {
			if e.raw != nil {
				interleave(b, e.raw[lo*e.size:hi*e.size], e.size, r.rec, o)
			} else {
				for i := lo; i < hi; i++ {
					e.put(b[(i-lo)*r.rec+o:], i)
				}
			}
			o += e.size
		}
		if _, err := a.bw.Write(b); err != nil {
			a.err = fmt.Errorf("writing %s: %w", a.path, err)
			return a.err
		}
	}
	a.rows += n
	return nil
}

// Rows returns the number of records appended.
func (r *NPYRecordAppender) Rows() int { return r.a.rows }

// Close writes the final header and closes the file.
func (r *NPYRecordAppender) Close() error { return r.a.Close() }
