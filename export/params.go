package export

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParamsPy holds the entries of Phy's params.py.
type ParamsPy struct {
	// DatPath lists the raw data files, relative to the output folder or
	// absolute. One path is written as a string, none or several as a
	// list (Phy needs the key even when the list is empty).
	DatPath []string
	// NChannelsDat is the total number of interleaved channels in the
	// raw file, counting non-site channels such as the SpikeGLX sync
	// word (385 for a Neuropixels AP file).
	NChannelsDat int
	// DType is the numpy name of the raw sample type, e.g. "int16".
	DType string
	// Offset is the number of header bytes before the samples.
	Offset int
	// SampleRate is the sampling rate in Hz.
	SampleRate float64
	// HPFiltered says whether the raw file is already high-pass filtered.
	HPFiltered bool
}

// WriteParamsPy writes p as Phy's params.py at path, one "key = value" line
// per entry in Python literal syntax, ASCII only (see [pyQuoteASCII]):
//
//	dat_path = 'recording.imec0.ap.bin'
//	n_channels_dat = 385
//	dtype = 'int16'
//	offset = 0
//	sample_rate = 30000.0
//	hp_filtered = False
//
// It returns an error naming the file if an entry is invalid (no channels,
// an empty or non-identifier dtype, a negative offset, a sample rate that
// is not positive and finite) or the file cannot be written.
func WriteParamsPy(path string, p ParamsPy) error {
	b, err := formatParamsPy(p)
	if err != nil {
		return fmt.Errorf("export: params.py %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o666); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

func formatParamsPy(p ParamsPy) ([]byte, error) {
	if p.NChannelsDat < 1 {
		return nil, fmt.Errorf("n_channels_dat %d is not positive", p.NChannelsDat)
	}
	if p.DType == "" || strings.IndexFunc(p.DType, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0 {
		return nil, fmt.Errorf("dtype %q is not a numpy type name", p.DType)
	}
	if p.Offset < 0 {
		return nil, fmt.Errorf("offset %d is negative", p.Offset)
	}
	if !(p.SampleRate > 0) || math.IsInf(p.SampleRate, 0) {
		return nil, fmt.Errorf("sample_rate %g is not positive and finite", p.SampleRate)
	}
	var b strings.Builder
	b.WriteString("dat_path = ")
	if len(p.DatPath) == 1 {
		b.WriteString(pyQuoteASCII(p.DatPath[0]))
	} else {
		b.WriteByte('[')
		for i, s := range p.DatPath {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyQuoteASCII(s))
		}
		b.WriteByte(']')
	}
	fmt.Fprintf(&b, "\nn_channels_dat = %d\n", p.NChannelsDat)
	fmt.Fprintf(&b, "dtype = %s\n", pyQuoteASCII(p.DType))
	fmt.Fprintf(&b, "offset = %d\n", p.Offset)
	fmt.Fprintf(&b, "sample_rate = %s\n", pyFloat(p.SampleRate))
	hp := "False"
	if p.HPFiltered {
		hp = "True"
	}
	fmt.Fprintf(&b, "hp_filtered = %s\n", hp)
	return []byte(b.String()), nil
}

// pyQuoteASCII quotes s as a Python string literal made of ASCII
// characters only, so that the file reads the same whatever encoding
// Python opens it with (phylib and SpikeInterface read params.py with the
// locale's encoding). Non-ASCII characters are written as \xNN, \uNNNN
// or \UNNNNNNNN escapes; a byte that is not part of valid UTF-8 (a path
// in another encoding) becomes \udcNN, the lone surrogate Python's
// os.fsdecode gives that byte (surrogateescape), so the path encodes back
// to the same bytes on POSIX.
func pyQuoteASCII(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\udc%02x`, s[i])
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
		case r < 0x80:
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}

// pyFloat formats a finite float as Python's repr does: the shortest
// decimal that reads back exactly, always with a '.' or an exponent,
// switching to exponent form below 1e-4 and from 1e16.
func pyFloat(v float64) string {
	a := math.Abs(v)
	if a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(v, 'e', -1, 64) // 1e+16, 1.5e-07 as in Python
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// WriteJSON writes v as indented JSON (two spaces, a final newline) to a
// new file at path; errors name the file.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("export: %s: %w", path, err)
	}
	b = append(b, '\n')
	if err := os.WriteFile(path, b, 0o666); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
