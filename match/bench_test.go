package match

import (
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/internal/gputest"
)

// np1Problem is an NP1-sized window: 384 channels, 60 122 columns, N
// templates on 15 neighbouring channels each, spikes planted spikes.
func np1Problem(seed uint64, N, spikes int) problem { return np1ProblemOrdered(seed, N, spikes, false) }

// np1ProblemOrdered is np1Problem with the templates numbered along the
// probe when ordered is set, as the sort's clustering numbers its units.
func np1ProblemOrdered(seed uint64, N, spikes int, ordered bool) problem {
	const C, P, T, nt = 384, 6, 60122, 61
	r := rand.New(rand.NewPCG(seed, 2))
	tm := Templates{N: N, C: C, P: P, U: make([]float32, N*C*P), WPCA: basis(r, P, nt)}
	var first []int // ordered: every template's first channel, drawn first
	if ordered {
		first = make([]int, N)
		for u := range first {
			first[u] = r.IntN(C - 15)
		}
		slices.Sort(first)
	}
	for u := range N {
		var c0 int
		if ordered {
			c0 = first[u]
		} else {
			c0 = r.IntN(C - 15)
		}
		for c := c0; c < c0+15; c++ {
			for p := range P {
				tm.U[(u*C+c)*P+p] = float32(r.NormFloat64() * 10)
			}
		}
	}
	pr := problem{tm: tm, x: make([]float64, C), y: make([]float64, C), win: make([]float32, C*T), T: T, owned: T - 2*nt}
	for c := range C {
		pr.x[c], pr.y[c] = float64(c%2)*32, float64(c/2)*20
	}
	for i := range pr.win {
		pr.win[i] = float32(r.NormFloat64())
	}
	for range spikes {
		pr.plant(nt+r.IntN(pr.owned), r.IntN(N), 1+r.Float64(), nt)
	}
	return pr
}

// BenchmarkMatchNP1 peels one NP1-sized window on the CPU: 384 channels,
// 60 122 columns, 250 templates on 15 neighbouring channels each, 2000
// planted spikes. Floors (derived): filtering by the PCA basis
// C·P·T·nt·2 = 16.9 GFLOP dense (less with FFT); projection N·15·P·T·2 =
// 2.7 GFLOP; bytes: the window (92 MB) and B (60 MB) once.
//
// The dense case is a window of a 600-unit recording: 600 templates
// numbered along the probe, as the sort numbers them, and 9000 planted
// spikes (the ladder-dense preset matches about 9500 spikes per 2-s
// window with 540 templates).
func BenchmarkMatchNP1(b *testing.B) {
	for _, c := range []struct {
		name      string
		n, spikes int
	}{{"250", 250, 2000}, {"dense", 600, 9000}} {
		b.Run(c.name, func(b *testing.B) {
			pr := np1ProblemOrdered(1, c.n, c.spikes, c.name == "dense")
			m, err := NewMatcher(nil, pr.tm, pr.x, pr.y, DefaultParams())
			if err != nil {
				b.Fatal(err)
			}
			var s Spikes
			b.ResetTimer()
			for b.Loop() {
				s.Reset()
				m.Match(&s, pr.win, 0, pr.owned)
			}
			b.ReportMetric(float64(s.Len()), "spikes")
			b.ReportMetric(float64(m.Rounds()), "rounds")
		})
	}
}

// BenchmarkMatchNP1CUDA peels the window of BenchmarkMatchNP1 on the GPU,
// from the window already in device memory (MatchWindow) to the spikes on
// the host. Floors (H200): filtering C·P·T·nt·2 = 16.9 GFLOP (float64,
// unfused multiply and add: ≈ 1 ms at 34 TFLOP/s FP64); the sparse projection
// N·15·P·T·2 = 2.7 GFLOP FP64 (≈ 0.1 ms) reading 5.4 GB of the filtered
// chunks from L2 (≈ 0.5 ms); bytes from HBM: the window (92 MB) read
// twice, B (60 MB) written once and read once for the first scores, ≈
// 0.06 ms at 4.8 TB/s; then per round a few µs of launches and the
// columns that changed (up to about twice the rounds that find spikes are
// launched).
func BenchmarkMatchNP1CUDA(b *testing.B) {
	dev := gputest.Device(b)
	pr := np1Problem(1, 250, 2000)
	m, err := NewMatcher(dev, pr.tm, pr.x, pr.y, DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	win := deviceWindow(b, dev, pr)
	defer win.Close()
	var s Spikes
	b.ResetTimer()
	for b.Loop() {
		s.Reset()
		if err := m.MatchWindow(&s, win, 0, pr.owned); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.Len()), "spikes")
	b.ReportMetric(float64(m.Rounds()), "rounds")
}
