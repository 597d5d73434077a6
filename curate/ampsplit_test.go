package curate

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// ampScene builds spikes of units on their own templates: for each unit
// a list of (amplitude, share) modes and whether the modes fire side by
// side (true) or one after the other (false, as one neuron whose
// amplitude changes as the probe moves). Features are the template's
// unit-norm shape scaled by the amplitude with 3 % jitter.
func ampScene(rng *rand.Rand, n int, units [][]float64, together []bool) (*Spikes, *Units, *Channels) {
	const NC, P, C = 3, 2, 8
	s := &Spikes{NC: NC, P: P}
	ch := &Channels{X: make([]float64, C), Y: make([]float64, C)}
	u := &Units{N: len(units), C: C, P: P, W: make([]float32, len(units)*C*P)}
	T := int64(9_000_000)
	for k, modes := range units {
		chans := []int32{int32(k % C), int32((k + 1) % C), int32((k + 3) % C)}
		ch.Chans = append(ch.Chans, chans)
		shape := make([]float64, NC*P)
		for i := range shape {
			shape[i] = rng.NormFloat64()
		}
		norm := math.Sqrt(floats(shape))
		for i := range shape {
			shape[i] /= norm
		}
		for r, c := range chans {
			for q := range P {
				u.W[(k*C+int(c))*P+q] = float32(shape[r*P+q] * modes[0])
			}
		}
		for m := 1; m < len(modes); m += 2 {
			amp, share := modes[m-1], modes[m]
			cnt := int(share * float64(n))
			for i := range cnt {
				var t int64
				if together[k] {
					t = rng.Int64N(T)
				} else {
					// The modes in turn: mode m/2 in its own stretch.
					t0 := T * int64(m/2) / int64(len(modes)/2)
					t = t0 + int64(i)*(T/int64(len(modes)/2))/int64(cnt)
				}
				s.Time = append(s.Time, t)
				s.Template = append(s.Template, int32(k))
				s.Cluster = append(s.Cluster, int32(k))
				a := amp * (1 + 0.03*rng.NormFloat64())
				for _, v := range shape {
					s.Features = append(s.Features, float32(v*a))
				}
			}
		}
	}
	s.SortByTime()
	return s, u, ch
}

func floats(x []float64) float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	return ss
}

// TestSplitAmplitudeModes: a unit of a large and a small neuron firing
// side by side splits, its lower mode a new unit whose template is the
// mean of its spikes' features (float64 reference); one neuron, one whose
// amplitude steps in time, and a unit whose small mode is under the
// least share do not; off at 0.
func TestSplitAmplitudeModes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	units := [][]float64{
		{80, 0.7, 15, 0.3},   // two neurons: splits
		{50, 1},              // one mode
		{80, 0.5, 30, 0.5},   // modes one after the other: one drifting neuron
		{80, 0.95, 15, 0.05}, // small mode under the least share
		{40, 0.4, 120, 0.6},  // two neurons, the small one the larger share
	}
	together := []bool{true, true, false, true, true}
	s, u, ch := ampScene(rng, 2000, units, together)
	before := slices.Clone(s.Cluster)
	time := slices.Clone(s.Time)
	p := DefaultParams()
	out, n := splitAmplitudeModes(s, u, ch, p)
	if n != 2 || out.N != u.N+2 || len(out.W) != out.N*u.C*u.P {
		t.Fatalf("%d splits, %d units (W %d)", n, out.N, len(out.W))
	}
	if !slices.Equal(out.W[:len(u.W)], u.W) || !slices.Equal(time, s.Time) {
		t.Fatal("the first units' templates or the spike order changed")
	}
	for k, want := range []struct{ from, n int }{{0, 600}, {4, 800}} {
		label := int32(u.N + k)
		ref := make([]float64, u.C*u.P)
		cnt := 0
		for i, c := range s.Cluster {
			if c != label {
				continue
			}
			if int(before[i]) != want.from {
				t.Fatalf("spike %d of unit %d went to new unit %d", i, before[i], label)
			}
			if a := norm32(s.Features[i*6 : i*6+6]); a > 60 {
				t.Fatalf("a spike of amplitude %g went to the lower mode", a)
			}
			cnt++
			for r, c := range ch.Chans[s.Template[i]] {
				for q := range 2 {
					ref[int(c)*2+q] += float64(s.Features[i*6+r*2+q])
				}
			}
		}
		if cnt != want.n {
			t.Fatalf("new unit %d holds %d spikes, want %d", label, cnt, want.n)
		}
		for j, v := range out.W[int(label)*u.C*u.P : int(label+1)*u.C*u.P] {
			if math.Abs(float64(v)-ref[j]/float64(cnt)) > 1e-5*(1+math.Abs(ref[j]/float64(cnt))) {
				t.Fatalf("new unit %d template[%d] = %g, want %g", label, j, v, ref[j]/float64(cnt))
			}
		}
	}
	for i, c := range s.Cluster {
		if before[i] != 0 && before[i] != 4 && c != before[i] {
			t.Fatalf("spike %d of unit %d moved to %d", i, before[i], c)
		}
	}

	// Off, and the same on one core.
	s2, u2, ch2 := ampScene(rand.New(rand.NewPCG(5, 6)), 2000, units, together)
	p.AmplitudeSplit = 0
	if out2, n2 := splitAmplitudeModes(s2, u2, ch2, p); n2 != 0 || out2 != u2 || !slices.Equal(s2.Cluster, before) {
		t.Fatal("amplitude-split 0 split units")
	}
	p.AmplitudeSplit = AmplitudeSplitDefault
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // the fits on one core this time
	out3, _ := splitAmplitudeModes(s2, u2, ch2, p)
	if !slices.Equal(out3.W, out.W) || !slices.Equal(s2.Cluster, s.Cluster) {
		t.Fatal("one core and several split differently")
	}
}

func norm32(x []float32) float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return math.Sqrt(ss)
}

// TestAmplitudeModes checks the fit on its own: equal shares, unequal
// widths, a single Gaussian, too close modes, and the cut between them.
func TestAmplitudeModes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	mk := func(parts ...float64) []float64 {
		var x []float64
		for i := 0; i < len(parts); i += 3 {
			for range int(parts[i+2]) {
				x = append(x, parts[i]+parts[i+1]*rng.NormFloat64())
			}
		}
		rng.Shuffle(len(x), func(i, j int) { x[i], x[j] = x[j], x[i] })
		return x
	}
	for _, c := range []struct {
		name  string
		x     []float64
		split bool
		lo    float64
		hi    float64
	}{
		{"apart", mk(1, 0.05, 500, 3, 0.05, 500), true, 1.2, 2.8},
		{"unequal widths", mk(1, 0.02, 300, 3, 0.15, 700), true, 1.1, 2.6},
		{"one", mk(2, 0.1, 1000), false, 0, 0},
		{"close", mk(1, 0.1, 500, 1.5, 0.1, 500), false, 0, 0},
		{"small share", mk(1, 0.05, 60, 3, 0.05, 940), false, 0, 0},
	} {
		cut, ok := amplitudeModes(c.x, AmplitudeSplitDefault)
		if ok != c.split || (ok && !(cut > c.lo && cut < c.hi)) {
			t.Errorf("%s: split %v at %g, want %v in (%g, %g)", c.name, ok, cut, c.split, c.lo, c.hi)
		}
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		s := DefaultSettings()
		s.AmplitudeSplit = bad
		if s.Validate() == nil {
			t.Errorf("amplitude-split %g accepted", bad)
		}
	}
}
