package recording

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"dspk/kilosort"
)

// BenchmarkSequentialWindows reads Neuropixels 1.0-shaped padded windows
// (385 channels × 60 122 samples, 46.3 MB) in order from a 4-window temp
// file that was just written and so sits in the page cache. "direct"
// reads into the window's memory, "decode" goes through the portable
// byte buffer, "loader" is the read-ahead Loader (InFlight 2) with the
// caller releasing each window at once. "memcpy" copies a window's bytes
// in memory: the floor of any read from the page cache.
func BenchmarkSequentialWindows(b *testing.B) {
	const channels, windows = 385, 4
	s, err := NewSchedule(0, int64(windows*ks.BatchSize), ks.BatchSize, ks.NT)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "np1.ap.bin")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 2*channels*ks.BatchSize)
	for i := range chunk {
		chunk[i] = byte(i*7 + i>>11)
	}
	for range windows {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	bytesPerWindow := int64(2 * channels * s.Len())

	for _, mode := range []string{"direct", "decode"} {
		b.Run(mode, func(b *testing.B) {
			r, err := openRaw(path, channels, 30000)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			r.bin.direct = mode == "direct" && hostLittleEndian
			dst := make([]int16, channels*s.Len())
			b.SetBytes(bytesPerWindow)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := ReadWindow(r, s, i%s.Windows, dst); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(bytesPerWindow)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
	// The floor: one in-memory copy of a window's bytes, which is what the
	// kernel does to move page-cache pages into the buffer.
	b.Run("memcpy", func(b *testing.B) {
		src := make([]int16, channels*s.Len())
		dst := make([]int16, channels*s.Len())
		for i := range src {
			src[i] = int16(i)
		}
		b.SetBytes(bytesPerWindow)
		b.ResetTimer()
		for range b.N {
			copy(dst, src)
		}
		b.ReportMetric(float64(bytesPerWindow)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
	b.Run("loader", func(b *testing.B) {
		r, err := openRaw(path, channels, 30000)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		order := make([]int, b.N)
		for i := range order {
			order[i] = i % s.Windows
		}
		b.SetBytes(bytesPerWindow)
		b.ResetTimer()
		l := NewLoader(r, s, LoaderOptions{Windows: order})
		defer l.Close()
		for range b.N {
			w, err := l.Next(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			l.Release(w)
		}
		b.ReportMetric(float64(bytesPerWindow)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
}

// ks are Kilosort4's default window sizes.
var ks = kilosort.Defaults()
