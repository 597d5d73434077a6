package curate

import (
	"fmt"
	"math"
	"slices"

	"dspk/kilosort"
)

// Correlogram constants (Kilosort4's CCG.py, kilosort4-sort.md §7.1).
const (
	// CCGBins is the number of bins on each side of the centre bin.
	CCGBins = 500
	// CCGBin is the bin width in seconds.
	CCGBin = 0.001
	// CCGLen is the length of a correlogram, 2·CCGBins + 1.
	CCGLen = 2*CCGBins + 1
	// MinSpikes is the count a cluster must exceed for its
	// autocorrelogram to be judged ([Refract]).
	MinSpikes = 10
)

// Settings are the curation settings a caller chooses: Kilosort4's
// ([kilosort.Curation], under its names in the comments, with its
// defaults) and dspk's same-waveform merge. [DefaultSettings] gives the
// defaults.
type Settings struct {
	// ACGThreshold: a cluster is good when its autocorrelogram has
	// R12 < ACGThreshold and Q12 < 0.2 (acg_threshold, 0.2).
	ACGThreshold float64
	// CCGThreshold: a pair is cross-refractory when R12 < CCGThreshold and
	// Q12 < 0.05 (ccg_threshold, 0.25).
	CCGThreshold float64
	// RThresh is the least template similarity of a merge candidate
	// (r_thresh, which Kilosort4 hard-codes at 0.5).
	RThresh float64
	// SameWaveform is the least template similarity at which two units of
	// one amplitude are one waveform and merge without the correlogram
	// test ([Merge]; dspk's rule, [SameWaveformDefault]; 0 leaves
	// Kilosort4's merges alone).
	SameWaveform float64
	// Interleaved is the least template similarity at which two units
	// whose spike trains alternate in time are one drifting unit and
	// merge after Kilosort4's merges ([Interleaved]; dspk's rule,
	// [InterleavedDefault]; 0 turns it off).
	Interleaved float64
	// Coincident is the least fraction of the smaller unit's spikes that
	// coincide with the other's at which two nearby units are one
	// neuron matched twice and merge last ([Coincidence]; dspk's rule,
	// [CoincidentDefault]; 0 turns it off).
	Coincident float64
	// MinRate is the least firing rate in Hz of a unit over the span of
	// the sort's spikes: units under it are dropped after the merges
	// (dspk's rule, [MinRateDefault]; 0 keeps every unit, as Kilosort4).
	MinRate float64
	// AmplitudeSplit is the least separation d′ (in pooled standard
	// deviations of the log amplitudes) of a unit's two amplitude modes
	// at which it is split in two after the merges (dspk's rule,
	// [AmplitudeSplitDefault]; 0 turns it off, as Kilosort4).
	AmplitudeSplit float64
	// DoubleCount is the largest distance in µm between two units' best
	// channels at which a spike of each within DuplicateSpikeMs is one
	// event counted twice, the smaller unit's dropped (dspk's rule,
	// [DoubleCountDefault]; 0 turns it off, as Kilosort4).
	DoubleCount float64
	// DuplicateSpikeMs is the least time between kept spikes of a cluster
	// (duplicate_spike_ms, 0.25).
	DuplicateSpikeMs float64
	// PositionLimit is the largest distance in µm of a channel from the
	// template's best channel that weighs in a spike position
	// (position_limit, 100).
	PositionLimit float64
}

// MinRateDefault is dspk's default of [Settings.MinRate], 0.1 Hz: five
// times Kilosort 2's minFR (0.02 Hz), under which it removed templates.
// On drifting simulations of two simulators, the units that match no
// neuron and are made of noise crossings fired at 0.003–0.08 Hz; the
// simulated neurons at 2 Hz or more (docs/curate.md §10).
const MinRateDefault = 0.1

// SameWaveformDefault is dspk's default of [Settings.SameWaveform]: units
// whose templates correlate at least this much are one waveform cut in
// two (docs/sort.md).
const SameWaveformDefault = 0.99

// DefaultSettings returns Kilosort4's curation defaults
// ([kilosort.CurationDefaults], [kilosort.MergeRThresh]) and dspk's
// same-waveform, interleaved and coincident merges at
// [SameWaveformDefault], [InterleavedDefault] and [CoincidentDefault],
// units under [MinRateDefault] dropped and units of two amplitude modes
// split at [AmplitudeSplitDefault], and double counts of units within
// [DoubleCountDefault] µm dropped.
func DefaultSettings() Settings {
	ks := kilosort.CurationDefaults()
	return Settings{ACGThreshold: ks.ACGThreshold, CCGThreshold: ks.CCGThreshold, RThresh: kilosort.MergeRThresh,
		SameWaveform: SameWaveformDefault, Interleaved: InterleavedDefault, Coincident: CoincidentDefault, MinRate: MinRateDefault, AmplitudeSplit: AmplitudeSplitDefault, DoubleCount: DoubleCountDefault, DuplicateSpikeMs: ks.DuplicateSpikeMs, PositionLimit: ks.PositionLimit}
}

// Validate reports the first setting that cannot work, under the flag
// name of dspk sort.
func (s Settings) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !(s.ACGThreshold >= 0) || !finite(s.ACGThreshold):
		return fmt.Errorf("curate: acg_threshold = %g must be 0 or more and finite", s.ACGThreshold)
	case !(s.CCGThreshold >= 0) || !finite(s.CCGThreshold):
		return fmt.Errorf("curate: ccg_threshold = %g must be 0 or more and finite", s.CCGThreshold)
	case !(s.RThresh >= 0 && s.RThresh <= 1):
		return fmt.Errorf("curate: merge similarity r_thresh = %g must be in [0, 1]", s.RThresh)
	case !(s.SameWaveform >= 0 && s.SameWaveform <= 1):
		return fmt.Errorf("curate: same-waveform = %g must be in [0, 1] (a template similarity; 0 turns the rule off)", s.SameWaveform)
	case !(s.Interleaved >= 0 && s.Interleaved <= 1):
		return fmt.Errorf("curate: interleaved = %g must be in [0, 1] (a template similarity; 0 turns the rule off)", s.Interleaved)
	case !(s.Coincident >= 0 && s.Coincident <= 1):
		return fmt.Errorf("curate: coincident = %g must be in [0, 1] (a fraction of spikes; 0 turns the rule off)", s.Coincident)
	case !(s.MinRate >= 0) || !finite(s.MinRate):
		return fmt.Errorf("curate: min-rate = %g Hz must be 0 (keep every unit) or more and finite", s.MinRate)
	case !(s.AmplitudeSplit >= 0) || !finite(s.AmplitudeSplit):
		return fmt.Errorf("curate: amplitude-split = %g must be 0 (no splits) or more and finite", s.AmplitudeSplit)
	case !(s.DoubleCount >= 0) || !finite(s.DoubleCount):
		return fmt.Errorf("curate: double-counts = %g µm must be 0 (none dropped) or more and finite", s.DoubleCount)
	case !(s.DuplicateSpikeMs >= 0) || !finite(s.DuplicateSpikeMs):
		return fmt.Errorf("curate: duplicate_spike_ms = %g must be 0 (no duplicates removed) or more and finite", s.DuplicateSpikeMs)
	case !(s.PositionLimit > 0) || !finite(s.PositionLimit):
		return fmt.Errorf("curate: position_limit = %g µm must be positive and finite", s.PositionLimit)
	}
	return nil
}

// Params are the settings of a curation: the recording's sample rate and
// the chosen [Settings].
type Params struct {
	// FS is the sample rate in Hz of the spike times.
	FS float64
	Settings
}

// DefaultParams returns [DefaultSettings] at Kilosort4's default rate,
// 30 kHz.
func DefaultParams() Params {
	return Params{FS: kilosort.Defaults().Fs, Settings: DefaultSettings()}
}

// Validate reports the first setting that cannot work.
func (p Params) Validate() error {
	if !(p.FS > 0) || math.IsNaN(p.FS) || math.IsInf(p.FS, 0) {
		return fmt.Errorf("curate: sample rate %g Hz must be positive and finite", p.FS)
	}
	return p.Settings.Validate()
}

// DuplicateSpikeBins returns ⌊DuplicateSpikeMs·FS/1000⌋ (7 at 30 kHz).
func (p Params) DuplicateSpikeBins() int64 {
	return int64(math.Floor(p.DuplicateSpikeMs * p.FS / 1000))
}

// Seconds returns samples/fs in float64, the time base of the
// correlograms.
func Seconds(samples []int64, fs float64) []float64 {
	out := make([]float64, len(samples))
	for i, s := range samples {
		out[i] = float64(s) / fs
	}
	return out
}

// CCG writes into dst (length CCGLen, allocated when nil, zeroed here) the
// cross-correlogram of trains t1 and t2 (seconds) and returns it: the pair
// (i, j) with t1[i] ∈ (t2[j] − 0.5, t2[j] + 0.5] is counted in bin
// b = round-half-even((t2[j] − t1[i])/0.001), stored at dst[b + CCGBins].
// An autocorrelogram (the same train twice) counts i = j in the centre
// bin. The trains need not be sorted (sorted copies are made when they are
// not). CCG panics if dst has the wrong length.
func CCG(dst []int64, t1, t2 []float64) []int64 {
	if dst == nil {
		dst = make([]int64, CCGLen)
	}
	if len(dst) != CCGLen {
		panic("curate: CCG destination length is not CCGLen")
	}
	clear(dst)
	t1, t2 = sorted(t1), sorted(t2)
	const w = CCGBins * CCGBin
	lo, hi := 0, 0
	for _, b := range t2 {
		for lo < len(t1) && !(t1[lo] > b-w) {
			lo++
		}
		hi = max(hi, lo)
		for hi < len(t1) && t1[hi] <= b+w {
			hi++
		}
		for _, a := range t1[lo:hi] {
			k := int(math.RoundToEven((b-a)/CCGBin)) + CCGBins
			dst[min(max(k, 0), CCGLen-1)]++
		}
	}
	return dst
}

// sorted returns t if it is sorted ascending, else a sorted copy.
func sorted(t []float64) []float64 {
	if slices.IsSorted(t) {
		return t
	}
	t = slices.Clone(t)
	slices.Sort(t)
	return t
}

// Metrics are Kilosort4's correlogram statistics (kilosort4-sort.md §7.1).
// R12 is the refractory-violation ratio (ContamPct = 100·R12) and Q12 the
// probability that the central bins are as empty as they are by chance.
type Metrics struct {
	// Valid is false when the trains span no time or one is empty: Kilosort
	// divides by zero there; here every test on the metrics fails.
	Valid bool
	// R12 is min_i R_i over the baseline, Q12 min_i Q_i.
	R12, Q12 float64
	// R00 is the far baseline (499 bins), R01 the larger near shoulder
	// (40 bins) as ratios to the Poisson expectation; Q00 the largest of
	// the three mean counts per bin.
	R00, R01, Q00 float64
}

// Refractory reports the autocorrelogram test: R12 < acgThreshold and
// Q12 < 0.2.
func (m Metrics) Refractory(acgThreshold float64) bool {
	return m.Valid && m.R12 < acgThreshold && m.Q12 < 0.2
}

// CrossRefractory reports the merge test of a pair: R12 < ccgThreshold
// and Q12 < 0.05.
func (m Metrics) CrossRefractory(ccgThreshold float64) bool {
	return m.Valid && m.R12 < ccgThreshold && m.Q12 < 0.05
}

// MetricsOf returns the metrics of correlogram K (length CCGLen, not
// modified) of trains of n1 and n2 spikes spanning T seconds (max − min
// over both trains). T ≤ 0 or an empty train gives Metrics{Valid: false}.
func MetricsOf(K []int64, n1, n2 int, T float64) Metrics {
	if len(K) != CCGLen {
		panic("curate: correlogram length is not CCGLen")
	}
	if !(T > 0) || n1 == 0 || n2 == 0 {
		return Metrics{R12: math.Inf(1), Q12: 1}
	}
	sum := func(lo, hi int) float64 { // bins b ∈ [lo, hi]
		var s int64
		for b := lo; b <= hi; b++ {
			s += K[b+CCGBins]
		}
		return float64(s)
	}
	e := float64(n1) * float64(n2) * CCGBin / T
	far := sum(-499, -251) + sum(250, 499)
	nl, nr := sum(-50, -11), sum(10, 49)
	m := Metrics{Valid: true}
	m.R00 = far / (499 * e)
	m.R01 = max(nl, nr) / (40 * e)
	m.Q00 = max(far/499, nl/40, nr/40)
	m.R12, m.Q12 = math.Inf(1), math.Inf(1)
	var s float64 // Σ_{0<|b|≤i} K (the centre bin never counts)
	for i := 1; i <= 10; i++ {
		s += float64(K[CCGBins-i] + K[CCGBins+i])
		n := s / 2
		r := 2 * n / (2 * float64(i) * e)
		lam := float64(i) * m.Q00
		q := 0.5 * (1 + math.Erf((n-lam)/math.Sqrt(2*lam+1e-10)))
		m.R12 = min(m.R12, r)
		m.Q12 = min(m.Q12, q)
	}
	m.R12 /= 1e-10 + max(m.R00, m.R01)
	return m
}

// PairMetrics returns the correlogram metrics of trains t1 and t2
// (seconds): T is max − min over both trains.
func PairMetrics(t1, t2 []float64) Metrics {
	if len(t1) == 0 || len(t2) == 0 {
		return MetricsOf(make([]int64, CCGLen), len(t1), len(t2), 0)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, t := range [2][]float64{t1, t2} {
		for _, v := range t {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return MetricsOf(CCG(nil, t1, t2), len(t1), len(t2), hi-lo)
}

// Refract judges the autocorrelogram of every label 0…max(labels)
// (times in seconds, labels ≥ 0): good[k] is the ACG test
// ([Metrics.Refractory] with p.ACGThreshold) and contam[k] its R12, for
// clusters of more than MinSpikes spikes spanning some time; other labels
// get (false, 0), as Kilosort's refract does (ContamPct 0 for ≤ 10
// spikes). Refract panics if the lengths differ or a label is negative.
func Refract(labels []int32, times []float64, p Params) (good []bool, contam []float64) {
	if len(labels) != len(times) {
		panic("curate: Refract labels and times differ in length")
	}
	trains := groupTimes(labels, times)
	good = make([]bool, len(trains))
	contam = make([]float64, len(trains))
	K := make([]int64, CCGLen)
	for k, tr := range trains {
		if len(tr) <= MinSpikes {
			continue
		}
		slices.Sort(tr)
		T := tr[len(tr)-1] - tr[0]
		if !(T > 0) {
			continue
		}
		m := MetricsOf(CCG(K, tr, tr), len(tr), len(tr), T)
		good[k] = m.Refractory(p.ACGThreshold)
		contam[k] = m.R12
	}
	return good, contam
}

// groupTimes returns the times of each label 0…max(labels), in input
// order.
func groupTimes(labels []int32, times []float64) [][]float64 {
	n := 0
	for _, l := range labels {
		if l < 0 {
			panic("curate: negative cluster label")
		}
		n = max(n, int(l)+1)
	}
	count := make([]int, n)
	for _, l := range labels {
		count[l]++
	}
	out := make([][]float64, n)
	for k := range out {
		out[k] = make([]float64, 0, count[k])
	}
	for i, l := range labels {
		out[l] = append(out[l], times[i])
	}
	return out
}
