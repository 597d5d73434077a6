package export

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
)

// NPYAppender writes a .npy file whose first dimension grows as rows are
// appended, so that per-spike arrays of any length are written without
// holding them in memory. The header is written with room for the
// largest first dimension and rewritten with the true one by Close; the
// file is a valid format-1.0 .npy (header padded to 64 bytes) only after
// Close succeeds.
type NPYAppender struct {
	path  string
	f     *os.File
	bw    *bufio.Writer
	descr string
	tail  []int
	row   int // elements per row
	rows  int
	hlen  int
	err   error
}

// CreateNPY creates the .npy file path for rows of shape tail (nothing for
// a 1-D array) of the element type of zero, a slice of a type WriteNPY
// takes (e.g. []float32(nil)).
func CreateNPY(path string, zero any, tail ...int) (*NPYAppender, error) {
	e, ok := describe(zero)
	if !ok {
		panic(fmt.Sprintf("export: CreateNPY of unsupported type %T", zero))
	}
	row := 1
	for _, d := range tail {
		if d < 0 {
			panic(fmt.Sprintf("export: CreateNPY with negative dimension in %v", tail))
		}
		row *= d
	}
	a := &NPYAppender{path: path, descr: "'" + e.descr + "'", tail: slices.Clone(tail), row: row}
	h, err := npyHeader(a.descr, false, append([]int{math.MaxInt64}, tail...))
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
	return a, nil
}

// Append writes whole rows: data must be a slice of the file's element
// type whose length is a multiple of the row size. It panics on a type or
// length mismatch.
func (a *NPYAppender) Append(data any) error {
	if a.err != nil {
		return a.err
	}
	e, ok := describe(data)
	if !ok || "'"+e.descr+"'" != a.descr {
		panic(fmt.Sprintf("export: Append of %T to a %s array", data, a.descr))
	}
	if a.row == 0 || e.n%a.row != 0 {
		if a.row == 0 && e.n == 0 {
			return nil
		}
		panic(fmt.Sprintf("export: Append of %d values to rows of %d", e.n, a.row))
	}
	if e.raw != nil {
		_, a.err = a.bw.Write(e.raw)
	} else {
		buf := make([]byte, e.size)
		for i := 0; i < e.n && a.err == nil; i++ {
			e.put(buf, i)
			_, a.err = a.bw.Write(buf)
		}
	}
	if a.err != nil {
		a.err = fmt.Errorf("writing %s: %w", a.path, a.err)
		return a.err
	}
	a.rows += e.n / max(a.row, 1)
	return nil
}

// Rows returns the number of rows appended.
func (a *NPYAppender) Rows() int { return a.rows }

// Close writes the final header and closes the file.
func (a *NPYAppender) Close() error {
	if a.f == nil {
		return a.err
	}
	defer func() { a.f = nil }()
	if a.err == nil {
		a.err = a.bw.Flush()
	}
	if a.err == nil {
		h, err := npyHeader(a.descr, false, append([]int{a.rows}, a.tail...))
		if err == nil {
			// Pad the dict to the reserved length; it stays 64-aligned.
			pad := a.hlen - len(h)
			h = append(h[:len(h)-1], make([]byte, pad+1)...)
			for i := len(h) - pad - 1; i < len(h)-1; i++ {
				h[i] = ' '
			}
			h[len(h)-1] = '\n'
			binary.LittleEndian.PutUint16(h[8:], uint16(a.hlen-10))
			_, err = a.f.WriteAt(h, 0)
		}
		a.err = err
	}
	if cerr := a.f.Close(); a.err == nil {
		a.err = cerr
	}
	if a.err != nil {
		return fmt.Errorf("writing %s: %w", a.path, a.err)
	}
	return nil
}
