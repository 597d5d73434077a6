package quality

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// RawReader reads a recording's stored samples, every channel of the file
// interleaved: dst[t*Channels()+c] for samples [start, start+n)
// (recording.Recording satisfies it).
type RawReader interface {
	Channels() int
	Samples() int64
	ReadInt16(dst []int16, start int64, n int) error
}

// Bombcell's raw-waveform settings for Kilosort4's 61-sample templates
// (its default parameters: spike_width 61, half_width 20,
// waveformBaselineNoiseWindow 10, nRawSpikesToExtract 100).
const (
	rawSNRWidth    = 61  // samples per raw snippet
	rawSNRBefore   = 21  // snippet samples before the spike time (Bombcell's half_width + 1)
	rawSNRBaseline = 10  // leading samples taken as the baseline
	rawSNRSpikes   = 100 // spikes per unit
)

// rawSNR fills raw_snr: Bombcell's signalToNoiseRatio, the value its
// minSNR threshold (5) bounds. For each unit, up to 100 of its spikes
// evenly spaced through its train (numpy's linspace over the spike
// indices, truncated), each a 61-sample snippet of the raw recording from
// 21 samples before the spike, on the file row of the template's peak
// channel (largest peak-to-peak), with its least-squares line removed.
// The signal is the largest |value| of their mean less the mean of its
// first 10 samples; the noise is the median absolute deviation (not
// scaled) of those 10 samples of the mean. Spikes whose snippet would
// leave the file are not sampled, as in Bombcell. Averaging lowers the
// baseline's noise by about the root of the number of spikes, so this
// ratio runs an order of magnitude above SpikeInterface's snr.
func (in *Input) rawSNR(units []unit, tm *templateInfo, cols *columns) error {
	if in.Raw == nil || tm == nil {
		return nil
	}
	cf := in.Raw.Channels()
	if len(in.RawRows) != in.Channels {
		return fmt.Errorf("quality: %d raw rows for %d channels", len(in.RawRows), in.Channels)
	}
	type snip struct {
		t    int64
		unit int
	}
	var snips []snip
	rows := make([]int, len(units))
	for i, u := range units {
		rows[i] = in.RawRows[tm.peakToPeakChannel(i)]
		if rows[i] < 0 || rows[i] >= cf {
			return fmt.Errorf("quality: raw row %d of a file of %d channels", rows[i], cf)
		}
		n := in.Raw.Samples()
		var ok []int64
		for _, t := range u.times {
			if rawSNRBefore-1 < t && t < n-rawSNRWidth+rawSNRBefore-1 {
				ok = append(ok, t)
			}
		}
		for _, t := range linspaceSample(ok, rawSNRSpikes) {
			snips = append(snips, snip{t, i})
		}
	}
	// Read in time order: the file is visited once, front to back.
	slices.SortFunc(snips, func(a, b snip) int { return cmp.Compare(a.t, b.t) })
	sum := make([]float64, len(units)*rawSNRWidth)
	count := make([]int, len(units))
	buf := make([]int16, rawSNRWidth*cf)
	x := make([]float64, rawSNRWidth)
	for _, s := range snips {
		if err := in.Raw.ReadInt16(buf, s.t-rawSNRBefore, rawSNRWidth); err != nil {
			return fmt.Errorf("quality: raw_snr: %w", err)
		}
		r := rows[s.unit]
		for k := range x {
			x[k] = float64(buf[k*cf+r])
		}
		detrend(x)
		acc := sum[s.unit*rawSNRWidth : (s.unit+1)*rawSNRWidth]
		for k, v := range x {
			acc[k] += v
		}
		count[s.unit]++
	}
	for i := range units {
		if count[i] == 0 {
			continue
		}
		m := sum[i*rawSNRWidth : (i+1)*rawSNRWidth]
		for k := range m {
			m[k] /= float64(count[i])
		}
		base := m[:rawSNRBaseline]
		bmean := 0.0
		for _, v := range base {
			bmean += v
		}
		bmean /= rawSNRBaseline
		signal := 0.0
		for _, v := range m {
			signal = max(signal, math.Abs(v-bmean))
		}
		cols.set("raw_snr", i, signal/unscaledMAD(base))
	}
	return nil
}

// linspaceSample returns n elements of v at numpy's
// linspace(0, len(v)-1, n, dtype=int) positions, or all of v when it has
// no more than n.
func linspaceSample(v []int64, n int) []int64 {
	if len(v) <= n {
		return v
	}
	out := make([]int64, n)
	step := float64(len(v)-1) / float64(n-1)
	for i := range n - 1 {
		out[i] = v[int(float64(i)*step)]
	}
	out[n-1] = v[len(v)-1]
	return out
}

// detrend removes x's least-squares line (scipy.signal.detrend's
// "linear").
func detrend(x []float64) {
	n := float64(len(x))
	mt := (n - 1) / 2
	var sx, sxt, stt float64
	for k, v := range x {
		d := float64(k) - mt
		sx += v
		sxt += d * v
		stt += d * d
	}
	mean, slope := sx/n, sxt/stt
	for k := range x {
		x[k] -= mean + slope*(float64(k)-mt)
	}
}

// unscaledMAD returns median(|v − median(v)|) of v, without the 1.4826
// that would make it a standard deviation (as Bombcell takes it).
func unscaledMAD(v []float64) float64 {
	m := median(v)
	d := make([]float64, len(v))
	for k, x := range v {
		d[k] = math.Abs(x - m)
	}
	return median(d)
}
