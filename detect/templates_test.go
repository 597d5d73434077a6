package detect

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// npyBytes encodes a 2-D array (given row-major in vals) as a version-1
// .npy file with dtype "<f4", "<f8", ">f8" or "<i2", in C or Fortran order.
func npyBytes(dtype string, fortran bool, rows, cols int, vals []float64) []byte {
	shape := fmt.Sprintf("(%d, %d)", rows, cols)
	if rows < 0 {
		shape = fmt.Sprintf("(%d,)", cols)
		rows = 1
	}
	fo := "False"
	if fortran {
		fo = "True"
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", dtype, fo, shape)
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	var order binary.ByteOrder = binary.LittleEndian
	if dtype[0] == '>' {
		order = binary.BigEndian
	}
	for e := range rows * cols {
		i, j := e/cols, e%cols
		if fortran {
			i, j = e%rows, e/rows
		}
		v := vals[i*cols+j]
		switch dtype[1:] {
		case "f4":
			binary.Write(&b, order, float32(v))
		case "f8":
			binary.Write(&b, order, v)
		case "i2":
			binary.Write(&b, order, int16(v))
		}
	}
	return b.Bytes()
}

func writeNpz(t testing.TB, path string, files map[string][]byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for name, data := range files {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func seqVals(rows, cols int, off float64) []float64 {
	v := make([]float64, rows*cols)
	for i := range v {
		v[i] = off + float64(i)/7
	}
	return v
}

func TestLoadTemplates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	nt := 61
	wt, wp := seqVals(6, nt, 1), seqVals(4, nt, -3)
	check := func(t *testing.T, tm *Templates, k, p int) {
		t.Helper()
		if tm.K != k || tm.P != p || tm.NT != nt {
			t.Fatalf("K %d P %d nt %d", tm.K, tm.P, tm.NT)
		}
		for i, v := range wt[:k*nt] {
			if tm.WTEMP[i] != float32(v) {
				t.Fatalf("wTEMP[%d] = %g, want %g", i, tm.WTEMP[i], v)
			}
		}
		for i, v := range wp[:p*nt] {
			if tm.WPCA[i] != float32(v) {
				t.Fatalf("wPCA[%d] = %g, want %g", i, tm.WPCA[i], v)
			}
		}
	}
	t.Run("npz_float32_C", func(t *testing.T) {
		path := filepath.Join(dir, "c.npz")
		writeNpz(t, path, map[string][]byte{
			"wTEMP.npy": npyBytes("<f4", false, 6, nt, wt),
			"wPCA.npy":  npyBytes("<f4", false, 4, nt, wp),
		})
		tm, err := LoadTemplates(path, nt)
		if err != nil {
			t.Fatal(err)
		}
		check(t, tm, 6, 4)
	})
	t.Run("npz_fortran_mixed", func(t *testing.T) {
		path := filepath.Join(dir, "f.npz")
		writeNpz(t, path, map[string][]byte{
			"wTEMP.npy": npyBytes("<f4", false, 6, nt, wt),
			"wPCA.npy":  npyBytes("<f8", true, 4, nt, wp), // as Kilosort's wPCA
		})
		tm, err := LoadTemplates(path, nt)
		if err != nil {
			t.Fatal(err)
		}
		check(t, tm, 6, 4)
	})
	t.Run("dir_bigendian_float64", func(t *testing.T) {
		d := filepath.Join(dir, "pair")
		os.Mkdir(d, 0o755)
		os.WriteFile(filepath.Join(d, "wTEMP.npy"), npyBytes(">f8", true, 3, nt, wt), 0o644)
		os.WriteFile(filepath.Join(d, "wPCA.npy"), npyBytes("<f8", false, 1, nt, wp), 0o644)
		tm, err := LoadTemplates(d, nt)
		if err != nil {
			t.Fatal(err)
		}
		check(t, tm, 3, 1)
	})

	bad := []struct {
		name  string
		files map[string][]byte
		want  []string
	}{
		{"transposed", map[string][]byte{
			"wTEMP.npy": npyBytes("<f4", false, nt, 6, wt),
			"wPCA.npy":  npyBytes("<f4", false, 4, nt, wp),
		}, []string{"bad_transposed.npz", "wTEMP", "(61, 6)", "want (K, 61)"}},
		{"1d", map[string][]byte{
			"wTEMP.npy": npyBytes("<f4", false, 6, nt, wt),
			"wPCA.npy":  npyBytes("<f4", false, -1, nt, wp),
		}, []string{"bad_1d.npz", "wPCA", "(61,)"}},
		{"missing", map[string][]byte{
			"wTEMP.npy": npyBytes("<f4", false, 6, nt, wt),
		}, []string{"bad_missing.npz", "no array wPCA", "wTEMP.npy"}},
		{"int16", map[string][]byte{
			"wTEMP.npy": npyBytes("<i2", false, 6, nt, wt),
			"wPCA.npy":  npyBytes("<f4", false, 4, nt, wp),
		}, []string{"bad_int16.npz", "dtype", "<i2"}},
		{"truncated", map[string][]byte{
			"wTEMP.npy": npyBytes("<f4", false, 6, nt, wt)[:500],
			"wPCA.npy":  npyBytes("<f4", false, 4, nt, wp),
		}, []string{"bad_truncated.npz", "truncated"}},
		{"nan", map[string][]byte{
			"wTEMP.npy": npyBytes("<f4", false, 6, nt, append([]float64{math.NaN()}, wt[1:]...)),
			"wPCA.npy":  npyBytes("<f4", false, 4, nt, wp),
		}, []string{"bad_nan.npz", "wTEMP[0, 0]", "NaN"}},
		{"zero row", map[string][]byte{
			"wTEMP.npy": npyBytes("<f4", false, 6, nt, append(make([]float64, nt), wt[nt:]...)),
			"wPCA.npy":  npyBytes("<f4", false, 4, nt, wp),
		}, []string{"bad_zero row.npz", "wTEMP row 0 is all zero"}},
		{"float32 overflow", map[string][]byte{
			"wTEMP.npy": npyBytes("<f8", false, 6, nt, append([]float64{1e300}, wt[1:]...)),
			"wPCA.npy":  npyBytes("<f4", false, 4, nt, wp),
		}, []string{"wTEMP[0, 0]", "not a finite float32"}},
		{"garbage", map[string][]byte{
			"wTEMP.npy": []byte("not an array"),
			"wPCA.npy":  npyBytes("<f4", false, 4, nt, wp),
		}, []string{"bad_garbage.npz", "not a .npy"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad_"+c.name+".npz")
			writeNpz(t, path, c.files)
			_, err := LoadTemplates(path, nt)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	t.Run("not_npz", func(t *testing.T) {
		path := filepath.Join(dir, "plain.txt")
		os.WriteFile(path, []byte("hello"), 0o644)
		if _, err := LoadTemplates(path, nt); err == nil || !strings.Contains(err.Error(), "plain.txt") {
			t.Errorf("error %v", err)
		}
		if _, err := LoadTemplates(filepath.Join(dir, "absent.npz"), nt); err == nil || !strings.Contains(err.Error(), "absent.npz") {
			t.Errorf("error %v", err)
		}
		if _, err := LoadTemplates(dir, nt); err == nil || !strings.Contains(err.Error(), "wTEMP.npy") {
			t.Errorf("error %v for a directory without the files", err)
		}
	})
}

// TestLoadedTemplatesDetect checks that loaded templates drive a detector.
func TestLoadedTemplatesDetect(t *testing.T) {
	t.Parallel()
	prm := DefaultParams()
	src := synthTemplates(6, 6, prm.NT, prm.NT0Min)
	wt := make([]float64, len(src.WTEMP))
	for i, v := range src.WTEMP {
		wt[i] = float64(v)
	}
	wp := make([]float64, len(src.WPCA))
	for i, v := range src.WPCA {
		wp[i] = float64(v)
	}
	path := filepath.Join(t.TempDir(), "wTEMP.npz")
	writeNpz(t, path, map[string][]byte{
		"wTEMP.npy": npyBytes("<f4", false, 6, prm.NT, wt),
		"wPCA.npy":  npyBytes("<f4", true, 6, prm.NT, wp),
	})
	tm, err := LoadTemplates(path, prm.NT)
	if err != nil {
		t.Fatal(err)
	}
	checkTemplates(t, tm)
	for i := range tm.WPCA {
		if tm.WPCA[i] != src.WPCA[i] || (i < len(tm.WTEMP) && tm.WTEMP[i] != src.WTEMP[i]) {
			t.Fatalf("value %d differs after the round trip", i)
		}
	}
}

// FuzzLoadTemplates feeds arbitrary bytes to the .npz loader as a file:
// it must return templates that satisfy the documented checks or an
// error naming the file, never panic.
func FuzzLoadTemplates(f *testing.F) {
	nt := 5
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.npz")
	writeNpz(f, seed, map[string][]byte{
		"wTEMP.npy": npyBytes("<f4", false, 2, nt, seqVals(2, nt, 1)),
		"wPCA.npy":  npyBytes("<f8", true, 1, nt, seqVals(1, nt, -3)),
	})
	b, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "t.npz")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tm, err := LoadTemplates(path, nt)
		if err != nil {
			if !strings.Contains(err.Error(), "t.npz") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if tm.NT != nt || tm.K < 1 || tm.P < 1 || len(tm.WTEMP) != tm.K*nt || len(tm.WPCA) != tm.P*nt {
			t.Fatalf("templates K %d P %d nt %d with %d and %d values", tm.K, tm.P, tm.NT, len(tm.WTEMP), len(tm.WPCA))
		}
		for _, v := range append(append([]float32{}, tm.WTEMP...), tm.WPCA...) {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("non-finite value %g accepted", v)
			}
		}
	})
}
