package stream

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestCopies checks the duplicate and coincident rules: copies on a
// weaker template of the same unit and the later of two spikes of one
// template go at once; a coincident pair's copies go once the pair has
// shown itself, and not before; spikes of the pair apart from each other
// stay; a spike held as a possible copy waits for the horizon.
func TestCopies(t *testing.T) {
	m := &Model{UnitOf: []int32{0, 0, 1, 2}, Norm: []float64{2, 1, 0.5, 3}, Units: 3,
		X: []float64{0, 0, 500}, Y: []float64{0, 20, 0}, DuplicateBins: 7, PositionLimit: 100}
	m.Templates.N = 4
	c := newCopies(m, []int{0, 0, 1, 2}) // template 3 is 500 µm away: never paired
	var out []cand
	emit := func(d cand) { out = append(out, d) }
	type sp struct {
		t int64
		k int32
	}
	feed := func(spikes []sp, horizon int64) {
		for _, s := range spikes {
			c.add(s.t, s.k, m.UnitOf[s.k], 1)
		}
		c.ready(horizon, emit)
	}
	// Same unit: template 1 five samples after template 0 is a copy.
	feed([]sp{{1000, 0}, {1005, 1}}, 2000)
	// One template twice within the duplicate window: the later goes.
	feed([]sp{{3000, 0}, {3004, 0}}, 4000)
	if len(out) != 2 || out[0].t != 1000 || out[1].t != 3000 {
		t.Fatalf("duplicates: kept %+v", out)
	}
	// A possible copy (template 1 shares its unit) waits for the horizon.
	out = out[:0]
	feed([]sp{{5000, 1}}, 5010)
	if len(out) != 0 {
		t.Fatalf("a spike 10 samples before the horizon went out: %+v", out)
	}
	c.ready(5100, emit)
	if len(out) != 1 {
		t.Fatalf("held spike not given out after the horizon passed: %+v", out)
	}
	// Coincident pair: template 2 (weaker, unit 1) copies template 0 at +5.
	out = out[:0]
	for i := range int64(40) {
		tt := 10000 + 1000*i
		feed([]sp{{tt, 0}, {tt + 5, 2}, {tt + 500, 3}}, tt+900)
	}
	c.ready(math.MaxInt64/2, emit)
	var kept2, kept3 int
	for _, d := range out {
		switch d.k {
		case 2:
			kept2++
		case 3:
			kept3++
		}
	}
	// The pair shows itself at its 10th shared spike, before that copy
	// goes out: the 9 before it went out as spikes of unit 1.
	if kept2 != 9 {
		t.Errorf("the coincident pair's copies given out: %d, want the 9 before the rule knew the pair", kept2)
	}
	if kept3 != 40 {
		t.Errorf("an unpaired template's spikes: %d of 40", kept3)
	}
	// A spike of the weaker template away from the stronger one stays.
	out = out[:0]
	feed([]sp{{200000, 2}}, 300000)
	if len(out) != 1 {
		t.Errorf("a lone spike of the weak template: %+v", out)
	}
}

// TestCopiesDoubleCount checks the double-count rule: a spike of a
// weaker template of another unit within duplicate_spike_ms of a nearby
// stronger one goes, and waits for the horizon until it is known; one
// further in time or on the probe stays, and a sort without the rule
// keeps both.
func TestCopiesDoubleCount(t *testing.T) {
	for _, dc := range []float64{50, 0} {
		m := &Model{UnitOf: []int32{0, 1, 2}, Norm: []float64{3, 1, 1}, Units: 3,
			X: []float64{0, 0, 0}, Y: []float64{0, 40, 400}, DuplicateBins: 7, PositionLimit: 10, DoubleCount: dc}
		m.Templates.N = 3
		c := newCopies(m, []int{0, 1, 2})
		var out []cand
		emit := func(d cand) { out = append(out, d) }
		c.add(1000, 1, 1, 1) // the weaker unit's fit of template 0's event at 1004
		c.ready(1005, emit)
		if dc > 0 && len(out) != 0 {
			t.Fatalf("a possible double count went out before the stronger spike could come: %+v", out)
		}
		c.add(1004, 0, 0, 1)
		c.add(1020, 1, 1, 1) // 16 samples later: its own spike
		c.add(1022, 2, 2, 1) // 400 µm away: not near
		c.ready(math.MaxInt64/2, emit)
		var ts []int64
		for _, d := range out {
			ts = append(ts, d.t)
		}
		want := []int64{1004, 1020, 1022}
		if dc == 0 {
			want = []int64{1000, 1004, 1020, 1022}
		}
		if fmt.Sprint(ts) != fmt.Sprint(want) {
			t.Errorf("double-count %g µm: given out %v, want %v", dc, ts, want)
		}
	}
}

// TestPercentile checks the latency histogram's percentiles.
func TestPercentile(t *testing.T) {
	s := newStats(0)
	for i := 1; i <= 100; i++ { // one latency inside every other bin: (2i − ½) bins
		s.spike(Spike{Latency: latencyBin*2*time.Duration(i) - latencyBin/2})
	}
	if got, want := s.Percentile(50), 100*latencyBin; got != want { // the upper edge of the 50th's bin
		t.Errorf("p50 %v, want %v", got, want)
	}
	if got, want := s.Percentile(100), 199*latencyBin+latencyBin/2; got != want { // the largest itself
		t.Errorf("p100 %v, want %v", got, want)
	}
	if s.Percentile(1) != 2*latencyBin || newStats(0).Percentile(50) != 0 {
		t.Errorf("p1 %v, empty p50 %v", s.Percentile(1), newStats(0).Percentile(50))
	}
}

// TestUnitOfSplit checks that a spike of a template the sort divided
// goes to the unit whose mean features are nearest on the channels the
// spike and the unit share, and other templates' spikes to their
// majority unit.
func TestUnitOfSplit(t *testing.T) {
	const P = 2
	m := &Model{UnitOf: []int32{4, 7}, Split: map[int32][]splitUnit{
		1: {
			{unit: 7, chans: []int32{3, 5}, mean: []float64{1, 0, 1, 0}},
			{unit: 9, chans: []int32{5, 8}, mean: []float64{0, 1, 9, 9}}, // channel 8 is not the spike's
		},
	}}
	chans := []int32{5, 3, 6}
	// On channel 5 (the spike's first) unit 7 has (1, 0) and unit 9 (0, 1).
	near9 := []float32{0.1, 0.9, 1, 0, 0, 0}
	near7 := []float32{0.9, 0.1, 1, 0, 0, 0}
	if u := m.unitOf(1, near9, chans, P); u != 9 {
		t.Errorf("spike nearer unit 9's mean: unit %d", u)
	}
	if u := m.unitOf(1, near7, chans, P); u != 7 {
		t.Errorf("spike nearer unit 7's mean: unit %d", u)
	}
	if u := m.unitOf(0, near9, chans, P); u != 4 {
		t.Errorf("an undivided template's spike: unit %d, want its majority 4", u)
	}
}
