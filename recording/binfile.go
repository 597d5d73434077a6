package recording

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"unsafe"
)

// hostLittleEndian reports whether int16 values are stored little-endian
// in memory, so that file bytes can be read straight into an []int16.
var hostLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// decodeChunk is the size in bytes of the reusable buffer of the decoding
// read path.
const decodeChunk = 1 << 20

// binFile is a flat little-endian file of interleaved samples (int16,
// or another [DType] converted to int16 on reading), optionally after a
// header, read with ReadAt. It is safe for concurrent use.
type binFile struct {
	f        *os.File
	name     string
	channels int
	samples  int64
	offset   int64 // bytes before sample 0
	dtype    DType
	scale    float64 // float32 only: counts per stored unit

	// direct selects the zero-copy read path (little-endian hosts).
	direct bool

	mu  sync.Mutex // guards buf
	buf []byte
}

// openBinFile opens name as an int16 file of the given channel count with
// header bytes before the data, checking that the data is a whole number
// of time points.
func openBinFile(name string, channels int, header int64) (*binFile, error) {
	return openBinFileType(name, channels, header, Int16, 1, false)
}

// openBinFileType is openBinFile for samples of type dt (scale: counts
// per stored unit of a float32 file). With trim, a partial time point at
// the end is ignored instead of being an error.
func openBinFileType(name string, channels int, header int64, dt DType, scale float64, trim bool) (*binFile, error) {
	if channels <= 0 {
		return nil, fmt.Errorf("recording: %s: %d channels: must be positive", name, channels)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("recording: %w", err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("recording: %s is a directory, not a binary file", name)
	}
	size := st.Size() - header
	row := int64(dt.Size() * channels)
	if size < 0 || (size%row != 0 && !trim) {
		f.Close()
		return nil, fmt.Errorf("recording: %s: %d bytes of data is not a whole number of %d-channel %s time points (%d bytes each): wrong channel count or truncated file",
			name, size, channels, dt, row)
	}
	return &binFile{f: f, name: name, channels: channels, samples: size / row, offset: header,
		dtype: dt, scale: scale, direct: hostLittleEndian && dt == Int16}, nil
}

// checkRead validates a ReadInt16 request: a short dst panics, a range
// outside the file is an error naming the file.
func checkRead(name string, channels int, samples int64, dst []int16, start int64, n int) error {
	if n < 0 {
		panic(fmt.Sprintf("recording: ReadInt16 of %d samples", n))
	}
	if len(dst) < n*channels {
		panic(fmt.Sprintf("recording: ReadInt16 destination holds %d values, need %d samples × %d channels", len(dst), n, channels))
	}
	if start < 0 || start > samples || int64(n) > samples-start {
		return fmt.Errorf("recording: %s: read of samples [%d, %d) outside the recording's %d samples", name, start, start+int64(n), samples)
	}
	return nil
}

func (b *binFile) readInt16(dst []int16, start int64, n int) error {
	if err := checkRead(b.name, b.channels, b.samples, dst, start, n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if b.direct {
		return b.readDirect(dst[:n*b.channels], start)
	}
	return b.readDecode(dst[:n*b.channels], start)
}

// readDirect reads the file bytes straight into dst's memory; valid only
// on little-endian hosts.
func (b *binFile) readDirect(dst []int16, start int64) error {
	p := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 2*len(dst))
	off := b.offset + start*int64(2*b.channels)
	if _, err := b.f.ReadAt(p, off); err != nil {
		return b.readErr(start, len(dst), err)
	}
	return nil
}

// readDecode is the portable path and the reference for readDirect: it
// reads through a reusable byte buffer and decodes little-endian int16.
func (b *binFile) readDecode(dst []int16, start int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf == nil {
		b.buf = make([]byte, decodeChunk)
	}
	sz := b.dtype.Size()
	off := b.offset + start*int64(sz*b.channels)
	for done := 0; done < len(dst); {
		m := min(len(dst)-done, len(b.buf)/sz)
		p := b.buf[:sz*m]
		if _, err := b.f.ReadAt(p, off+int64(sz*done)); err != nil {
			return b.readErr(start, len(dst), err)
		}
		d := dst[done : done+m]
		switch b.dtype {
		case Int16:
			for i := range d {
				d[i] = int16(binary.LittleEndian.Uint16(p[2*i:]))
			}
		case Uint16:
			// Intan and others store unsigned codes centred on 32768.
			for i := range d {
				d[i] = int16(int32(binary.LittleEndian.Uint16(p[2*i:])) - 32768)
			}
		case Float32:
			for i := range d {
				v := math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return b.nonFinite(v, start*int64(b.channels)+int64(done+i))
				}
				d[i] = floatToCount(v, b.scale)
			}
		}
		done += m
	}
	return nil
}

// nonFinite is the error for a NaN or infinite float32 value v at value
// index i of the data (sample i / channels, channel i % channels).
func (b *binFile) nonFinite(v float32, i int64) error {
	return fmt.Errorf("recording: %s: sample %d, channel %d is %v: float32 input must be finite (NaN and ±Inf have no int16 count; "+
		"replace them, e.g. by 0, before sorting)", b.name, i/int64(b.channels), i%int64(b.channels), v)
}

// checkFinite reads a float32 file from start to end and returns the
// error of its first NaN or infinite value, if any: such data are refused
// when the file is opened, before any work, with their first position.
func (b *binFile) checkFinite() error {
	buf := make([]byte, decodeChunk)
	total := b.samples * int64(b.channels)
	for done := int64(0); done < total; {
		m := int(min(total-done, int64(len(buf)/4)))
		p := buf[:4*m]
		if _, err := b.f.ReadAt(p, b.offset+4*done); err != nil {
			return b.readErr(done/int64(b.channels), m, err)
		}
		for i := 0; i < m; i++ {
			u := binary.LittleEndian.Uint32(p[4*i:])
			if u&0x7f800000 == 0x7f800000 { // exponent all ones: Inf or NaN
				return b.nonFinite(math.Float32frombits(u), done+int64(i))
			}
		}
		done += int64(m)
	}
	return nil
}

// floatToCount converts a stored float32 sample to an int16 count:
// v·scale rounded to nearest (half away from zero), clipped to the int16
// range; NaN becomes 0.
func floatToCount(v float32, scale float64) int16 {
	x := math.Round(float64(v) * scale)
	switch {
	case x != x:
		return 0
	case x > math.MaxInt16:
		return math.MaxInt16
	case x < math.MinInt16:
		return math.MinInt16
	}
	return int16(x)
}

func (b *binFile) readErr(start int64, values int, err error) error {
	end := start + int64(values/b.channels)
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("recording: %s: samples [%d, %d): file ended early (was it truncated after opening?): %w", b.name, start, end, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("recording: %s: samples [%d, %d): %w", b.name, start, end, err)
}

func (b *binFile) close() error { return b.f.Close() }

// DType is the sample type of a raw file. Every reader hands out int16
// counts: uint16 is shifted by −32768, float32 is multiplied by a scale
// and rounded (see [OpenRawOptions]).
type DType int

// The sample types of raw files.
const (
	Int16 DType = iota
	Uint16
	Float32
)

// ParseDType returns the DType of a numpy name: "int16" (also "<i2",
// "i2"), "uint16" ("<u2", "u2") or "float32" ("<f4", "f4").
func ParseDType(s string) (DType, error) {
	switch s {
	case "int16", "<i2", "i2", "":
		return Int16, nil
	case "uint16", "<u2", "u2":
		return Uint16, nil
	case "float32", "<f4", "f4":
		return Float32, nil
	}
	return 0, fmt.Errorf("recording: dtype %q: want int16, uint16 or float32", s)
}

// String returns the numpy name.
func (d DType) String() string {
	switch d {
	case Uint16:
		return "uint16"
	case Float32:
		return "float32"
	}
	return "int16"
}

// Size returns the bytes per sample.
func (d DType) Size() int {
	if d == Float32 {
		return 4
	}
	return 2
}
