package quality

import (
	"math"
	"slices"
)

// extremum is the main peak or trough found in one search window, as
// SpikeInterface's detect_peaks_on_templates reports it.
type extremum struct {
	count int     // peaks found at the full prominence
	index int     // the main one's sample index; -1 when none was searched
	width float64 // its width in samples; NaN when found by the fallbacks
}

// detectExtremum searches x[start:end] for peaks of prominence minProm:
// the most prominent one; failing that the most prominent at half the
// prominence; failing that the window's maximum. A window that is empty
// or starts at sample 0 gives index -1, as in SpikeInterface.
func detectExtremum(x []float64, minProm float64, start, end int) extremum {
	end = min(end, len(x))
	if !(end > start && start > 0) {
		return extremum{index: -1, width: nan}
	}
	w := x[start:end]
	best := func(ps []peak) peak {
		b := ps[0]
		for _, p := range ps[1:] {
			if p.prominence > b.prominence {
				b = p
			}
		}
		return b
	}
	main := findPeaks(w, minProm)
	e := extremum{count: len(main)}
	switch half := findPeaks(w, 0.5*minProm); {
	case len(main) > 0:
		b := best(main)
		e.index, e.width = b.at+start, b.width
	case len(half) > 0:
		b := best(half)
		e.index, e.width = b.at+start, b.width
	default:
		e.index, e.width = start+argmax(w), nan
	}
	return e
}

// argmax is the index of the first maximum.
func argmax(x []float64) int {
	b := 0
	for i, v := range x {
		if v > x[b] {
			b = i
		}
	}
	return b
}

// at indexes x as Python does: a negative index counts from the end.
func at(x []float64, i int) float64 {
	if i < 0 {
		i += len(x)
	}
	return x[i]
}

// halfWidth returns the threshold crossings of half x[i] around the
// extremum at i (x positive there), or -1, -1.
func halfWidth(x []float64, i int) (int, int) {
	thr := 0.5 * at(x, i)
	l, r := -1, -1
	for k := 0; k+1 < len(x); k++ {
		if (x[k] >= thr) != (x[k+1] >= thr) {
			if k < i {
				l = k
			} else if r < 0 {
				r = k
			}
		}
	}
	if l < 0 || r < 0 {
		return -1, -1
	}
	return l, r
}

// shapeMetrics computes unit i's template shape metrics, as
// SpikeInterface's template_metrics extension defines them, on the main
// channel's template upsampled by opt.UpsamplingFactor.
func (in *Input) shapeMetrics(i int, tm *templateInfo, opt ShapeOptions, cols *columns) {
	up := max(opt.UpsamplingFactor, 1)
	fs := in.SampleRate * float64(up)
	t := upsample(tm.channel(i, tm.main[i]), up)
	neg := make([]float64, len(t))
	maxAbs := 0.0
	for k, v := range t {
		neg[k] = -v
		maxAbs = max(maxAbs, math.Abs(v))
	}
	if maxAbs == 0 {
		return // no waveform (a unit without spikes): NaN throughout
	}
	minProm := opt.MinThreshDetectPeaksTroughs * maxAbs
	edge := 0
	if opt.EdgeExclusionMs > 0 {
		edge = int(opt.EdgeExclusionMs / 1000 * fs)
	}
	left, right := edge, len(t)-edge
	trough := detectExtremum(neg, minProm, left, right)
	dist := opt.MinExtremumDistanceSamples
	if l, r := halfWidth(neg, trough.index); l >= 0 {
		dist = max(dist, int(opt.MinPeakTroughDistanceRatio*float64(r-l)))
	}
	before := detectExtremum(t, minProm, left, trough.index-dist)
	after := detectExtremum(t, minProm, trough.index+dist, right)

	cols.set("num_positive_peaks", i, float64(before.count+after.count))
	cols.set("num_negative_peaks", i, float64(trough.count))
	cols.set("peak_to_trough_duration", i, float64(after.index-trough.index)/fs)
	cols.set("waveform_baseline_flatness", i, baselineFlatness(t, fs, opt.BaselineWindowMs))
	cols.set("waveform_baseline_fraction", i, tm.baselineFraction(i))
	ta, ba, aa := math.Abs(at(t, trough.index)), math.Abs(at(t, before.index)), math.Abs(at(t, after.index))
	cols.set("peak_before_to_trough_ratio", i, safeRatio(ba, ta))
	cols.set("peak_after_to_trough_ratio", i, safeRatio(aa, ta))
	cols.set("peak_before_to_peak_after_ratio", i, safeRatio(ba, aa))
	cols.set("main_peak_to_trough_ratio", i, safeRatio(max(ba, aa), ta))
	cols.set("trough_width", i, trough.width/fs)
	cols.set("peak_before_width", i, before.width/fs)
	cols.set("peak_after_width", i, after.width/fs)
	if in.ChannelPositions != nil {
		cols.set("exp_decay", i, in.expDecay(i, tm, up, opt.ExpDecayMinR2))
	}
}

// safeRatio is a/b, NaN when b is 0.
func safeRatio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return nan
	}
	return a / b
}

// baselineFlatness is waveform_baseline_flatness: the largest deviation
// of the baseline window from its mean over the template's largest
// deviation from that mean.
func baselineFlatness(t []float64, fs float64, win [2]float64) float64 {
	a := max(0, int(win[0]/1000*fs))
	b := min(len(t), int(win[1]/1000*fs))
	if b <= a {
		return nan
	}
	m := mean(t[a:b])
	dev := func(x []float64) float64 {
		d := 0.0
		for _, v := range x {
			d = max(d, math.Abs(v-m))
		}
		return d
	}
	w := dev(t)
	if w == 0 {
		return nan
	}
	return dev(t[a:b]) / w
}

// baselineFraction is Bombcell's waveformBaselineFlatness (which its
// maxWvBaselineFraction bounds): on the main channel by peak-to-peak of
// unit i's template, not upsampled, the largest |value| of the baseline
// window over the largest |value|. The window is Bombcell's for
// Kilosort4's 61-sample templates, samples [0, 10), scaled to other
// lengths; unlike waveform_baseline_flatness it takes no mean off and
// sees no upsampling's edge ripple.
func (tm *templateInfo) baselineFraction(i int) float64 {
	best, bc := -1.0, 0
	for c := range tm.nc {
		lo, hi := math.Inf(1), math.Inf(-1)
		for s := range tm.nt {
			v := float64(tm.data[(i*tm.nt+s)*tm.nc+c])
			lo, hi = min(lo, v), max(hi, v)
		}
		if hi-lo > best {
			best, bc = hi-lo, c
		}
	}
	x := tm.channel(i, bc)
	stop := max(1, int(math.Round(float64(tm.nt)*10/61)))
	peak, base := 0.0, 0.0
	for s, v := range x {
		peak = max(peak, math.Abs(v))
		if s < stop {
			base = max(base, math.Abs(v))
		}
	}
	if peak == 0 {
		return nan
	}
	return base / peak
}

// expDecay is exp_decay (SpikeInterface's default, all channels): the
// decay constant of amp0·exp(−decay·d) + offset fitted to the channels'
// peak-to-peak amplitudes against their distance d from the largest,
// with decay in [1e-5, 2] /µm, amp0 within ±50 % of the largest amplitude
// and offset in [0, 2·smallest amplitude]; NaN when R² < minR2. Channels
// where the template is exactly zero are left out, as a sparse
// SpikeInterface analyzer leaves out channels outside the unit's sparsity.
func (in *Input) expDecay(i int, tm *templateInfo, up int, minR2 float64) float64 {
	var amp, x, y []float64
	var xs []float64
	for c := range tm.nc {
		t := tm.channel(i, c)
		if !slices.ContainsFunc(t, func(v float64) bool { return v != 0 }) {
			continue
		}
		u := upsample(t, up)
		amp = append(amp, slices.Max(u)-slices.Min(u))
		xs = append(xs, in.ChannelPositions[2*c], in.ChannelPositions[2*c+1])
	}
	if len(amp) < 3 {
		return nan
	}
	m := argmax(amp)
	for k := range amp {
		dx, dy := xs[2*k]-xs[2*m], xs[2*k+1]-xs[2*m+1]
		x = append(x, math.Hypot(dx, dy))
		y = append(y, amp[k])
	}
	amp0, off0 := amp[m], slices.Min(amp)
	if !(off0 > 0) {
		return nan // scipy refuses equal lower and upper bounds
	}
	decay, r2 := fitExpDecay(x, y, amp0, off0)
	if !(r2 >= minR2) {
		return nan
	}
	return decay
}

// fitExpDecay fits y ≈ a·exp(−d·x) + o within the bounds of expDecay by
// least squares: for each decay d the best bounded (a, o) is linear, and
// d is found on a log grid refined by golden-section search. It returns d
// and the fit's R².
func fitExpDecay(x, y []float64, amp0, off0 float64) (float64, float64) {
	aLo, aHi, oLo, oHi := 0.5*amp0, 1.5*amp0, 0.0, 2*off0
	sse := func(d float64) (float64, float64, float64) {
		e := make([]float64, len(x))
		for k, v := range x {
			e[k] = math.Exp(-d * v)
		}
		a, o := boundedLinear2(e, y, aLo, aHi, oLo, oHi)
		s := 0.0
		for k := range y {
			r := a*e[k] + o - y[k]
			s += r * r
		}
		return s, a, o
	}
	lo, hi := math.Log(1e-5), math.Log(2.0)
	const grid = 400
	bestK, bestS := 0, math.Inf(1)
	for k := 0; k <= grid; k++ {
		if s, _, _ := sse(math.Exp(lo + (hi-lo)*float64(k)/grid)); s < bestS {
			bestK, bestS = k, s
		}
	}
	a := lo + (hi-lo)*float64(max(bestK-1, 0))/grid
	b := lo + (hi-lo)*float64(min(bestK+1, grid))/grid
	g := (math.Sqrt(5) - 1) / 2
	for range 100 {
		c, d := b-g*(b-a), a+g*(b-a)
		sc, _, _ := sse(math.Exp(c))
		sd, _, _ := sse(math.Exp(d))
		if sc < sd {
			b = d
		} else {
			a = c
		}
	}
	dec := math.Exp((a + b) / 2)
	s, _, _ := sse(dec)
	m := mean(y)
	tot := 0.0
	for _, v := range y {
		tot += (v - m) * (v - m)
	}
	return dec, 1 - s/tot
}

// boundedLinear2 minimises Σ(a·e + o − y)² over a in [aLo, aHi] and o in
// [oLo, oHi]: the free optimum if inside, else the best of the edges.
func boundedLinear2(e, y []float64, aLo, aHi, oLo, oHi float64) (float64, float64) {
	n := float64(len(e))
	var se, see, sy, sey float64
	for k := range e {
		se += e[k]
		see += e[k] * e[k]
		sy += y[k]
		sey += e[k] * y[k]
	}
	cost := func(a, o float64) float64 {
		// Σ(a e + o − y)² up to the constant Σy².
		return a*a*see + 2*a*o*se + n*o*o - 2*a*sey - 2*o*sy
	}
	clamp := func(v, lo, hi float64) float64 { return min(max(v, lo), hi) }
	det := see*n - se*se
	if det != 0 {
		a := (sey*n - se*sy) / det
		o := (see*sy - se*sey) / det
		if a >= aLo && a <= aHi && o >= oLo && o <= oHi {
			return a, o
		}
	}
	bestA, bestO, best := aLo, oLo, math.Inf(1)
	try := func(a, o float64) {
		if c := cost(a, o); c < best {
			bestA, bestO, best = a, o, c
		}
	}
	for _, a := range []float64{aLo, aHi} {
		try(a, clamp((sy-a*se)/n, oLo, oHi))
	}
	for _, o := range []float64{oLo, oHi} {
		if see > 0 {
			try(clamp((sey-o*se)/see, aLo, aHi), o)
		}
	}
	return bestA, bestO
}
