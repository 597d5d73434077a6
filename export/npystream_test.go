package export

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"codeberg.org/sbinet/npyio"
)

func TestNPYAppender(t *testing.T) {
	dir := t.TempDir()
	for _, rows := range []int{0, 1, 7, 1000} {
		path := filepath.Join(dir, "a.npy")
		a, err := CreateNPY(path, []float32(nil), 6, 10)
		if err != nil {
			t.Fatal(err)
		}
		var want []float32
		for r := 0; r < rows; r++ {
			row := make([]float32, 60)
			for i := range row {
				row[i] = float32(r*60 + i)
			}
			want = append(want, row...)
			if err := a.Append(row); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		descr, fortran, shape, err := ReadNPYHeader(f)
		f.Close()
		if err != nil || descr != "<f4" || fortran || !reflect.DeepEqual(shape, []int{rows, 6, 10}) {
			t.Fatalf("rows %d: header %q %v %v %v", rows, descr, fortran, shape, err)
		}
		f, _ = os.Open(path)
		var got []float32
		err = npyio.Read(f, &got)
		f.Close()
		if err != nil || len(got) != len(want) || (rows > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("rows %d: read back %d values, %v", rows, len(got), err)
		}
		b, _ := os.ReadFile(path)
		hl := 10 + int(b[8]) + int(b[9])<<8
		if hl%64 != 0 {
			t.Fatalf("header length %d not 64-aligned", hl)
		}
	}
}

func TestNPYAppenderPanics(t *testing.T) {
	a, err := CreateNPY(filepath.Join(t.TempDir(), "b.npy"), []int64(nil), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for name, f := range map[string]func(){
		"type":   func() { a.Append([]int32{1, 2, 3}) },
		"length": func() { a.Append([]int64{1, 2}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s mismatch did not panic", name)
				}
			}()
			f()
		}()
	}
}
