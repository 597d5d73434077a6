package cluster

import (
	"math"
	"slices"
	"strings"
	"testing"

	"dspk/detect"
	"dspk/probe"
)

// np1 returns Neuropixels 1.0 channel positions without site 191
// (kilosort4.md §14).
func np1() (x, y []float64) {
	for i := 0; i < 384; i++ {
		if i == 191 {
			continue
		}
		x = append(x, float64([]int{43, 11, 59, 27}[i%4]))
		y = append(y, float64(20*(i/2+1)))
	}
	return
}

// TestGrid pins the group grid on NP1 (kilosort4-sort.md §5.1: y 39, 79,
// …, 3839; one x centre at the mean channel x) and on other layouts.
func TestGrid(t *testing.T) {
	x, y := np1()
	if d := MedianPitch(y); d != 20 {
		t.Errorf("NP1 dmin %v, want 20", d)
	}
	var ycup []float64
	for v := 20.0; v <= 3840; v += 10 {
		ycup = append(ycup, v)
	}
	yc := YCenters(ycup, 20)
	if len(yc) != 96 || yc[0] != 39 || yc[95] != 3839 || yc[1] != 79 {
		t.Errorf("NP1 y grid: %d values %v … %v", len(yc), yc[:2], yc[len(yc)-1])
	}
	xc := XCenters(x, 0, nil, 5330)
	mean := 0.0
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(xc) != 1 || math.Abs(xc[0]-mean) > 1e-9 || math.Abs(mean-35.02) > 0.01 {
		t.Errorf("NP1 x grid %v, want [%v]", xc, mean)
	}
	// Two shanks 250 µm apart: two peaks, two centres at the shank means.
	var x2 []float64
	for i := 0; i < 64; i++ {
		x2 = append(x2, []float64{0, 32}[i%2]+250*float64(i/32))
	}
	for _, c := range []struct {
		k       int
		guesses []float64
	}{{0, nil}, {2, nil}, {0, []float64{-50, 400}}} {
		got := XCenters(x2, c.k, c.guesses, 5330)
		if !slices.Equal(got, []float64{16, 266}) {
			t.Errorf("two shanks, k %d guesses %v: x grid %v, want [16 266]", c.k, c.guesses, got)
		}
	}
	if got := MedianPitch([]float64{5, 5}); got != 1 {
		t.Errorf("one depth: dmin %v, want 1", got)
	}
	if got := MedianPitch([]float64{0, 10, 15, 40, 40}); got != 10 {
		t.Errorf("dmin of 0 10 15 40: %v, want 10 (median of 10 5 25)", got)
	}
	if got := MedianPitch([]float64{0, 10, 15, 40, 100}); got != 17.5 {
		t.Errorf("dmin of 0 10 15 40 100: %v, want 17.5", got)
	}
}

// TestLocalMaxima pins scipy find_peaks' plateau rule and the ends.
func TestLocalMaxima(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want []int
	}{
		{[]float64{0, 1, 0}, []int{1}},
		{[]float64{1, 0, 1}, nil},
		{[]float64{0, 2, 2, 0}, []int{1}},
		{[]float64{0, 2, 2, 2, 0, 3, 1}, []int{2, 5}},
		{[]float64{0, 2, 2, 3}, nil},
		{[]float64{5}, nil},
		{[]float64{0, 1, 1}, nil},
	} {
		if got := localMaxima(c.x); !slices.Equal(got, c.want) {
			t.Errorf("localMaxima(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

// TestHistogram pins numpy's bin rule: half-open bins, the last closed.
func TestHistogram(t *testing.T) {
	e := linspace(0, 3, 4)
	got := histogram([]float64{-1, 0, 0.5, 1, 2.999, 3, 3.5, math.NaN()}, e)
	if !slices.Equal(got, []float64{2, 1, 2}) {
		t.Errorf("histogram = %v, want [2 1 2]", got)
	}
	if l := linspace(-89, 159, 4); l[3] != 159 || l[0] != -89 {
		t.Errorf("linspace ends %v", l)
	}
}

// TestAssignGroups checks the nearest grid point and its first-minimum
// rule.
func TestAssignGroups(t *testing.T) {
	xc, yc := []float64{0, 100}, []float64{10, 50, 90}
	got := assignGroups([]float64{1, 99, 50, 0}, []float64{49, 12, 30, 70}, xc, yc)
	// Unit 2 is equidistant from (0,10), (0,50), (100,10), (100,50): the
	// first in g order is g = 0? Distances: (50,20)→2900, (50,−20)→2900:
	// g = 0 (ky 0, jx 0) comes first.
	if want := []int{1, 3, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("assignGroups = %v, want %v", got, want)
	}
}

// TestSpikesInputNP1 builds the 'spikes' input from NP1's detection grid
// and checks the group table Kilosort4 reports for NP1 (96 groups of 16
// centres, 12 in the top one). Most groups have 15 feature channels (92
// here, 91 in Kilosort4's log: ties of the 10th and 11th nearest channel
// of a centre are broken differently, kilosort4-sort.md §11).
func TestSpikesInputNP1(t *testing.T) {
	g, err := detect.NewGrid(probe.NP1(), detect.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	// One spike per centre, zero features.
	s := &detect.Spikes{NC: g.NC, P: 6}
	for f := 0; f < g.F(); f++ {
		s.Center = append(s.Center, int32(f))
		s.Features = append(s.Features, make([]float32, g.NC*6)...)
		s.Sample = append(s.Sample, int64(f))
	}
	in, err := SpikesInput(g, s)
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, in, DefaultParams())
	units := map[int]int{}
	chans := map[int]int{}
	for _, gr := range res.Groups {
		units[gr.Units]++
		chans[gr.Channels]++
	}
	t.Logf("groups %d, units per group %v, channels per group %v", len(res.Groups), units, chans)
	if len(res.Groups) != 96 || units[16] != 95 || units[12] != 1 {
		t.Errorf("NP1: %d groups, units per group %v; want 96 groups of 16 centres, one of 12", len(res.Groups), units)
	}
	if res.N != 96 {
		t.Errorf("NP1 with one spike per centre: %d clusters, want 96 (one per group)", res.N)
	}
	s.Center[3] = int32(g.F())
	if _, err := SpikesInput(g, s); err == nil || !strings.Contains(err.Error(), "spike 3 has centre") {
		t.Errorf("centre out of range: %v", err)
	}
}
