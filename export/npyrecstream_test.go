package export

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestNPYRecordAppender appends random peak records in uneven pieces
// (including empty ones and pieces larger than the interleaving buffer)
// and checks the file is byte for byte what WriteNPYRecords writes.
func TestNPYRecordAppender(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	for _, n := range []int{0, 1, 7, recordBuf/28 + 13} {
		s := make([]int64, n)
		c := make([]int32, n)
		a := make([]float64, n)
		seg := make([]uint8, n)
		for i := range n {
			s[i], c[i], a[i], seg[i] = rng.Int64(), rng.Int32(), rng.NormFloat64(), uint8(rng.IntN(256))
		}
		cols := []Column{{"sample_index", s}, {"channel_index", c}, {"amplitude", a}, {"segment_index", seg}}
		var want bytes.Buffer
		if err := WriteNPYRecords(&want, cols...); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "peaks.npy")
		ra, err := CreateNPYRecords(path, Column{"sample_index", []int64(nil)}, Column{"channel_index", []int32(nil)},
			Column{"amplitude", []float64(nil)}, Column{"segment_index", []uint8(nil)})
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < n || lo == 0; {
			hi := min(n, lo+rng.IntN(n/3+2))
			if err := ra.Append(s[lo:hi], c[lo:hi], a[lo:hi], seg[lo:hi]); err != nil {
				t.Fatal(err)
			}
			if lo = hi; n == 0 {
				break
			}
		}
		if ra.Rows() != n {
			t.Errorf("%d rows, want %d", ra.Rows(), n)
		}
		if err := ra.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("n = %d: streamed file (%d bytes) differs from WriteNPYRecords (%d bytes)", n, len(got), want.Len())
		}
	}
}

func TestNPYRecordAppenderPanics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.npy")
	ra, err := CreateNPYRecords(path, Column{"x", []float64(nil)}, Column{"y", []float64(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	for name, f := range map[string]func(){
		"type":    func() { ra.Append([]float32{1}, []float64{1}) },
		"length":  func() { ra.Append([]float64{1, 2}, []float64{1}) },
		"columns": func() { ra.Append([]float64{1}) },
		"no cols": func() { CreateNPYRecords(path) },
		"repeat":  func() { CreateNPYRecords(path, Column{"x", []int8(nil)}, Column{"x", []int8(nil)}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
