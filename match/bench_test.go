package match

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkMatchNP1 peels one NP1-sized window: 384 channels, 60 122
// columns, 250 templates on 15 neighbouring channels each, 2000 planted
// spikes. Floors (derived): filtering by the PCA basis C·P·T·nt·2 =
// 16.9 GFLOP dense (less with FFT); projection N·15·P·T·2 = 2.7 GFLOP;
// bytes: the window (92 MB) and B (60 MB) once.
func BenchmarkMatchNP1(b *testing.B) {
	const N, C, P, T, nt = 250, 384, 6, 60122, 61
	r := rand.New(rand.NewPCG(1, 2))
	tm := Templates{N: N, C: C, P: P, U: make([]float32, N*C*P), WPCA: basis(r, P, nt)}
	for u := range N {
		c0 := r.IntN(C - 15)
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
	for range 2000 {
		pr.plant(nt+r.IntN(pr.owned), r.IntN(N), 1+r.Float64(), nt)
	}
	m, err := NewMatcher(nil, tm, pr.x, pr.y, DefaultParams())
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
}
