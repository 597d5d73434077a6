package curate

import (
	"math"
	"math/rand/v2"
	"testing"

	"dspk/internal/testseed"
)

// refHandedOver is the hand-over test in float64 by brute force: counts
// binned by division, the correlation from its definition, every pair of
// spikes compared for the correlogram's centre.
func refHandedOver(a, b []float64, span float64) (bool, float64) {
	nb := int(math.Floor(span / 10))
	if nb < 10 || len(a) == 0 || len(b) == 0 {
		return false, math.NaN()
	}
	ca, cb := make([]float64, nb), make([]float64, nb)
	for _, t := range a {
		if k := int(math.Floor(t / 10)); k < nb {
			ca[k]++
		}
	}
	for _, t := range b {
		if k := int(math.Floor(t / 10)); k < nb {
			cb[k]++
		}
	}
	mean := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v
		}
		return s / float64(len(x))
	}
	ma, mb := mean(ca), mean(cb)
	var sab, saa, sbb float64
	for k := range ca {
		sab += (ca[k] - ma) * (cb[k] - mb)
		saa += (ca[k] - ma) * (ca[k] - ma)
		sbb += (cb[k] - mb) * (cb[k] - mb)
	}
	if saa == 0 || sbb == 0 {
		return false, math.NaN()
	}
	r := sab / math.Sqrt(saa*sbb)
	if r > -0.7 {
		return false, r
	}
	exp, obs := 0.0, 0
	for k := range ca {
		exp += ca[k] * cb[k] * 0.002 / 10
	}
	if exp < 8 {
		return true, r
	}
	for _, t := range a {
		for _, u := range b {
			if math.Abs(u-t) <= 0.001 {
				obs++
			}
		}
	}
	return float64(obs) <= exp/4, r
}

// deadTimeTrain returns a Poisson train of rate hz(t) over [0, T) with
// a 2-ms dead time, by thinning a train of rate peak.
func deadTimeTrain(rng *rand.Rand, peak, T float64, hz func(t float64) float64) []float64 {
	var out []float64
	last := math.Inf(-1)
	for t := rng.ExpFloat64() / peak; t < T; t += rng.ExpFloat64() / peak {
		if t-last >= 0.002 && rng.Float64() < hz(t)/peak {
			out = append(out, t)
			last = t
		}
	}
	return out
}

// TestHandedOver: a neuron whose spikes pass from one unit to another over
// a stretch of the recording is always a hand-over, independent steady
// trains never are, two neurons whose rates cross over at rates that
// fill the correlogram's centre fail it, a recording shorter than 100 s says nothing, and
// the test agrees with the brute-force reference throughout.
func TestHandedOver(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 43))
	check := func(trial int, what string, a, b []float64, span float64, want bool) {
		t.Helper()
		ok, r := HandedOver(a, b, span)
		rok, rr := refHandedOver(a, b, span)
		if ok != rok || !(math.Abs(r-rr) < 1e-9 || math.IsNaN(r) && math.IsNaN(rr)) {
			t.Fatalf("trial %d, %s: %v (r %v), the reference %v (r %v)", trial, what, ok, r, rok, rr)
		}
		if ok != want {
			t.Fatalf("trial %d, %s: %v (r %.3f), want %v", trial, what, ok, r, want)
		}
	}
	for trial := range 100 {
		T := 120 + rng.Float64()*480
		// One neuron of 2–20 Hz whose spikes go from a to b while a
		// hand-over of 20–60 s starting between 20 % and 60 % of the
		// recording runs.
		hz := 2 + rng.Float64()*18
		start, length := T*(0.2+0.4*rng.Float64()), 20+rng.Float64()*40
		whole := deadTimeTrain(rng, hz, T, func(float64) float64 { return hz })
		var a, b []float64
		for _, s := range whole {
			if rng.Float64() < math.Min(1, math.Max(0, (s-start)/length)) {
				b = append(b, s)
			} else {
				a = append(a, s)
			}
		}
		check(trial, "hand-over", a, b, T, true)
		// Two neurons of steady rates.
		ra, rb := 0.5+rng.Float64()*20, 0.5+rng.Float64()*20
		check(trial, "independent", deadTimeTrain(rng, ra, T, func(float64) float64 { return ra }),
			deadTimeTrain(rng, rb, T, func(float64) float64 { return rb }), T, false)
		// Every fifth trial, two neurons whose rates cross over 120–300
		// s, at rates that predict 25 or more pairs within 1 ms: as
		// anticorrelated as a hand-over, but their spikes meet as often
		// as their rates predict.
		if trial%5 == 0 {
			T := 120 + rng.Float64()*180
			peak := math.Sqrt(25*6/0.002/T) + rng.Float64()*10
			up := func(t float64) float64 { return peak * t / T }
			down := func(t float64) float64 { return peak * (1 - t/T) }
			check(trial, "crossing rates", deadTimeTrain(rng, peak, T, up), deadTimeTrain(rng, peak, T, down), T, false)
		}
	}
	// Under 100 s there are too few bins.
	whole := deadTimeTrain(rng, 10, 90, func(float64) float64 { return 10 })
	var a, b []float64
	for _, s := range whole {
		if s < 45 {
			a = append(a, s)
		} else {
			b = append(b, s)
		}
	}
	check(0, "90 s", a, b, 90, false)
}
