package curate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/internal/testseed"
)

// refInterleaved is the interleave test in float64 by brute force: every
// pair of spikes compared, in either window.
func refInterleaved(a, b []float64, span float64) bool {
	return refInterleavedAt(a, b, span, InterleaveWindow) || refInterleavedAt(a, b, span, InterleaveShortWindow)
}

func refInterleavedAt(a, b []float64, span, w float64) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 || span <= 0 {
		return false
	}
	obs := 0
	for _, t := range a {
		for _, u := range b {
			if math.Abs(u-t) <= w {
				obs++
				break
			}
		}
	}
	p := 1 - math.Exp(-float64(len(b))*2*w/span)
	exp := float64(len(a)) * p
	return exp >= 10 && float64(obs) <= 0.5*exp && exp-float64(obs) >= 4*math.Sqrt(exp*(1-p))
}

// poissonTrain returns a Poisson train of rate hz over [0, T) seconds,
// kept only where keep (nil: everywhere) holds.
func poissonTrain(rng *rand.Rand, hz, T float64, keep func(t float64) bool) []float64 {
	var out []float64
	for t := rng.ExpFloat64() / hz; t < T; t += rng.ExpFloat64() / hz {
		if keep == nil || keep(t) {
			out = append(out, t)
		}
	}
	return out
}

// TestInterleaved: independent trains are never taken for pieces of one
// unit, a unit's train split into alternating stretches always is, a
// split into too few spikes is not, and the fast search agrees with the
// brute-force reference on all of them.
func TestInterleaved(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 41))
	const T = 120
	for trial := range 200 {
		ra, rb := 0.5+rng.Float64()*20, 0.5+rng.Float64()*20
		a, b := poissonTrain(rng, ra, T, nil), poissonTrain(rng, rb, T, nil)
		ok, obs, exp := Interleaved(a, b, T)
		if ok != refInterleaved(a, b, T) {
			t.Fatalf("trial %d: %v, the reference differs", trial, ok)
		}
		if ok {
			t.Fatalf("trial %d: independent trains of %.1f and %.1f Hz taken as interleaved (%d of %.1f)", trial, ra, rb, obs, exp)
		}
		// One unit whose spikes go to a or b by stretches of 2–20 s, or
		// (every other trial) of 0.3–0.6 s, which only the short window
		// tells.
		period := 2 + rng.Float64()*18
		if trial%2 == 1 {
			period = 0.3 + rng.Float64()*0.3
		}
		first := func(t float64) bool { return int(t/period)%2 == 0 }
		hz := 1 + rng.Float64()*10
		whole := poissonTrain(rng, hz, T, nil)
		var pa, pb []float64
		for _, t := range whole {
			if first(t) {
				pa = append(pa, t)
			} else {
				pb = append(pb, t)
			}
		}
		ok, obs, exp = Interleaved(pa, pb, T)
		if ok != refInterleaved(pa, pb, T) {
			t.Fatalf("trial %d: split %v, the reference differs", trial, ok)
		}
		if trial%2 == 1 {
			sm, bg := min(len(pa), len(pb)), max(len(pa), len(pb))
			exp = float64(sm) * -math.Expm1(-float64(bg)/T*2*InterleaveShortWindow)
		}
		if !ok && exp >= 40 {
			t.Fatalf("trial %d: a %.1f-Hz unit split every %.1f s not taken as interleaved (%d of %.1f)", trial, hz, period, obs, exp)
		}
	}
	// Too few spikes say nothing.
	if ok, _, exp := Interleaved([]float64{1, 30, 60}, poissonTrain(rng, 5, T, func(t float64) bool { return t > 90 }), T); ok {
		t.Fatalf("3 spikes (expected %.1f) taken as interleaved", exp)
	}
	if ok, _, _ := Interleaved(nil, []float64{1}, T); ok {
		t.Fatal("an empty train taken as interleaved")
	}
	if ok, _, _ := Interleaved([]float64{1}, []float64{2}, 0); ok {
		t.Fatal("a zero span taken as interleaved")
	}
}

// TestMergeInterleaved is the case the interleaved merge is for: one
// neuron whose spikes two clusters take in turn (by stretches of seconds,
// as a unit drifting across the site pattern), at amplitudes 20 % apart
// so that the same-waveform rule leaves them, beside a neuron of a
// similar waveform firing at the same times of the recording. The pieces
// join; the neighbour stays; without the rule nothing merges.
func TestMergeInterleaved(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	C, P, nt, NC := 4, 21, 21, 4
	wpca := orthoBasis(rng, P, nt)
	wave := func(c, t int) float64 {
		x := float64(t-7) / 2
		return -math.Exp(-float64(c*c)/3) * (math.Exp(-x*x) - 0.3*math.Exp(-(x-3)*(x-3)/4))
	}
	gains := []float64{1, 1.2, 1.45}
	u := &Units{N: 3, C: C, P: P, W: make([]float32, 3*C*P)}
	for k, g := range gains {
		for c := range C {
			for p := range P {
				var s float64
				for tt := range nt {
					w := wave(c, tt)
					if k == 2 {
						w = wave(min(c+1, C-1), tt) // the neighbour sits one channel over
					}
					s += g * w * float64(wpca[p*nt+tt])
				}
				u.W[(k*C+c)*P+p] = float32(s)
			}
		}
	}
	build := func() *Spikes {
		rng := rand.New(rand.NewPCG(53, 54))
		s := &Spikes{NC: NC, P: P}
		add := func(k int, t int64) {
			s.Time = append(s.Time, t)
			s.Template = append(s.Template, int32(k))
			s.Cluster = append(s.Cluster, int32(k))
			s.Features = append(s.Features, u.W[k*C*P:(k+1)*C*P]...)
		}
		for _, t := range refractoryTrain(rng, 6, 120, 60) {
			add(int(t/(7*30000))%2, t) // 7-s stretches
		}
		for _, t := range refractoryTrain(rng, 5, 120, 60) {
			add(2, t)
		}
		s.SortByTime()
		return s
	}
	bs := NewBasis(wpca, P, nt)
	prm := DefaultParams()
	g := newMerger(build(), u, bs, prm)
	if sim := g.score(0); sim[1] < prm.Interleaved || sim[2] < prm.Interleaved {
		t.Fatalf("similarities %.3f (piece) and %.3f (neighbour) do not test the rule", sim[1], sim[2])
	}
	prm.Interleaved = 0
	if r := Merge(build(), u, bs, nil, prm); r.Units.N != 3 {
		t.Fatalf("without the rule: %d units, merges %+v", r.Units.N, r.Merges)
	}
	s := build()
	res := Merge(s, u, bs, nil, DefaultParams())
	m := res.Merges
	if res.Units.N != 2 || len(m) != 1 || !m[0].Interleaved || m[0].Into+m[0].From != 1 {
		t.Fatalf("units %d, merges %+v", res.Units.N, m)
	}
	ref, _ := refMerge(build(), u, wpca, nt, DefaultParams())
	if !slices.Equal(ref.Time, s.Time) || !slices.Equal(ref.Cluster, s.Cluster) {
		t.Fatal("spikes differ from the reference")
	}
}
