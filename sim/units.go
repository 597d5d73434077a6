package sim

import (
	"math"
	"math/rand/v2"
)

// Pair and burst constants (see Config.SimilarPairs, Config.BurstFraction).
const (
	pairMinUm, pairMaxUm = 10.0, 30.0 // distance of a unit's near copy
	pairJitter           = 0.03       // relative change of its waveform times and rebound
	pairAmpLo, pairAmpHi = 0.8, 1.25  // its amplitude relative to the first unit's
	pairZJitterUm        = 5.0        // change of its distance from the probe plane

	burstProb                    = 0.25 // chance that a spike starts a burst
	burstMinSpikes               = 2    // spikes per burst, the first included
	burstMaxSpikes               = 5
	burstISIMinMs, burstISIMax   = 3.0, 10.0  // intervals inside a burst, ms
	burstDecayMin, burstDecayMax = 0.15, 0.30 // each spike this much smaller than the one before
)

// buildPairs turns unit 2i+1 into a near copy of unit 2i for i <
// SimilarPairs: same family, waveform times and rebound within ±3 %,
// amplitude ×0.8–1.25, 10–30 µm away in the probe plane and ±5 µm in z.
func (m *model) buildPairs() {
	if m.cfg.SimilarPairs == 0 {
		return
	}
	r := newRand(m.cfg.Seed, kindPairs, 0)
	uni := func(a, b float64) float64 { return a + (b-a)*r.Float64() }
	for i := range m.cfg.SimilarPairs {
		a, b := &m.units[2*i], &m.units[2*i+1]
		b.shape = a.shape
		b.tj = a.tj * uni(1-pairJitter, 1+pairJitter)
		b.rj = a.rj * uni(1-pairJitter, 1+pairJitter)
		d, th := uni(pairMinUm, pairMaxUm), uni(0, 2*math.Pi)
		b.x = a.x + d*math.Cos(th)
		b.y = a.y + d*math.Sin(th)
		zmin := unitZMinUm
		if m.cfg.UnitZMaxUm > 0 {
			zmin = m.cfg.UnitZMinUm
		}
		b.z = max(zmin, a.z+uni(-pairZJitterUm, pairZJitterUm))
		b.amp = a.amp * math.Exp(uni(math.Log(pairAmpLo), math.Log(pairAmpHi)))
		m.finishUnit(b)
	}
}

// burstingUnits marks round(BurstFraction·Units) units, chosen at random,
// as bursting.
func (m *model) burstingUnits() []bool {
	b := make([]bool, len(m.units))
	n := int(math.Round(m.cfg.BurstFraction * float64(len(m.units))))
	if n == 0 {
		return b
	}
	for _, k := range newRand(m.cfg.Seed, kindBursts, 0).Perm(len(m.units))[:n] {
		b[k] = true
	}
	return b
}

// burstTrain appends the spikes of bursting unit k to all: a dead-time
// renewal process of burst onsets, each of which starts a burst with
// probability burstProb; the next onset comes after the burst's last
// spike. The onset rate is lowered so that the unit's mean rate, burst
// spikes included, stays its rate.
func (m *model) burstTrain(all []spikeEvent, k int, r *rand.Rand, first, last int64) []spikeEvent {
	fs := m.cfg.SampleRate
	u := &m.units[k]
	tau := m.refractorySamples()
	rb := newRand(m.cfg.Seed, kindBursts, uint64(k)+1)
	meanExtra := burstProb * float64(burstMinSpikes+burstMaxSpikes-2) / 2
	meanISI := fs / u.rate * (1 + meanExtra)
	expMean := math.Max(meanISI-tau, 0)
	t := -math.Max(fs, 10*meanISI)
	for {
		t += tau + r.ExpFloat64()*expMean
		ts := int64(math.Floor(t))
		if ts > last {
			return all
		}
		if ts >= first {
			all = append(all, spikeEvent{ts, int32(k), 1})
		}
		if rb.Float64() >= burstProb {
			continue
		}
		n := burstMinSpikes + rb.IntN(burstMaxSpikes-burstMinSpikes+1)
		sc := 1.0
		for range n - 1 {
			t += math.Max(fs*uniF(rb, burstISIMinMs, burstISIMax)/1000, tau+1)
			sc *= 1 - uniF(rb, burstDecayMin, burstDecayMax)
			ts = int64(math.Floor(t))
			if ts > last {
				return all
			}
			if ts >= first {
				all = append(all, spikeEvent{ts, int32(k), float32(sc)})
			}
		}
	}
}

// uniF draws uniformly from [a, b).
func uniF(r *rand.Rand, a, b float64) float64 { return a + (b-a)*r.Float64() }
