package quality

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestMotionPresence: under a zigzag motion a unit firing throughout is
// present at every position, a unit firing only while the probe is
// displaced by more than 5 µm at few, against a plain recomputation; a
// still probe or no motion gives NaN; bad motion arrays are refused.
func TestMotionPresence(t *testing.T) {
	const fs, secs = 30000.0, 300.0
	rng := rand.New(rand.NewPCG(3, 3))
	var mt, md []float64
	for w := 0.0; w < secs; w += 2 {
		mt = append(mt, w+1)
		md = append(md, 20*math.Sin(2*math.Pi*w/100)) // ±20 µm, period 100 s
	}
	in := Input{SampleRate: fs, NumSamples: int64(secs * fs), Motion: md, MotionTimes: mt}
	var times []int64
	var units []int32
	for u := int32(0); u < 3; u++ {
		for range 3000 {
			tm := rng.Float64() * secs
			if u == 1 && in.displacement(tm) <= 5 {
				continue // a piece: only where the probe is displaced by > 5 µm
			}
			if u == 2 && rng.Float64() < 0.5 {
				continue
			}
			times = append(times, int64(tm*fs))
			units = append(units, u)
		}
	}
	in.SpikeTimes, in.SpikeUnits = times, units
	tab, err := Compute(in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := tab.Column("motion_presence")
	// Reference: the same bins recomputed in float64 from scratch.
	ref := func(u int32) float64 {
		var grid []float64
		for x := 0.0; x < secs; x += 0.1 {
			grid = append(grid, in.displacement(x))
		}
		lo := slices.Min(grid)
		nb := int((slices.Max(grid)-lo)/5) + 1
		occ, cnt := make([]float64, nb), make([]float64, nb)
		for _, v := range grid {
			occ[min(int((v-lo)/5), nb-1)] += 0.1
		}
		n := 0
		for i, tm := range times {
			if units[i] == u {
				n++
				cnt[min(int((in.displacement(float64(tm)/fs)-lo)/5), nb-1)]++
			}
		}
		bins, present := 0, 0
		for k := range nb {
			if occ[k] >= 10 {
				bins++
				if cnt[k]/occ[k] >= 0.2*float64(n)/secs {
					present++
				}
			}
		}
		return float64(present) / float64(bins)
	}
	for u := range int32(3) {
		if want := ref(u); math.Abs(got[u]-want) > 1e-12 {
			t.Errorf("unit %d: motion_presence %g, want %g", u, got[u], want)
		}
	}
	if got[0] != 1 || got[2] != 1 || !(got[1] < 0.6) {
		t.Errorf("motion_presence %v: want 1 for the whole neurons, under 0.6 for the piece", got)
	}
	if l := tab.Labels; l[1] != "mua" {
		t.Errorf("the piece is labelled %q", l[1])
	}

	for _, c := range []struct {
		name   string
		md, mt []float64
	}{{"still", []float64{-0.3, 0.2, 0.4}, []float64{1, 150, 299}}, {"none", nil, nil}} {
		in2 := in
		in2.Motion, in2.MotionTimes = c.md, c.mt
		tab, err := Compute(in2, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		for u, v := range tab.Column("motion_presence") {
			if !math.IsNaN(v) {
				t.Errorf("%s: unit %d motion_presence %g, want NaN", c.name, u, v)
			}
		}
	}
	for _, bad := range []struct{ md, mt []float64 }{
		{[]float64{1, 2}, []float64{1}}, {[]float64{1, math.NaN()}, []float64{1, 2}}, {[]float64{1, 2}, []float64{2, 2}},
	} {
		in2 := in
		in2.Motion, in2.MotionTimes = bad.md, bad.mt
		if _, err := Compute(in2, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "displacement") {
			t.Errorf("motion %v at %v: %v", bad.md, bad.mt, err)
		}
	}
}
