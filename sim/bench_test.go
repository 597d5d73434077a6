package sim

import (
	"io"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user+system CPU time. On a shared machine
// it is steadier than wall time for single-goroutine benchmarks.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

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
	c0 := cpuTime()
	for b.Loop() {
		rec.Seek(0, io.SeekStart)
		if _, err := rec.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - c0
	b.ReportMetric(cfg.Seconds*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
	b.ReportMetric(cfg.Seconds*float64(b.N)/cpu.Seconds(), "x_realtime/cpu-s")
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
			c0 := cpuTime()
			for b.Loop() {
				m.render(k, dst, ws, tc.p)
				k = (k + 1) % m.numChunks()
			}
			cpu := cpuTime() - c0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(b.N)*ChunkSamples/m.cfg.SampleRate/cpu.Seconds(), "x_realtime/cpu-s")
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
	c0 := cpuTime()
	for b.Loop() {
		m.whiteNoise(k, ws.white[:(ChunkSamples+1)*m.nSites], ws.cm, ChunkSamples)
		k = (k + 1) % (m.numChunks() - 1)
	}
	cpu := cpuTime() - c0
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)*ChunkSamples/m.cfg.SampleRate/cpu.Seconds(), "x_realtime/cpu-s")
}

// BenchmarkWriteSpikeGLX writes 10 s (231 MB) and 60 s (1.39 GB) of NP1
// with its meta to a temporary directory.
func BenchmarkWriteSpikeGLX(b *testing.B) {
	for _, sec := range []float64{10, 60} {
		b.Run(strconv.FormatFloat(sec, 'g', -1, 64)+"s", func(b *testing.B) {
			cfg := shortConfig(sec)
			dir := b.TempDir()
			b.SetBytes(cfg.Samples() * 385 * 2)
			c0 := cpuTime()
			for b.Loop() {
				if _, _, err := WriteSpikeGLX(dir, "bench", cfg); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuTime() - c0
			b.ReportMetric(cfg.Seconds*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
			b.ReportMetric(cfg.Seconds*float64(b.N)/cpu.Seconds(), "x_realtime/cpu-s")
		})
	}
}
