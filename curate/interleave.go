package curate

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// The interleaved merge (dspk's; docs/sort.md, "Units that drift across
// the site pattern"): a unit that moves along the probe is cut by the
// clusterings into pieces that take its spikes in turn, one while the
// unit sits at one phase of the site pattern, another at the next. Their
// correlogram cannot pass Kilosort4's test (the pieces are rarely active
// together, so its baseline is empty and the test has no evidence), but
// their alternation is itself the evidence: two neurons fire
// independently, so each spike of one has a spike of the other within a
// window as often as the other's rate predicts; the pieces of one unit
// almost never do.
const (
	// InterleaveWindow is the half-width in seconds of the window around
	// each spike of the smaller unit in which the other's spikes are
	// looked for.
	InterleaveWindow = 0.5
	// InterleaveShortWindow is the half-width of the second window the
	// test tries when the first finds no alternation: pieces that take
	// turns within a second (a unit at the edge between two phases of
	// the site pattern, or moving fast) meet within 0.5 s but rarely
	// within 50 ms.
	InterleaveShortWindow = 0.05
	// InterleaveRatio is the largest ratio of observed to expected
	// spikes with a partner that counts as alternation.
	InterleaveRatio = 0.5
	// interleaveZ is the least deficit, in binomial standard deviations,
	// that counts as alternation rather than chance.
	interleaveZ = 4
	// interleaveMinExpected is the least expected count of spikes with
	// a partner: below it the pair's trains say nothing.
	interleaveMinExpected = 10
)

// InterleavedDefault is dspk's default of [Settings.Interleaved]: the
// least template similarity of two units that the interleaved merge
// joins when their trains alternate.
const InterleavedDefault = 0.9

// Interleaved reports whether spike trains a and b (seconds, any order)
// alternate in time: of the spikes of the smaller train, those with a
// spike of the other within ±[InterleaveWindow] (or, failing that,
// ±[InterleaveShortWindow]) are at most [InterleaveRatio] of what
// independent firing at the other's mean rate over span seconds predicts,
// short of it by interleaveZ binomial standard deviations, with at least
// interleaveMinExpected predicted. It also returns the observed and
// predicted counts of the window that decided (the first, unless the
// second found alternation).
func Interleaved(a, b []float64, span float64) (ok bool, observed int, expected float64) {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 || !(span > 0) {
		return false, 0, 0
	}
	b = slices.Clone(b)
	slices.Sort(b)
	ok, observed, expected = interleavedAt(a, b, span, InterleaveWindow)
	if !ok {
		if ok2, o2, e2 := interleavedAt(a, b, span, InterleaveShortWindow); ok2 {
			return ok2, o2, e2
		}
	}
	return ok, observed, expected
}

// interleavedAt is the test of [Interleaved] with one half-width w; b is
// sorted.
func interleavedAt(a, b []float64, span, w float64) (ok bool, observed int, expected float64) {
	for _, t := range a {
		i, _ := slices.BinarySearch(b, t-w)
		if i < len(b) && b[i] <= t+w {
			observed++
		}
	}
	p := -math.Expm1(-float64(len(b)) / span * 2 * w)
	expected = float64(len(a)) * p
	sd := math.Sqrt(expected * (1 - p))
	ok = expected >= interleaveMinExpected && float64(observed) <= InterleaveRatio*expected &&
		expected-float64(observed) >= interleaveZ*sd
	return ok, observed, expected
}

// The hand-over test: a unit whose waveform changes slowly as it drifts
// can be cut by the clusterings into a piece that fades while another
// rises, both active for tens of seconds during the change (perf-sort.md,
// "What SpikeInterface's false positives are"). Their spikes meet as
// often as independent trains would, so [Interleaved] keeps them apart;
// but their rates over time move against each other, which two neurons'
// rarely do.
const (
	// HandoverBin is the bin width in seconds of the rates the hand-over
	// test compares.
	HandoverBin = 10.0
	// HandoverCorrelation is the largest correlation of two units'
	// spike counts per bin that counts as a hand-over. Independent trains
	// of steady rates give 0 ± 1/√(bins−1): −0.7 is 2.3 standard
	// deviations at the least bins and 5.4 at 60.
	HandoverCorrelation = -0.7
	// handoverMinBins is the least number of bins (the recording's span
	// over HandoverBin) the test needs.
	handoverMinBins = 10
	// handoverRefractory is the half-width in seconds of the centre of
	// the cross-correlogram that vetoes a hand-over: one neuron's pieces
	// leave it nearly empty.
	handoverRefractory = 0.001
	// handoverMinExpected is the least count of pairs in that centre that
	// the rates must predict for the centre to veto: below it, a few
	// pairs (collisions with a neighbour's spikes) say nothing.
	handoverMinExpected = 8
	// handoverCentre is the largest fraction of the predicted pairs the
	// centre may hold.
	handoverCentre = 0.25
)

// HandedOver reports whether spike trains a and b (seconds in [0, span),
// any order) hand one unit over: their counts in bins of [HandoverBin]
// correlate at most at [HandoverCorrelation] over at least
// handoverMinBins bins, and, where their rates bin by bin predict at
// least handoverMinExpected pairs in their cross-correlogram's centre
// (±1 ms), it holds at most handoverCentre of them. It also returns the correlation (NaN where a train's
// counts do not vary or the span is too short).
func HandedOver(a, b []float64, span float64) (ok bool, r float64) {
	nb := int(span / HandoverBin)
	if nb < handoverMinBins || len(a) == 0 || len(b) == 0 {
		return false, math.NaN()
	}
	ca, cb := make([]float64, nb), make([]float64, nb)
	for _, x := range []struct {
		t []float64
		c []float64
	}{{a, ca}, {b, cb}} {
		for _, t := range x.t {
			if k := int(t / HandoverBin); k >= 0 && k < nb {
				x.c[k]++
			}
		}
	}
	r = stat.Correlation(ca, cb, nil)
	if !(r <= HandoverCorrelation) {
		return false, r
	}
	expected := 0.0
	for k := range nb {
		expected += ca[k] * cb[k] * 2 * handoverRefractory / HandoverBin
	}
	if expected < handoverMinExpected {
		return true, r
	}
	sb := slices.Clone(b)
	slices.Sort(sb)
	observed := 0
	for _, t := range a {
		i, _ := slices.BinarySearch(sb, t-handoverRefractory)
		for ; i < len(sb) && sb[i] <= t+handoverRefractory; i++ {
			observed++
		}
	}
	return float64(observed) <= handoverCentre*expected, r
}
