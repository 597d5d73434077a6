package quality

import (
	"fmt"
	"math"
)

// The motion presence's constants (docs/perf-quality.md, "Units present
// at some probe positions only").
const (
	// motionBinUm is the width of a displacement bin in µm: a quarter of
	// Neuropixels 1.0's 20-µm row pitch, and several times the motion
	// estimate's error (about 1 µm on SpikeInterface's zigzag recordings).
	motionBinUm = 5
	// motionMinSeconds is the least recording time in a displacement bin
	// for it to count.
	motionMinSeconds = 10
	// motionRateShare is the share of its mean rate a unit must fire at in
	// a bin to be present there.
	motionRateShare = 0.2
	// motionStep is the time step in s at which the displacement is
	// sampled to measure the time spent in each bin.
	motionStep = 0.1
)

// motionBins describes the displacement bins of a recording: the bins'
// lower edge and the seconds spent in each.
type motionBins struct {
	lo      float64
	seconds []float64
}

// motionBins samples the displacement every motionStep s over the
// recording and histograms it in motionBinUm bins from its smallest value; nil where in has no
// motion or fewer than two bins hold motionMinSeconds (a still probe).
func (in *Input) motionBins() *motionBins {
	if len(in.Motion) == 0 {
		return nil
	}
	dur := float64(in.NumSamples) / in.SampleRate
	var d []float64
	for t := 0.0; t < dur; t += motionStep {
		d = append(d, in.displacement(t))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range d {
		lo, hi = min(lo, v), max(hi, v)
	}
	// Bins start at the smallest displacement, so that a probe that moved
	// by less than a bin (a still recording's estimate) has one bin.
	b := &motionBins{lo: lo, seconds: make([]float64, int((hi-lo)/motionBinUm)+1)}
	for _, v := range d {
		b.seconds[b.bin(v)] += motionStep
	}
	full := 0
	for _, s := range b.seconds {
		if s >= motionMinSeconds {
			full++
		}
	}
	if full < 2 {
		return nil
	}
	return b
}

// bin returns the bin of displacement v.
func (b *motionBins) bin(v float64) int {
	return min(max(int((v-b.lo)/motionBinUm), 0), len(b.seconds)-1)
}

// displacement interpolates the probe's displacement at t seconds
// (linearly between MotionTimes, held beyond them).
func (in *Input) displacement(t float64) float64 {
	ts, d := in.MotionTimes, in.Motion
	switch {
	case t <= ts[0]:
		return d[0]
	case t >= ts[len(ts)-1]:
		return d[len(d)-1]
	}
	lo, hi := 0, len(ts)-1
	for hi-lo > 1 {
		if m := (lo + hi) / 2; ts[m] <= t {
			lo = m
		} else {
			hi = m
		}
	}
	f := (t - ts[lo]) / (ts[hi] - ts[lo])
	return d[lo] + f*(d[hi]-d[lo])
}

// motionPresence is the fraction of the displacement bins holding
// motionMinSeconds in which the unit fires at least motionRateShare of
// its mean rate over the recording: 1 for a neuron, whose firing does not
// depend on where the probe is, and less for a piece of one that the sort
// split by the probe's position. NaN without motion bins or spikes.
func (in *Input) motionPresence(times []int64, b *motionBins) float64 {
	if b == nil || len(times) == 0 {
		return math.NaN()
	}
	count := make([]float64, len(b.seconds))
	for _, t := range times {
		count[b.bin(in.displacement(float64(t)/in.SampleRate))]++
	}
	mean := float64(len(times)) / (float64(in.NumSamples) / in.SampleRate)
	bins, present := 0, 0
	for k, s := range b.seconds {
		if s < motionMinSeconds {
			continue
		}
		bins++
		if count[k]/s >= motionRateShare*mean {
			present++
		}
	}
	return float64(present) / float64(bins)
}

// checkMotion validates Motion and MotionTimes.
func (in *Input) checkMotion() error {
	if len(in.Motion) != len(in.MotionTimes) {
		return fmt.Errorf("quality: %d displacements at %d times", len(in.Motion), len(in.MotionTimes))
	}
	for k, v := range in.Motion {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(in.MotionTimes[k]) || k > 0 && !(in.MotionTimes[k] > in.MotionTimes[k-1]) {
			return fmt.Errorf("quality: displacement %d (%v µm at %v s) is not finite or not after the one before", k, v, in.MotionTimes[k])
		}
	}
	return nil
}
