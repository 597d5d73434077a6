package curate

import (
	"math"
	"slices"
	"testing"
)

// TestDoubleCounts: a spike of a smaller unit within duplicate_spike_ms
// of a nearby larger unit's spike goes; one further apart in time, of a
// unit far on the probe, or already dropped stays; equal norms drop the
// lower unit's; 0 turns the rule off.
func TestDoubleCounts(t *testing.T) {
	const C, P = 4, 2
	ch := &Channels{X: []float64{0, 0, 0, 0}, Y: []float64{0, 20, 40, 400}}
	// Units: 0 large on channel 0, 1 small on channel 1 (20 µm away), 2
	// small on channel 3 (400 µm), 3 as large as 0 on channel 2 (40 µm).
	u := &Units{N: 4, C: C, P: P, W: make([]float32, 4*C*P)}
	set := func(k, c int, v float32) { u.W[(k*C+c)*P] = v }
	set(0, 0, 10)
	set(1, 1, 3)
	set(1, 0, 1)
	set(2, 3, 3)
	set(3, 2, 10)
	s := &Spikes{NC: 1, P: P}
	add := func(tm int64, k int32) {
		s.Time = append(s.Time, tm)
		s.Cluster = append(s.Cluster, k)
		s.Template = append(s.Template, k)
		s.Features = append(s.Features, 1, 0)
	}
	add(100, 0) // 0
	add(103, 1) // 1: a double of 0 in the smaller unit: dropped
	add(105, 2) // 2: far on the probe: kept
	add(130, 1) // 3: 30 samples on: kept
	add(200, 1) // 4: first of a pair with the larger unit, which comes 7 samples later
	add(207, 0) // 5: kept; 4 dropped
	add(300, 3) // 6: equal norms with unit 0: the lower unit's (0) goes
	add(302, 0) // 7: dropped
	add(400, 0) // 8: kept: its partner was already dropped (skip)
	add(401, 1) // 9: dropped before (skip), masks nothing
	p := DefaultParams()
	skip := make([]bool, s.Len())
	skip[9] = true
	got := doubleCounts(s, u, ch, p, slices.Clone(skip))
	want := []bool{false, true, false, false, true, false, false, true, false, true}
	if !slices.Equal(got, want) {
		t.Fatalf("dropped %v, want %v", got, want)
	}
	p.DoubleCount = 0
	if got := doubleCounts(s, u, ch, p, slices.Clone(skip)); !slices.Equal(got, skip) {
		t.Fatalf("double-counts 0 dropped %v", got)
	}
	p.DoubleCount = 10 // unit 1 is 20 µm from unit 0: nothing is near
	if got := doubleCounts(s, u, ch, p, nil); slices.Contains(got, true) {
		t.Fatalf("nothing within 10 µm, dropped %v", got)
	}
	for _, bad := range []float64{-1, math.NaN()} {
		st := DefaultSettings()
		st.DoubleCount = bad
		if st.Validate() == nil {
			t.Errorf("double-counts %g accepted", bad)
		}
	}
}
