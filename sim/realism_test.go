package sim

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestPresets(t *testing.T) {
	for _, name := range PresetNames {
		c, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if c.Seconds != 600 || c.Preset != name || !c.MotionTruth || c.UnitZMaxUm != 80 {
			t.Errorf("%s: %g s, preset %q, motion truth %v, z up to %g", name, c.Seconds, c.Preset, c.MotionTruth, c.UnitZMaxUm)
		}
		hard := name == "ladder-hard"
		if dense := name == "ladder-dense" || hard; dense != (c.Units == 600 && c.SimilarPairs > 0 && c.BurstFraction > 0) {
			t.Errorf("%s: %d units, %d pairs, burst fraction %g", name, c.Units, c.SimilarPairs, c.BurstFraction)
		}
		rigid := c.MotionTopGain == 0
		moves := c.DriftUmPerS != 0 || c.MotionSineUm != 0 || len(c.MotionSteps) > 0
		switch {
		case name == "ladder-easy" || name == "ladder-dense":
			if moves || !rigid {
				t.Errorf("%s moves", name)
			}
		case name == "ladder-nonrigid" || hard:
			if rigid || !moves {
				t.Errorf("%s: not non-rigid motion", name)
			}
		default:
			if !rigid || !moves {
				t.Errorf("%s: not rigid motion", name)
			}
		}
		// Valid: the full config resolves, and a short cut of it renders
		// with its motion truth.
		if _, err := c.resolved(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		c.Seconds = 0.5
		rec, err := Generate(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tr := rec.Truth()
		if tr.Motion == nil || len(tr.SpikePos) != 3*len(tr.SpikeTimes) {
			t.Errorf("%s: no motion truth", name)
		}
		if len(fileBytes(t, rec)) == 0 {
			t.Errorf("%s: empty", name)
		}
	}
	if _, err := Preset("ladder-nope"); err == nil || !strings.Contains(err.Error(), "ladder-easy") {
		t.Errorf("unknown preset: %v", err)
	}
}

func TestMotionConfigErrors(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.MotionSineUm = 3 }, "MotionSineHz"},
		{func(c *Config) { c.MotionSineHz = -1 }, "MotionSineHz"},
		{func(c *Config) { c.MotionSineUm, c.MotionSineHz = math.NaN(), 1 }, "MotionSineUm"},
		{func(c *Config) { c.MotionSteps = []MotionStep{{TimeS: -1, Um: 3}} }, "MotionSteps[0]"},
		{func(c *Config) { c.MotionSteps = []MotionStep{{TimeS: 1, Um: math.Inf(1)}} }, "MotionSteps[0]"},
		{func(c *Config) { c.MotionTopGain = -1 }, "MotionTopGain"},
		{func(c *Config) { c.MotionTopGain, c.DriftUmPerS = 5, 1000 }, "stretches"},
		{func(c *Config) { c.UnitZMinUm = 5 }, "UnitZMaxUm"},
		{func(c *Config) { c.UnitZMinUm, c.UnitZMaxUm = 50, 20 }, "unit distances"},
		{func(c *Config) { c.SimilarPairs = 61 }, "SimilarPairs"},
		{func(c *Config) { c.BurstFraction = 1.5 }, "BurstFraction"},
	} {
		cfg := shortConfig(1)
		c.edit(&cfg)
		if _, err := Generate(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("config %+v: error %v, want one naming %s", cfg, err, c.want)
		}
	}
}

// footprintCentre returns the y of the amplitude²-weighted centre of the
// sites within 100 µm of the deepest trough in row (all sites of probe
// order), and the trough there.
func footprintCentre(row []int16, chanMap []int, ys []float64) (float64, float64) {
	best := 0
	for c := range ys {
		if row[chanMap[c]] < row[chanMap[best]] {
			best = c
		}
	}
	var w, wy float64
	for c, y := range ys {
		if math.Abs(y-ys[best]) <= 100 {
			v := float64(min(row[chanMap[c]], 0))
			w += v * v
			wy += v * v * y
		}
	}
	return wy / w, float64(row[chanMap[best]])
}

// TestMotionFollowedByFootprint renders spikes alone under drift, a
// sine, steps and non-rigid motion, and checks that each isolated spike's
// measured footprint centre sits at its true y (spike_positions), that
// the motion truth grid gives that spike's displacement at its time and
// depth, and that the measured centre moves with the truth.
func TestMotionFollowedByFootprint(t *testing.T) {
	cfg := shortConfig(4)
	cfg.Units = 30
	cfg.RateMin, cfg.RateMax = 4, 6
	cfg.DriftUmPerS = -10
	cfg.MotionSineUm, cfg.MotionSineHz = 12, 1
	cfg.MotionSteps = []MotionStep{{TimeS: 1.3, Um: 25}, {TimeS: 2.7, Um: -35}}
	cfg.MotionTopGain = 2
	cfg.UnitZMinUm, cfg.UnitZMaxUm = 10, 40
	rec, err := generate(cfg, partSpikes)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Truth()
	p := rec.Probe()
	C := rec.Channels()
	fs := cfg.SampleRate
	top := slices.Max(p.Y)
	row := make([]int16, C)
	var n int
	var errSum, moveSum float64
	for i, s := range tr.SpikeTimes {
		if i > 0 && s-tr.SpikeTimes[i-1] < 61 || i+1 < len(tr.SpikeTimes) && tr.SpikeTimes[i+1]-s < 61 {
			continue
		}
		u := tr.SpikeClusters[i]
		y0, y := tr.UnitY[u], float64(tr.SpikePos[3*i+1])
		if float64(tr.SpikePos[3*i]) != float64(float32(tr.UnitX[u])) || tr.SpikePos[3*i+2] != float32(tr.UnitZ[u]) {
			t.Fatalf("spike %d: x, z = %g, %g, want the unit's %g, %g", i, tr.SpikePos[3*i], tr.SpikePos[3*i+2], tr.UnitX[u], tr.UnitZ[u])
		}
		// The Eulerian grid gives this spike's displacement where it is,
		// to the linear interpolation of the sine between grid times:
		// A·(2π·f·0.05 s)²/8 = 0.15 µm, doubled at the top.
		if d := tr.Motion.At(float64(s)/fs, y); math.Abs(d-(y-y0)) > 0.35 {
			t.Fatalf("spike %d at %.4f s, y %.2f (from %.2f): grid displacement %.3f, want %.3f", i, float64(s)/fs, y, y0, d, y-y0)
		}
		if y < 120 || y > top-120 {
			continue
		}
		if err := rec.ReadInt16(row, s, 1); err != nil {
			t.Fatal(err)
		}
		got, trough := footprintCentre(row, p.ChanMap, p.Y)
		if trough > -20 {
			continue
		}
		if math.Abs(got-y) > 4 {
			t.Errorf("spike %d of unit %d at %.3f s: footprint centre y %.2f, true y %.2f (%.2f at time 0)", i, u, float64(s)/fs, got, y, y0)
		}
		errSum += (got - y) * (got - y)
		moveSum += (y - y0) * (y - y0)
		n++
	}
	if n < 100 {
		t.Fatalf("only %d isolated spikes checked", n)
	}
	rms, moved := math.Sqrt(errSum/float64(n)), math.Sqrt(moveSum/float64(n))
	t.Logf("%d spikes: footprint centre − true y RMS %.2f µm; RMS displacement %.1f µm", n, rms, moved)
	if rms > 2 || moved < 20 {
		t.Errorf("RMS error %.2f µm (want ≤ 2), RMS displacement %.1f µm (want ≥ 20)", rms, moved)
	}
}

func TestMotionGrid(t *testing.T) {
	cfg := shortConfig(3.01)
	cfg.DriftUmPerS = 2
	cfg.MotionSteps = []MotionStep{{TimeS: 1.00001, Um: 5}, {TimeS: 50, Um: 3}}
	cfg.MotionTopGain = 1.5
	rec, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := rec.Truth().Motion
	fs := cfg.SampleRate
	end := float64(rec.Samples()-1) / fs
	if m.Times[0] != 0 || m.Times[len(m.Times)-1] != end {
		t.Errorf("times %g to %g, want 0 to %g", m.Times[0], m.Times[len(m.Times)-1], end)
	}
	p := rec.Probe()
	if m.Depths[0] != slices.Min(p.Y) || m.Depths[len(m.Depths)-1] != slices.Max(p.Y) || len(m.Depths) != 192 {
		t.Errorf("%d depths %g to %g", len(m.Depths), m.Depths[0], m.Depths[len(m.Depths)-1])
	}
	if err := checkAxis("time", m.Times); err != nil {
		t.Fatal(err)
	}
	// The step sits between two samples of the grid.
	k := int64(math.Ceil(1.00001 * fs))
	before, after := float64(k-1)/fs, float64(k)/fs
	if !slices.Contains(m.Times, before) || !slices.Contains(m.Times, after) {
		t.Fatalf("grid lacks the samples %g, %g around the step", before, after)
	}
	for _, y := range []float64{20, 1000, 3000} {
		jump := m.At(after, y) - m.At(before, y)
		// Non-rigid: the step is 5·(1 + 0.5·(y0−20)/3820) at the tissue's
		// depth y0, which at the bottom lies just below the probe.
		if jump < 4.95 || jump > 7.5 {
			t.Errorf("step at y %g: jump %g", y, jump)
		}
	}
	// Top moves 1.5× the bottom.
	a, b := m.At(0.9, m.Depths[0]), m.At(0.9, m.Depths[len(m.Depths)-1])
	if math.Abs(b/a-1.5) > 0.01 {
		t.Errorf("top/bottom displacement %g/%g, want ratio 1.5", b, a)
	}
}

func TestSimilarPairs(t *testing.T) {
	cfg := shortConfig(0.5)
	cfg.Units = 40
	cfg.SimilarPairs = 15
	cfg.UnitZMinUm, cfg.UnitZMaxUm = 10, 80
	rec, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Truth()
	for i := range cfg.SimilarPairs {
		a, b := 2*i, 2*i+1
		d := math.Hypot(tr.UnitX[a]-tr.UnitX[b], tr.UnitY[a]-tr.UnitY[b])
		r := tr.UnitAmplitude[b] / tr.UnitAmplitude[a]
		if tr.UnitShape[a] != tr.UnitShape[b] || d < 10-1e-9 || d > 30+1e-9 || r < 0.8-1e-9 || r > 1.25+1e-9 {
			t.Errorf("pair %d: shapes %v %v, %g µm apart, amplitude ratio %g", i, tr.UnitShape[a], tr.UnitShape[b], d, r)
		}
		if c := corr(tr.UnitWaveform[a], tr.UnitWaveform[b]); c < 0.97 {
			t.Errorf("pair %d: waveform correlation %g", i, c)
		}
	}
}

func corr(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	return ab / math.Sqrt(aa*bb)
}

func TestBursts(t *testing.T) {
	cfg := shortConfig(20)
	cfg.Units = 10
	cfg.BurstFraction = 0.3
	cfg.RateMin, cfg.RateMax = 10, 10
	rec, err := generate(cfg, partSpikes)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Truth()
	fs := cfg.SampleRate
	counts := tr.UnitSpikeCounts()
	bursting := map[int32]bool{}
	last := map[int32]int{}
	inBurst := 0
	for i, s := range tr.SpikeTimes {
		u := tr.SpikeClusters[i]
		sc := tr.SpikeScale[i]
		if sc < 1 {
			bursting[u] = true
			j := last[u]
			isi := float64(s-tr.SpikeTimes[j]) / fs * 1000
			ratio := sc / tr.SpikeScale[j]
			if isi < 3-1e-3-1000/fs || isi > 10+1e-3 || ratio < 0.7-1e-6 || ratio > 0.85+1e-6 {
				t.Errorf("burst spike %d of unit %d: %.2f ms after the one before, scale ratio %.3f", i, u, isi, ratio)
			}
			inBurst++
		}
		last[u] = i
	}
	if len(bursting) != 3 || inBurst < 50 {
		t.Errorf("%d bursting units, %d burst spikes; want 3 units", len(bursting), inBurst)
	}
	for u, n := range counts {
		if r := float64(n) / cfg.Seconds; r < 7 || r > 13 {
			t.Errorf("unit %d (bursting %v): %.1f Hz, want about 10", u, bursting[int32(u)], r)
		}
	}
	// The rendered trough of an isolated burst spike is scaled.
	C := rec.Channels()
	row := make([]int16, C)
	p := rec.Probe()
	checked := 0
	for i, s := range tr.SpikeTimes {
		if tr.SpikeScale[i] == 1 || s-tr.SpikeTimes[i-1] < 61 && tr.SpikeClusters[i-1] != tr.SpikeClusters[i] ||
			i+1 < len(tr.SpikeTimes) && tr.SpikeTimes[i+1]-s < 61 {
			continue
		}
		if s-tr.SpikeTimes[i-1] < 61 { // the burst's previous spike overlaps
			continue
		}
		u := tr.SpikeClusters[i]
		if err := rec.ReadInt16(row, s, 1); err != nil {
			t.Fatal(err)
		}
		got := -float64(row[p.ChanMap[tr.UnitPeakChannel[u]]])
		want := tr.UnitAmplitude[u] * cfg.NoiseSD * float64(tr.SpikeScale[i])
		if math.Abs(got-want) > 0.6 {
			t.Errorf("burst spike %d: trough %g, want %g", i, got, want)
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("only %d isolated burst spikes checked", checked)
	}
}

func TestUnitDistances(t *testing.T) {
	cfg := shortConfig(0.2)
	cfg.Units = 2000
	cfg.UnitZMinUm, cfg.UnitZMaxUm = 10, 80
	cfg.AmplitudeMin, cfg.AmplitudeMax = 4, 30
	rec, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Truth()
	m := rec.m
	far, zMax := 0, 0.0
	for u, z := range tr.UnitZ {
		lim := m.zLimit(tr.UnitAmplitude[u])
		if z < 10 || z > lim+1e-9 || lim > 80 {
			t.Fatalf("unit %d: amplitude %g at z %g (limit %g)", u, tr.UnitAmplitude[u], z, lim)
		}
		// The limit: a unit of twice the largest amplitude at z = 10 falls
		// to this amplitude at the limit.
		if lim < 80 {
			q := func(z float64) float64 { return math.Pow(1+z*z/625, -1.5) }
			if r := 60 * q(lim) / q(10); math.Abs(r-tr.UnitAmplitude[u]) > 1e-9*r {
				t.Fatalf("unit %d: limit %g gives amplitude %g, want %g", u, lim, r, tr.UnitAmplitude[u])
			}
		}
		if z > 30 {
			far++
		}
		zMax = max(zMax, z)
	}
	// Small units may lie up to 61.5 µm away (the limit of amplitude 4).
	if far < len(tr.UnitZ)/5 || zMax < 57 || zMax > 61.6 {
		t.Errorf("%d of %d units beyond 30 µm, farthest at %g µm", far, len(tr.UnitZ), zMax)
	}
}

// TestHardDeterministic renders a cut of ladder-hard on 1 and 3
// goroutines and through ReadInt16 and WriteTo: the bytes agree.
func TestHardDeterministic(t *testing.T) {
	cfg, err := Preset("ladder-hard")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seconds, cfg.Units, cfg.SimilarPairs = 0.7, 40, 6
	cfg.MotionSteps = []MotionStep{{TimeS: 0.3, Um: 15}}
	var want []byte
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		rec, err := Generate(cfg)
		if err != nil {
			runtime.GOMAXPROCS(old)
			t.Fatal(err)
		}
		b := fileBytes(t, rec)
		d := readAll(t, rec)
		runtime.GOMAXPROCS(old)
		for i, v := range d {
			if int16(uint16(b[2*i])|uint16(b[2*i+1])<<8) != v {
				t.Fatalf("GOMAXPROCS %d: ReadInt16 and WriteTo differ at value %d", procs, i)
			}
		}
		if want == nil {
			want = b
		} else if !slices.Equal(want, b) {
			t.Fatalf("GOMAXPROCS %d gives other bytes than GOMAXPROCS 1", procs)
		}
	}
}

// TestPresetsShareUnits checks that the motion rungs have the same units
// and spikes as the still ones (ladder-easy for drift, steps, nonrigid;
// ladder-dense for hard), so recall with and without motion compares the
// same spikes.
func TestPresetsShareUnits(t *testing.T) {
	truth := func(name string) *Truth {
		c, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		c.Seconds = 2
		rec, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		return rec.Truth()
	}
	for still, moving := range map[string][]string{
		"ladder-easy":  {"ladder-drift", "ladder-steps", "ladder-nonrigid"},
		"ladder-dense": {"ladder-hard"},
	} {
		a := truth(still)
		for _, name := range moving {
			b := truth(name)
			if !slices.Equal(a.SpikeTimes, b.SpikeTimes) || !slices.Equal(a.SpikeClusters, b.SpikeClusters) ||
				!slices.Equal(a.UnitY, b.UnitY) || !slices.Equal(a.UnitZ, b.UnitZ) || !slices.Equal(a.UnitAmplitude, b.UnitAmplitude) ||
				!slices.Equal(a.SpikeScale, b.SpikeScale) {
				t.Errorf("%s and %s differ in their units or spikes", still, name)
			}
		}
	}
}
