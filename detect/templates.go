package detect

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"codeberg.org/sbinet/npyio/npy"
	"codeberg.org/sbinet/npyio/npz"
)

// Templates are the universal temporal templates and the PCA basis of
// the spike features (Kilosort4's wTEMP and wPCA, kilosort4.md §6).
type Templates struct {
	// NT is the number of samples of every row.
	NT int
	// K is the number of temporal templates (rows of WTEMP).
	K int
	// P is the number of PCA components (rows of WPCA).
	P int
	// WTEMP holds the temporal templates, K×NT row-major, each row of
	// unit L2 norm when learned (a loaded file is used as given).
	WTEMP []float32
	// WPCA holds the feature basis, P×NT row-major, orthonormal rows when
	// learned.
	WPCA []float32
}

// check panics if the slices do not match the sizes.
func (tm *Templates) check() {
	if tm.NT < 1 || tm.K < 1 || tm.P < 1 || len(tm.WTEMP) != tm.K*tm.NT || len(tm.WPCA) != tm.P*tm.NT {
		panic(fmt.Sprintf("detect: templates K=%d P=%d nt=%d with %d wTEMP and %d wPCA values",
			tm.K, tm.P, tm.NT, len(tm.WTEMP), len(tm.WPCA)))
	}
}

// LoadTemplates reads user-supplied universal templates: path is either
// an .npz archive holding arrays wTEMP and wPCA (Kilosort4's wTEMP.npz
// layout) or a directory holding wTEMP.npy and wPCA.npy. Each array must
// be 2-D, float32 or float64, C or Fortran order, with nt columns (K×nt
// and P×nt), finite float32 values and no all-zero row. Errors name the
// file and, for a wrong shape, the shape found and the one expected.
func LoadTemplates(path string, nt int) (*Templates, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("detect: templates: %w", err)
	}
	var wt, wp []float32
	var kt, kp int
	if st.IsDir() {
		wt, kt, err = readNpyFile(filepath.Join(path, "wTEMP.npy"), "wTEMP", nt)
		if err != nil {
			return nil, err
		}
		wp, kp, err = readNpyFile(filepath.Join(path, "wPCA.npy"), "wPCA", nt)
		if err != nil {
			return nil, err
		}
	} else {
		r, err := npz.Open(path)
		if err != nil {
			return nil, fmt.Errorf("detect: templates file %s is not an .npz archive or a directory: %w", path, err)
		}
		defer r.Close()
		wt, kt, err = readNpzArray(r, path, "wTEMP", nt)
		if err != nil {
			return nil, err
		}
		wp, kp, err = readNpzArray(r, path, "wPCA", nt)
		if err != nil {
			return nil, err
		}
	}
	for _, a := range []struct {
		name string
		v    []float32
		rows int
	}{{"wTEMP", wt, kt}, {"wPCA", wp, kp}} {
		for i := range a.rows {
			zero := true
			for _, v := range a.v[i*nt : (i+1)*nt] {
				zero = zero && v == 0
			}
			if zero {
				return nil, fmt.Errorf("detect: templates %s: %s row %d is all zero; such a template detects nothing", path, a.name, i)
			}
		}
	}
	return &Templates{NT: nt, K: kt, P: kp, WTEMP: wt, WPCA: wp}, nil
}

func readNpyFile(file, name string, nt int) ([]float32, int, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, fmt.Errorf("detect: templates: %w", err)
	}
	defer f.Close()
	return readNpy(f, file, name, nt)
}

func readNpzArray(r *npz.Reader, file, name string, nt int) ([]float32, int, error) {
	key := ""
	for _, k := range r.Keys() {
		if k == name+".npy" || k == name {
			key = k
		}
	}
	if key == "" {
		return nil, 0, fmt.Errorf("detect: templates file %s has no array %s (arrays: %s)",
			file, name, strings.Join(r.Keys(), ", "))
	}
	rc, err := r.Open(key)
	if err != nil {
		return nil, 0, fmt.Errorf("detect: templates file %s: %w", file, err)
	}
	defer rc.Close()
	return readNpy(rc, file+":"+name, name, nt)
}

// readNpy reads one K×nt array (returned C-ordered, as float32) and K.
// The header is parsed by npyio; the payload is decoded here so that a
// truncated file is an error rather than zeros.
func readNpy(rd io.Reader, where, name string, nt int) ([]float32, int, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, 0, fmt.Errorf("detect: templates %s: %w", where, err)
	}
	r, err := npy.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, 0, fmt.Errorf("detect: templates %s: not a .npy array: %w", where, err)
	}
	h := r.Header.Descr
	shape := h.Shape
	if len(shape) != 2 || shape[1] != nt || shape[0] < 1 {
		return nil, 0, fmt.Errorf("detect: templates %s: %s has shape %s, want (K, %d): K ≥ 1 rows of %d samples",
			where, name, shapeString(shape), nt, nt)
	}
	dtype := strings.Trim(h.Type, `'"`)
	var order binary.ByteOrder
	switch {
	case len(dtype) == 3 && (dtype[0] == '<' || dtype[0] == '='):
		order = binary.LittleEndian
	case len(dtype) == 3 && dtype[0] == '>':
		order = binary.BigEndian
	}
	size := 0
	if order != nil {
		switch dtype[1:] {
		case "f4":
			size = 4
		case "f8":
			size = 8
		}
	}
	if size == 0 {
		return nil, 0, fmt.Errorf("detect: templates %s: %s has dtype %q, want float32 or float64", where, name, dtype)
	}
	hdr := 0
	switch r.Header.Major {
	case 1:
		hdr = 10 + int(binary.LittleEndian.Uint16(data[8:10]))
	default:
		hdr = 12 + int(binary.LittleEndian.Uint32(data[8:12]))
	}
	rows := shape[0]
	n := rows * nt
	if hdr > len(data) || len(data)-hdr < n*size {
		return nil, 0, fmt.Errorf("detect: templates %s: %s is truncated: %d bytes of data for a %s %s array of %d bytes",
			where, name, max(len(data)-hdr, 0), shapeString(shape), dtype, n*size)
	}
	payload := data[hdr:]
	out := make([]float32, n)
	for i := range rows {
		for j := range nt {
			e := i*nt + j
			if h.Fortran {
				e = j*rows + i
			}
			var v float64
			if size == 4 {
				v = float64(math.Float32frombits(order.Uint32(payload[4*e:])))
			} else {
				v = math.Float64frombits(order.Uint64(payload[8*e:]))
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
				return nil, 0, fmt.Errorf("detect: templates %s: %s[%d, %d] is %g, not a finite float32", where, name, i, j, v)
			}
			out[i*nt+j] = float32(v)
		}
	}
	return out, rows, nil
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
