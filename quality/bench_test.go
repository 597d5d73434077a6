package quality

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// benchInput is a 10-minute Neuropixels-sized sort: units spread along
// 384 channels, Poisson trains at 2–16 Hz, 6 PCs on 10 feature channels
// around each unit's main channel, as dspk sort writes them.
func benchInput(units int) Input {
	const (
		rate    = 30000.0
		seconds = 600.0
		nch     = 384
		npc     = 6
		nfeat   = 10
	)
	r := rand.New(rand.NewPCG(7, 7))
	in := Input{SampleRate: rate, NumSamples: int64(rate * seconds), NPC: npc, NFeat: nfeat}
	type sp struct {
		t int64
		u int32
	}
	var all []sp
	for u := range units {
		main := int32(u * nch / units)
		lo := min(max(main-nfeat/2, 0), nch-nfeat)
		for j := range nfeat {
			in.PCFeatureInd = append(in.PCFeatureInd, lo+int32(j))
		}
		for _, t := range poissonTrain(r, 2+14*r.Float64(), 0, seconds) {
			all = append(all, sp{t, int32(u)})
		}
	}
	slices.SortFunc(all, func(a, b sp) int { return int(a.t - b.t) })
	for _, s := range all {
		in.SpikeTimes = append(in.SpikeTimes, s.t)
		in.SpikeUnits = append(in.SpikeUnits, s.u)
		in.Amplitudes = append(in.Amplitudes, float32(50+10*r.NormFloat64()))
		in.SpikeDepths = append(in.SpikeDepths, float32(int(s.u)*3840/units)+float32(r.NormFloat64()))
		for k := range npc * nfeat {
			in.PCFeatures = append(in.PCFeatures, float32(float64(int(s.u)%7*(k%5))+r.NormFloat64()))
		}
	}
	return in
}

// BenchmarkComputeSort is the metrics every dspk sort writes (without
// nn_hit_rate/nn_miss_rate) on a 10-minute sort of 300 units.
func BenchmarkComputeSort(b *testing.B) {
	in := benchInput(300)
	opt := DefaultOptions()
	opt.SkipNN = true
	b.ReportMetric(float64(len(in.SpikeTimes)), "spikes")
	b.ResetTimer()
	for range b.N {
		if _, err := Compute(in, opt); err != nil {
			b.Fatal(err)
		}
	}
}
