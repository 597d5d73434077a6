package sim

import (
	"io"
	"testing"
	"time"
)

func TestGenerate3s(t *testing.T) {
	// A 3-s NP1 recording is quick to make (the bound is loose: the
	// machine may be shared; BenchmarkGenerateNP1 measures the speed).
	start := time.Now()
	rec, err := Generate(shortConfig(3))
	if err != nil {
		t.Fatal(err)
	}
	n, err := rec.WriteTo(io.Discard)
	if err != nil || n != 3*30000*385*2 {
		t.Fatalf("WriteTo: %d bytes, %v", n, err)
	}
	el := time.Since(start)
	if el > 20*time.Second {
		t.Errorf("3 s of NP1 took %v", el)
	}
	t.Logf("3 s of NP1 in %v (%.1f× real time)", el, 3/el.Seconds())
}

// BenchmarkGenerateNP1 generates 10 s of the default NP1 recording (385
// channels, 120 units) on GOMAXPROCS goroutines and discards the bytes.
func BenchmarkGenerateNP1(b *testing.B) {
	cfg := shortConfig(10)
	rec, err := Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(rec.Size())
	b.ResetTimer()
	for b.Loop() {
		rec.Seek(0, io.SeekStart)
		if _, err := rec.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(cfg.Seconds*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}

// BenchmarkRenderChunk renders one 6000-sample NP1 chunk on one goroutine,
// with every part and with parts alone.
func BenchmarkRenderChunk(b *testing.B) {
	for _, tc := range []struct {
		name string
		p    parts
	}{{"all", partAll}, {"noise", partNoise}, {"spikes", partSpikes}, {"none", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			rec, err := Generate(shortConfig(10))
			if err != nil {
				b.Fatal(err)
			}
			m := rec.m
			ws := m.newWorkspace()
			dst := make([]int16, ChunkSamples*m.nChan)
			b.SetBytes(int64(len(dst) * 2))
			k := int64(0)
			for b.Loop() {
				m.render(k, dst, ws, tc.p)
				k = (k + 1) % m.numChunks()
			}
			b.ReportMetric(float64(b.N)*ChunkSamples/m.cfg.SampleRate/b.Elapsed().Seconds(), "x_realtime/core")
		})
	}
}

// BenchmarkNormals draws one chunk's white noise (6000 × 384 site normals
// plus 6000 common-mode normals), the random-number floor of a chunk.
func BenchmarkNormals(b *testing.B) {
	rec, err := Generate(shortConfig(10))
	if err != nil {
		b.Fatal(err)
	}
	m := rec.m
	ws := m.newWorkspace()
	k := int64(0)
	for b.Loop() {
		m.whiteNoise(k, ws.white[:(ChunkSamples+1)*m.nSites], ws.cm, ChunkSamples)
		k = (k + 1) % (m.numChunks() - 1)
	}
	b.ReportMetric(float64(b.N)*ChunkSamples/m.cfg.SampleRate/b.Elapsed().Seconds(), "x_realtime/core")
}

// BenchmarkWriteSpikeGLX writes 10 s of NP1 (231 MB) with its meta to a
// temporary directory, SHA-1 included.
func BenchmarkWriteSpikeGLX(b *testing.B) {
	cfg := shortConfig(10)
	dir := b.TempDir()
	b.SetBytes(int64(cfg.Samples()) * 385 * 2)
	for b.Loop() {
		if _, _, err := WriteSpikeGLX(dir, "bench", cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(cfg.Seconds*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}
