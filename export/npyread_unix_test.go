//go:build unix

package export

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestReadNPYFilePipe reads an array through a named pipe, whose size
// (0) says nothing of its data.
func TestReadNPYFilePipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.npy")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	var b bytes.Buffer
	if err := WriteNPY(&b, []int{3}, []float32{1, -2, 3.5}); err != nil {
		t.Fatal(err)
	}
	go func() {
		// Opening for writing waits for the reader.
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			f.Write(b.Bytes())
			f.Close()
		}
	}()
	a, err := ReadNPYFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := a.Float32(); err != nil || !slices.Equal(got, []float32{1, -2, 3.5}) {
		t.Errorf("got %v, %v", got, err)
	}
}
