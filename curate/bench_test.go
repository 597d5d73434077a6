package curate

import (
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"
)

// npScene builds a Neuropixels-sized curation input: N units over C = 384
// channels, each a template on 12 channels, spikes at about rate Hz over
// dur seconds with 3-ms refractory trains, a fifth of the neurons split
// over two clusters (which the merges should join), features NC = 10 by
// P = 6.
func npScene(rng *rand.Rand, neurons int, dur, rate float64) (*Spikes, *Units, *Basis, *Channels) {
	const C, P, nt, NC = 384, 6, 61, 10
	wpca := orthoBasis(rng, P, nt)
	bs := NewBasis(wpca, P, nt)
	u := &Units{C: C, P: P}
	ch := &Channels{X: make([]float64, C), Y: make([]float64, C)}
	for c := range C {
		ch.X[c], ch.Y[c] = float64([]int{43, 11, 59, 27}[c%4]), float64(20*(c/2))
	}
	s := &Spikes{NC: NC, P: P}
	for n := range neurons {
		c0 := rng.IntN(C - 12)
		w := make([]float32, C*P)
		for c := c0; c < c0+12; c++ {
			for p := range P {
				w[c*P+p] = float32(rng.NormFloat64())
			}
		}
		k0 := u.N
		parts := 1
		if n%5 == 0 {
			parts = 2
		}
		for range parts {
			u.W = append(u.W, w...)
			u.N++
			chans := make([]int32, NC)
			for r := range chans {
				chans[r] = int32(c0 + 1 + r)
			}
			ch.Chans = append(ch.Chans, chans)
		}
		for _, t := range refractoryTrain(rng, rate, dur, 90) {
			k := k0 + rng.IntN(parts)
			s.Time = append(s.Time, t)
			s.Template = append(s.Template, int32(k))
			s.Cluster = append(s.Cluster, int32(k))
			for r := range NC {
				for p := range P {
					s.Features = append(s.Features, w[(c0+1+r)*P+p]+float32(0.1*rng.NormFloat64()))
				}
			}
		}
	}
	s.SortByTime()
	return s, u, bs, ch
}

// BenchmarkCurateNP1 times the curation stages on a 600-s, 120-neuron
// Neuropixels-sized input (about 600 000 spikes, 144 clusters); run with
// DSPK_LONG unset it uses 60 s.
func BenchmarkCurateNP1(b *testing.B) {
	dur := 60.0
	if testing.Short() {
		dur = 10
	}
	if lookupLong() {
		dur = 600
	}
	rng := rand.New(rand.NewPCG(1, 2))
	s0, u, bs, ch := npScene(rng, 120, dur, 8)
	b.Logf("%d spikes, %d clusters, %.0f s", s0.Len(), u.N, dur)
	for b.Loop() {
		s := &Spikes{NC: s0.NC, P: s0.P, Time: slices.Clone(s0.Time), Template: slices.Clone(s0.Template),
			Cluster: slices.Clone(s0.Cluster), Features: slices.Clone(s0.Features)}
		prm := DefaultParams()
		t0 := time.Now()
		res := Merge(s, u, bs, ch, prm)
		t1 := time.Now()
		keep := RemoveDuplicates(s.Time, s.Cluster, prm.DuplicateSpikeBins())
		pos := Positions(s, ch, prm.PositionLimit)
		amp := Amplitudes(s)
		t2 := time.Now()
		s.Select(keep)
		good, contam := Refract(s.Cluster, Seconds(s.Time, prm.FS), prm)
		t3 := time.Now()
		sim := SimilarTemplates(res.Units, bs)
		t4 := time.Now()
		feat, ind := PCFeatures(s, ch, res.Units.N, false)
		t5 := time.Now()
		b.Logf("merge %v (%d merges → %d units) · duplicates+positions+amplitudes %v · refract %v (%d good) · similarity %v · PC features %v",
			t1.Sub(t0), len(res.Merges), res.Units.N, t2.Sub(t1), t3.Sub(t2), count(good), t4.Sub(t3), t5.Sub(t4))
		_, _, _, _, _, _ = pos, amp, contam, sim, feat, ind
	}
}

func count(b []bool) (n int) {
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// lookupLong reports whether DSPK_LONG is set (long benchmark inputs).
func lookupLong() bool { return os.Getenv("DSPK_LONG") != "" }
