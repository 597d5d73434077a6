package quality

import (
	"math"
	"slices"
)

// templateInfo is what the metrics need of the units' templates.
type templateInfo struct {
	nt, nc int
	data   []float32
	main   []int     // each unit's main channel: the largest |value|
	peak   []float64 // max |template| on the main channel
}

// templateInfo returns the templates' main channels and peaks, or nil
// without templates.
func (in *Input) templateInfo() *templateInfo {
	if in.Templates == nil {
		return nil
	}
	nt, nc := in.TemplateSamples, in.Channels
	nu := len(in.Templates) / (nt * nc)
	tm := &templateInfo{nt: nt, nc: nc, data: in.Templates, main: make([]int, nu), peak: make([]float64, nu)}
	for u := range nu {
		t := in.Templates[u*nt*nc : (u+1)*nt*nc]
		best, bc := -1.0, 0
		for c := range nc {
			m := 0.0
			for s := range nt {
				m = max(m, math.Abs(float64(t[s*nc+c])))
			}
			if m > best {
				best, bc = m, c
			}
		}
		tm.main[u], tm.peak[u] = bc, best
	}
	return tm
}

// peakToPeakChannel returns the channel where unit u's template has its
// largest peak-to-peak value (the first on a tie), as Bombcell picks a
// unit's peak channel.
func (tm *templateInfo) peakToPeakChannel(u int) int {
	t := tm.data[u*tm.nt*tm.nc : (u+1)*tm.nt*tm.nc]
	best, bc := float32(-1), 0
	for c := range tm.nc {
		lo, hi := t[c], t[c]
		for s := 1; s < tm.nt; s++ {
			lo, hi = min(lo, t[s*tm.nc+c]), max(hi, t[s*tm.nc+c])
		}
		if hi-lo > best {
			best, bc = hi-lo, c
		}
	}
	return bc
}

// channel returns unit u's template on channel c.
func (tm *templateInfo) channel(u, c int) []float64 {
	out := make([]float64, tm.nt)
	base := u * tm.nt * tm.nc
	for s := range out {
		out[s] = float64(tm.data[base+s*tm.nc+c])
	}
	return out
}

// amplitudeCV is SpikeInterface's amplitude_cv_median and
// amplitude_cv_range: the standard deviation of the amplitudes over their
// overall |mean| in bins of average_num_spikes_per_bin / rate seconds
// (NaN when a bin is empty or there are too few bins).
func amplitudeCV(t []int64, amps []float64, T int64, fs float64, opt Options) (med, rng float64) {
	n := len(t)
	if n == 0 {
		return nan, nan
	}
	fr := float64(n) / (float64(T) / fs)
	bin := int64(opt.AmplitudeCVSpikesPerBin / fr * fs)
	if bin <= 0 {
		return nan, nan
	}
	m := math.Abs(mean(amps))
	edges := arangeEdges(T+1, bin)
	var spreads []float64
	for k := 1; k < len(edges); k++ {
		i0, i1 := searchLeft(t, edges[k-1]), searchLeft(t, edges[k])
		spreads = append(spreads, std(amps[i0:i1])/m)
	}
	if len(spreads) < opt.AmplitudeCVMinBins {
		return nan, nan
	}
	p := opt.AmplitudeCVPercentiles
	return median(spreads), percentile(spreads, p[1]) - percentile(spreads, p[0])
}

// amplitudeCutoff is SpikeInterface's amplitude_cutoff: the estimated
// fraction of spikes missing below the detection threshold, at most 0.5.
func amplitudeCutoff(amps []float64, opt Options) float64 {
	n := len(amps)
	if float64(n)/float64(opt.AmplitudeCutoffBins) < opt.AmplitudeCutoffMinRatio {
		return nan
	}
	a := amps
	if median(amps) < 0 {
		a = make([]float64, n)
		for k, v := range amps {
			a[k] = -v
		}
	}
	pdf := gaussianFilterInt(histogramUniform(a, opt.AmplitudeCutoffBins), opt.AmplitudeCutoffSmoothing)
	g := 0
	for k, v := range pdf {
		if v >= pdf[0] {
			g = k
		}
	}
	var missed int64
	for _, v := range pdf[g+1:] {
		missed += v
	}
	f := float64(missed) / float64(int64(n)+missed)
	return min(f, 0.5)
}

// sdRatio is SpikeInterface's sd_ratio of unit u (row i).
func (in *Input) sdRatio(u unit, amps []float64, i int, tm *templateInfo, opt Options) float64 {
	n := len(u.times)
	if n == 0 {
		return nan
	}
	censored := int64(math.RoundToEven(opt.SDRatioCensoredMs * 1e-3 * in.SampleRate))
	kept := make([]float64, 0, n)
	dup := make([]bool, n)
	for a := range n {
		if !dup[a] {
			for b := a + 1; b < n && u.times[b]-u.times[a] <= censored; b++ {
				dup[b] = true
			}
		}
	}
	for k, d := range dup {
		if !d {
			kept = append(kept, amps[k])
		}
	}
	switch len(kept) {
	case 0:
		return nan
	case 1:
		return 0
	}
	var unitStd float64
	if opt.SDRatioCorrectDrift {
		d := make([]float64, len(kept)-1)
		for k := range d {
			d[k] = kept[k+1] - kept[k]
		}
		unitStd = std(d) / math.Sqrt2
	} else {
		unitStd = std(kept)
	}
	noise := float64(in.NoiseLevels[tm.main[i]])
	if opt.SDRatioCorrectTemplate {
		t := tm.channel(i, tm.main[i])
		sq := make([]float64, len(t))
		for k, v := range t {
			sq[k] = v * v
		}
		p := float64(len(t)) * float64(n) / float64(in.NumSamples)
		mt := mean(t)
		noise = math.Sqrt(noise*noise - (p*mean(sq) - p*p*mt*mt))
	}
	return unitStd / noise
}

// drift is SpikeInterface's drift_ptp, drift_std and drift_mad: the
// median depth in each interval holding enough spikes, about the unit's
// overall median depth.
func drift(t []int64, depth []float64, T int64, fs float64, opt Options) (ptp, sd, mad float64) {
	bin := int64(opt.DriftIntervalS * fs)
	if bin <= 0 {
		return nan, nan, nan
	}
	edges := arangeEdges(T/bin*bin+1, bin)
	if len(edges)-1 < opt.DriftMinBins {
		return nan, nan, nan
	}
	ref := median(depth)
	diff := make([]float64, len(edges)-1)
	missing := 0
	for k := range diff {
		i0, i1 := searchLeft(t, edges[k]), searchLeft(t, edges[k+1])
		diff[k] = nan
		if i1-i0 >= opt.DriftMinSpikesPerInterval {
			diff[k] = median(depth[i0:i1]) - ref
		}
		if math.IsNaN(diff[k]) {
			missing++
		}
	}
	if float64(missing) > opt.DriftMinFractionValidIntervals*float64(len(diff)) {
		return nan, nan, nan
	}
	v := nanFree(diff)
	m := median(v)
	dev := make([]float64, len(v))
	for k, x := range v {
		dev[k] = math.Abs(x - m)
	}
	return slices.Max(v) - slices.Min(v), std(v), median(dev)
}
