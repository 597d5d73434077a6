package stream

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// frames returns n frames of nf channels, value 100·t + c, as bytes.
func frames(n, nf int) []byte {
	b := make([]byte, 2*n*nf)
	for t := range n {
		for c := range nf {
			binary.LittleEndian.PutUint16(b[2*(t*nf+c):], uint16(int16(100*t+c)))
		}
	}
	return b
}

// readAll drains src in reads of up to 4 frames and checks the values.
func readAll(t *testing.T, src Source, nf int) int {
	t.Helper()
	buf := make([]int16, 4*nf)
	total := 0
	for {
		n, err := src.Read(buf)
		for i := range n * nf {
			if want := int16(100*(total+i/nf) + i%nf); buf[i] != want {
				t.Fatalf("frame %d channel %d: %d, want %d", total+i/nf, i%nf, buf[i], want)
			}
		}
		total += n
		if errors.Is(err, io.EOF) {
			return total
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("a read returned no frame and no error")
		}
	}
}

// TestReaderSource reads frames that arrive one byte at a time, and
// refuses a stream that ends inside a frame.
func TestReaderSource(t *testing.T) {
	const nf = 3
	src := &readerSource{r: iotest.OneByteReader(bytes.NewReader(frames(11, nf))), name: "test", nf: nf}
	if n := readAll(t, src, nf); n != 11 {
		t.Errorf("%d frames, want 11", n)
	}
	cut := frames(2, nf)[:2*nf+3]
	src = &readerSource{r: bytes.NewReader(cut), name: "cut", nf: nf}
	buf := make([]int16, 4*nf)
	if n, err := src.Read(buf); n != 1 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	if _, err := src.Read(buf); err == nil || !strings.Contains(err.Error(), "inside a frame") {
		t.Errorf("a stream ending inside a frame: %v", err)
	}
}

// TestRealtime checks the pacing: 300 frames at 3 kHz take 0.1 s.
func TestRealtime(t *testing.T) {
	const nf = 2
	path := filepath.Join(t.TempDir(), "r.bin")
	if err := os.WriteFile(path, frames(300, nf), 0o666); err != nil {
		t.Fatal(err)
	}
	src, err := OpenSource(context.Background(), path, nf, SourceOptions{Realtime: true, Rate: 3000, Packet: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	start := time.Now()
	if n := readAll(t, src, nf); n != 300 {
		t.Errorf("%d frames, want 300", n)
	}
	if d := time.Since(start); d < 95*time.Millisecond {
		t.Errorf("300 frames at 3 kHz delivered in %v", d)
	}
}

// TestFollow reads a file that grows while it is read, and ends when it
// has not grown for the idle time.
func TestFollow(t *testing.T) {
	const nf = 2
	path := filepath.Join(t.TempDir(), "f.bin")
	all := frames(40, nf)
	if err := os.WriteFile(path, all[:2*nf*10], 0o666); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		for i := 10; i < 40; i += 10 {
			time.Sleep(20 * time.Millisecond)
			f.Write(all[2*nf*i : 2*nf*(i+10)])
		}
	}()
	src, err := OpenSource(context.Background(), path, nf, SourceOptions{Follow: true, Idle: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if n := readAll(t, src, nf); n != 40 {
		t.Errorf("%d frames followed, want 40", n)
	}
	if _, err := OpenSource(context.Background(), t.TempDir(), nf, SourceOptions{}); err == nil {
		t.Error("a folder as the source: no error")
	}
}
