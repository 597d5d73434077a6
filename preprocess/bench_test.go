package preprocess

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"dspk/linalg"
)

// NP1-sized benchmark window: 385 interleaved int16 channels (sync last),
// T = 60122, the 384 sites used.
var (
	benchOnce sync.Once
	benchSrc  []int16
	benchW    *linalg.Whitening
)

func benchData() ([]int16, *linalg.Whitening) {
	benchOnce.Do(func() {
		rng := rand.New(rand.NewPCG(31, 32))
		benchSrc = randWindow(rng, 60122, 385, true)
		benchW = randWhitening(rng, 384, 32)
	})
	return benchSrc, benchW
}

func benchParams() Params {
	p := DefaultParams()
	p.ChanMap, p.NChanFile = iota(384), 385
	return p
}

// reportRealtime reports how many times faster than real time one window
// of BatchSize samples is processed, and the CPU time per window spent since
// cpu0 (all goroutines; wall time on a loaded shared machine overstates
// the cost, CPU time much less so).
func reportRealtime(b *testing.B, p Params, cpu0 time.Duration) {
	per := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(p.BatchSize)/p.Fs/per, "x_realtime")
	if cpu0 >= 0 {
		b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu_ms/op")
	}
}

func BenchmarkRun(b *testing.B) {
	src, w := benchData()
	p := benchParams()
	pp, err := newCPU(p)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, 384*p.T())
	for _, tc := range []struct {
		name string
		w    *linalg.Whitening
	}{{"nowhiten", nil}, {"whiten32", w}} {
		b.Run(tc.name, func(b *testing.B) {
			pp.Run(dst, src, tc.w) // allocate the whitening scratch
			b.SetBytes(int64(2 * len(src)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for range b.N {
				pp.Run(dst, src, tc.w)
			}
			reportRealtime(b, p, cpu0)
		})
	}
}

// BenchmarkStages times Run's stages separately on the NP1 window:
// selection + mean + CAR (reference), the high-pass of 384 rows, and the
// whitening apply (linalg).
func BenchmarkStages(b *testing.B) {
	src, w := benchData()
	p := benchParams()
	pp, err := newCPU(p)
	if err != nil {
		b.Fatal(err)
	}
	T := p.T()
	buf := make([]float32, 384*T)
	dst := make([]float32, 384*T)
	b.Run("reference", func(b *testing.B) {
		b.SetBytes(int64(2 * len(src)))
		cpu0 := cpuTime()
		for range b.N {
			pp.reference(buf, src)
		}
		reportRealtime(b, p, cpu0)
	})
	b.Run("highpass384", func(b *testing.B) {
		pp.reference(buf, src)
		b.SetBytes(int64(4 * len(buf)))
		b.ResetTimer()
		cpu0 := cpuTime()
		for range b.N {
			pp.out = buf
			pp.loop.Split(384, pp.workers, pp.filterFn)
			pp.out = nil
		}
		reportRealtime(b, p, cpu0)
	})
	b.Run("whiten", func(b *testing.B) {
		b.SetBytes(int64(4 * len(buf)))
		cpu0 := cpuTime()
		for range b.N {
			w.Apply(dst, buf, T)
		}
		reportRealtime(b, p, cpu0)
	})
}

// BenchmarkStagesKernels times the reference and high-pass stages of
// BenchmarkStages with each set of kernels this machine runs: AVX-512,
// AVX2 and the Go code.
func BenchmarkStagesKernels(b *testing.B) {
	src, _ := benchData()
	p := benchParams()
	pp, err := newCPU(p)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]float32, 384*p.T())
	oldAsm, old512, oldHP, oldHP512 := useAsm, avx512, useHPAsm, hpAVX512
	defer func() { useAsm, avx512, useHPAsm, hpAVX512 = oldAsm, old512, oldHP, oldHP512 }()
	for _, k := range []struct {
		name      string
		asm, a512 bool
	}{{"avx512", true, true}, {"avx2", true, false}, {"go", false, false}} {
		if (k.asm && !oldAsm) || (k.a512 && !old512) {
			continue
		}
		useAsm, avx512, useHPAsm, hpAVX512 = k.asm, k.a512, k.asm && oldHP, k.a512
		b.Run(k.name+"/reference", func(b *testing.B) {
			cpu0 := cpuTime()
			for range b.N {
				pp.reference(buf, src)
			}
			reportRealtime(b, p, cpu0)
		})
		b.Run(k.name+"/highpass384", func(b *testing.B) {
			pp.reference(buf, src)
			b.ResetTimer()
			cpu0 := cpuTime()
			for range b.N {
				pp.out = buf
				pp.loop.Split(384, pp.workers, pp.filterFn)
				pp.out = nil
			}
			reportRealtime(b, p, cpu0)
		})
	}
}

// BenchmarkFilterRow times one channel row of T = 60122 on one goroutine:
// the periodic forward-backward path one row at a time (Apply) and two
// rows interleaved (apply2, as Run does; ns/sample per row), and the
// exact FFT path at that (non-smooth) length.
func BenchmarkFilterRow(b *testing.B) {
	const n = 60122
	rng := rand.New(rand.NewPCG(33, 34))
	x := randRow(rng, n)
	y := make([]float32, n)
	fast, err := NewFilter(30000, 300, 3, n)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    *Filter
	}{{"periodic", fast}, {"fft60122", newFFTFilter(b, 30000, 300, 3, n)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(4 * n)
			start := time.Now()
			for range b.N {
				tc.f.Apply(y, x)
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/n, "ns/sample")
		})
	}
	b.Run("periodic2", func(b *testing.B) {
		x2 := randRow(rng, n)
		y2 := make([]float32, n)
		b.SetBytes(8 * n)
		start := time.Now()
		for range b.N {
			fast.apply2(y, x, y2, x2)
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/(2*n), "ns/sample")
	})
}
