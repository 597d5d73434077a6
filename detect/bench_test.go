package detect

import (
	"math"
	"math/rand/v2"
	"syscall"
	"testing"

	"dspk/probe"
)

// np1Window returns an NP1-sized whitened window (384 × 60122: unit noise
// plus nspikes spikes of 6–25 SD) with its grid and templates.
func np1Window(b *testing.B, nspikes int) (Params, *Grid, *Templates, []float32, int) {
	b.Helper()
	prm := DefaultParams()
	p := probe.NP1()
	g, err := NewGrid(p, prm)
	if err != nil {
		b.Fatal(err)
	}
	tm := synthTemplates(6, 6, prm.NT, prm.NT0Min)
	T := 60000 + 2*prm.NT
	rng := rand.New(rand.NewPCG(1, 1))
	sp := randomSpikes(rng, p, nspikes, 0, T, 6, 25, 6, true)
	x := synthWindow(rng, p, T, synthShapes(6, prm.NT, prm.NT0Min), prm.NT0Min, sp, 1, 20)
	return prm, g, tm, x, T
}

// BenchmarkDetectNP1 times one 384 × 60122 window with 3000 spikes.
func BenchmarkDetectNP1(b *testing.B) {
	prm, g, tm, x, T := np1Window(b, 3000)
	d := newCPUDetector(g, tm, T, prm)
	var dst Spikes
	var st Stats
	cpu0 := cpuSeconds()
	for b.Loop() {
		dst.Reset()
		st = d.Detect(&dst, x, 0, T-2*prm.NT)
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/window")
	// CPU time of the process per window: on a shared machine the wall
	// time depends on the load, this much less.
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu_s/window")
	b.ReportMetric(2/sec, "x_realtime")
	b.ReportMetric(float64(st.ConvFlops)/1e9, "conv_GFLOP")
	b.ReportMetric(float64(st.BlockBounds)/1e6, "blockbound_M")
	b.ReportMetric(float64(st.BoundEvals)/1e6, "bound_M")
	b.ReportMetric(float64(st.Survivors)/1e6, "survivors_M")
	b.ReportMetric(float64(st.ShapeEvals)/1e6, "shapeevals_M")
	b.ReportMetric(float64(st.Strong)/1e6, "strong_M")
	b.ReportMetric(float64(st.Spikes), "spikes")
}

// BenchmarkDetectNP1Kernels times BenchmarkDetectNP1's window with each
// set of kernels this machine runs: AVX-512, AVX2 and the Go code.
func BenchmarkDetectNP1Kernels(b *testing.B) {
	prm, g, tm, x, T := np1Window(b, 3000)
	d := newCPUDetector(g, tm, T, prm)
	oldAsm, old512 := useAsm, useAVX512
	defer func() { useAsm, useAVX512 = oldAsm, old512 }()
	for _, k := range []struct {
		name      string
		asm, a512 bool
	}{{"avx512", true, true}, {"avx2", true, false}, {"go", false, false}} {
		if (k.asm && !haveAsm) || (k.a512 && !haveAVX512) {
			continue
		}
		b.Run(k.name, func(b *testing.B) {
			useAsm, useAVX512 = k.asm, k.a512
			var dst Spikes
			cpu0 := cpuSeconds()
			for b.Loop() {
				dst.Reset()
				d.Detect(&dst, x, 0, T-2*prm.NT)
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/window")
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu_s/window")
		})
	}
}

// BenchmarkConv compares the two temporal correlations on one chunk of
// 384 channels (1928 columns): the radix-4 FFT with channel pairs
// (used), gonum's real FFT at several block lengths, and the
// register-blocked direct float32 loop.
func BenchmarkConv(b *testing.B) {
	prm := DefaultParams()
	nt, K, C, W := prm.NT, 6, 384, 1928
	tm := synthTemplates(K, 6, nt, prm.NT0Min)
	T := W + 2*nt
	rng := rand.New(rand.NewPCG(2, 2))
	x := make([]float32, C*T)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	dst := make([]float32, W*K)
	m := make([]float32, W)
	flops := float64(2*C*K*nt) * float64(W)
	b.Run("fft4_1024_paired", func(b *testing.B) {
		cor := newCorrelator(convSpectra(tm.WTEMP, K, nt, convBlock), K, nt, convBlock)
		dstB := make([]float32, W*K)
		mB := make([]float32, W)
		for b.Loop() {
			for c := 0; c < C; c += 2 {
				cor.correlate(dst, m, x[c*T:(c+1)*T], dstB, mB, x[(c+1)*T:(c+2)*T], nt, W)
			}
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s_equiv")
	})
	b.Run("fft4_4096_paired", func(b *testing.B) {
		cor := newCorrelator(convSpectra(tm.WTEMP, K, nt, 4096), K, nt, 4096)
		dstB := make([]float32, W*K)
		mB := make([]float32, W)
		for b.Loop() {
			for c := 0; c < C; c += 2 {
				cor.correlate(dst, m, x[c*T:(c+1)*T], dstB, mB, x[(c+1)*T:(c+2)*T], nt, W)
			}
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s_equiv")
	})
	for _, n := range []int{512, 1024, 2048, 4096} {
		b.Run("gonum"+itoa(n), func(b *testing.B) {
			cor := newGonumCorrelator(gonumSpectra(tm.WTEMP, K, nt, n), K, nt, n)
			for b.Loop() {
				for c := range C {
					cor.correlate(dst, m, x[c*T:(c+1)*T], nt, W)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s_equiv")
		})
	}
	b.Run("direct", func(b *testing.B) {
		wt := make([][6]float32, nt)
		for j := range nt {
			for k := range K {
				wt[j][k] = tm.WTEMP[k*nt+j]
			}
		}
		xp := make([]float32, T+nt)
		for b.Loop() {
			for c := range C {
				copy(xp[nt/2:], x[c*T:(c+1)*T])
				correlateDirect(dst, xp, wt, nt, W)
			}
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

func itoa(n int) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// cpuSeconds is the user+system CPU time of the process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// BenchmarkFindClipsNP1 times the clip search of one NP1 window.
func BenchmarkFindClipsNP1(b *testing.B) {
	prm, _, _, x, T := np1Window(b, 3000)
	var clips []float32
	cpu0 := cpuSeconds()
	for b.Loop() {
		clips = FindClips(clips[:0], x, 384, T, prm)
	}
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu_s/window")
	b.ReportMetric(float64(len(clips)/prm.NT), "clips")
}

// BenchmarkTemplatesFromClips times learning from n noisy clips of six
// shapes (jittered by ±1 sample, unit noise at amplitudes 6–20, either
// polarity 1 in 5).
func BenchmarkTemplatesFromClips(b *testing.B) {
	for _, n := range []int{2324, 20000, 100000} {
		b.Run(itoa(n), func(b *testing.B) {
			prm := DefaultParams()
			nt := prm.NT
			shapes := synthShapes(6, nt, prm.NT0Min)
			rng := rand.New(rand.NewPCG(3, 3))
			clips := make([]float32, n*nt)
			for i := range n {
				s := shapes[rng.IntN(6)]
				amp := 6 + 14*rng.Float64()
				if rng.IntN(5) == 0 {
					amp = -amp
				}
				sh := rng.IntN(3) - 1
				var ss float64
				row := clips[i*nt : (i+1)*nt]
				for j := range nt {
					v := rng.NormFloat64()
					if jj := j + sh; jj >= 0 && jj < nt {
						v += amp * s[jj] * 4
					}
					row[j] = float32(v)
					ss += v * v
				}
				for j := range row {
					row[j] /= float32(math.Sqrt(ss))
				}
			}
			cpu0 := cpuSeconds()
			for b.Loop() {
				if _, err := TemplatesFromClips(clips, prm, 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu_s/op")
		})
	}
}
