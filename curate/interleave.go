package curate

import (
	"math"
	"slices"
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
