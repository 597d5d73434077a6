package detect

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"dspk/export"

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

// readNpy reads one K×nt array (returned C-ordered, as float32) and K
// with export's .npy reader, which refuses a truncated payload.
func readNpy(rd io.Reader, where, name string, nt int) ([]float32, int, error) {
	a, err := export.ReadNPY(rd)
	if err != nil {
		return nil, 0, fmt.Errorf("detect: templates %s: %s: %w", where, name, err)
	}
	shape := a.Shape
	if len(shape) != 2 || shape[1] != nt || shape[0] < 1 {
		return nil, 0, fmt.Errorf("detect: templates %s: %s has shape %s, want (K, %d): K ≥ 1 rows of %d samples",
			where, name, a.ShapeString(), nt, nt)
	}
	if d := a.Descr[1:]; d != "f4" && d != "f8" {
		return nil, 0, fmt.Errorf("detect: templates %s: %s has dtype %q, want float32 or float64", where, name, a.Descr)
	}
	v, err := a.Float64()
	if err != nil {
		return nil, 0, fmt.Errorf("detect: templates %s: %s: %w", where, name, err)
	}
	out := make([]float32, len(v))
	for e, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxFloat32 {
			return nil, 0, fmt.Errorf("detect: templates %s: %s[%d, %d] is %g, not a finite float32", where, name, e/nt, e%nt, x)
		}
		out[e] = float32(x)
	}
	return out, shape[0], nil
}
