package sim

import (
	"math"
	"testing"

	"dspk/probe"
)

// This file holds a plain float64 reference of the generator, written
// from the model in doc.go sample by sample, and the tests that compare
// the chunked, parallel float32 generator against it.

// smallProbe is a two-shank probe of 10 sites with a scrambled channel
// map, an unused file row (4) and the sync word in row 11.
func smallProbe() *probe.Probe {
	return &probe.Probe{
		Name:      "small",
		X:         []float64{0, 32, 0, 32, 0, 32, 250, 282, 250, 282},
		Y:         []float64{0, 0, 20, 20, 40, 40, 0, 0, 20, 20},
		Shank:     []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
		ChanMap:   []int{3, 0, 10, 1, 5, 9, 2, 8, 6, 7},
		NChanFile: 12,
	}
}

// refNoise reproduces the documented noise streams: chunk k's stream
// draws, per row, the site normals then one common-mode normal, first for
// the chunk's last row and then for the others in order.
type refNoise struct {
	cfg    Config
	nSites int
	n      int64 // samples
	white  map[int64][][]float64
	cm     map[int64][]float64
}

func newRefNoise(cfg Config, nSites int) *refNoise {
	return &refNoise{cfg: cfg, nSites: nSites, n: cfg.Samples(),
		white: map[int64][][]float64{}, cm: map[int64][]float64{}}
}

func (r *refNoise) chunk(k int64) {
	if _, ok := r.white[k]; ok {
		return
	}
	s := k * ChunkSamples
	e := min(s+ChunkSamples, r.n)
	if k < 0 { // only the first row of stream −1 is ever used
		e = s + 1
	}
	rows := int(e - s)
	w := make([][]float64, rows)
	cm := make([]float64, rows)
	rng := newRand(r.cfg.Seed, kindNoise, uint64(k))
	draw := func(i int) {
		w[i] = make([]float64, r.nSites)
		for c := range w[i] {
			w[i][c] = float64(float32(rng.NormFloat64()))
		}
		cm[i] = rng.NormFloat64()
	}
	draw(rows - 1)
	for i := range rows - 1 {
		draw(i)
	}
	r.white[k], r.cm[k] = w, cm
}

// row returns the white site noise of sample t (t = −1 allowed) and its
// common-mode normal.
func (r *refNoise) row(t int64) ([]float64, float64) {
	if t < 0 {
		r.chunk(-1)
		return r.white[-1][0], r.cm[-1][0]
	}
	k := t / ChunkSamples
	r.chunk(k)
	i := t - k*ChunkSamples
	if k > 0 && i < 0 {
		panic("bad row")
	}
	return r.white[k][i], r.cm[k][i]
}

// refKernel is the spatial noise kernel in float64.
func refKernel(p *probe.Probe, sigma float64) [][]float64 {
	n := p.Len()
	k := make([][]float64, n)
	for i := range k {
		k[i] = make([]float64, n)
		if sigma == 0 {
			k[i][i] = 1
			continue
		}
		ss := 0.0
		for j := range n {
			d2 := (p.X[i]-p.X[j])*(p.X[i]-p.X[j]) + (p.Y[i]-p.Y[j])*(p.Y[i]-p.Y[j])
			if math.Sqrt(d2) <= 2.5*sigma {
				k[i][j] = math.Exp(-d2 / (2 * sigma * sigma))
				ss += k[i][j] * k[i][j]
			}
		}
		for j := range n {
			k[i][j] /= math.Sqrt(ss)
		}
	}
	return k
}

// refFootprint is (1 + d²/25²)^−1.5.
func refFootprint(dx, dy, dz float64) float64 {
	return math.Pow(1+(dx*dx+dy*dy+dz*dz)/625, -1.5)
}

// refSpikeY is the depth at sample s of the unit at depth y0 at time 0,
// from the motion model of docs/sim.md: a(t) = drift·t + sine + steps,
// scaled by 1 + (gain−1)·(y0 − bottom)/(top − bottom) when non-rigid.
func refSpikeY(cfg Config, y0 float64, s int64) float64 {
	t := float64(s) / cfg.SampleRate
	a := cfg.DriftUmPerS * t
	a += cfg.MotionSineUm * math.Sin(2*math.Pi*cfg.MotionSineHz*t)
	for _, st := range cfg.MotionSteps {
		if t >= st.TimeS {
			a += st.Um
		}
	}
	if g := cfg.MotionTopGain; g != 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, y := range cfg.Probe.Y {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
		if hi > lo {
			a *= 1 + (g-1)*(y0-lo)/(hi-lo)
		}
	}
	return y0 + a
}

// refInt16 rounds half away from zero and saturates.
func refInt16(x float64) int16 {
	v := math.Round(x)
	if v > 32767 {
		return 32767
	}
	if v < -32768 {
		return -32768
	}
	return int16(v)
}

// reference renders samples [start, end) of the recording described by
// cfg (resolved) and its truth, in float64, sample by sample.
func reference(cfg Config, tr *Truth, start, end int64, p parts) []int16 {
	pr := cfg.Probe
	nS, C := pr.Len(), pr.NChanFile
	fs := cfg.SampleRate
	ker := refKernel(pr, cfg.NoiseCorrUm)
	rn := newRefNoise(cfg, nS)

	offRng := newRand(cfg.Seed, kindOffsets, 0)
	off := make([]float64, nS)
	for i := range off {
		off[i] = float64(float32(cfg.OffsetMax * (2*offRng.Float64() - 1)))
	}
	phase := 2 * math.Pi * newRand(cfg.Seed, kindCommon, 0).Float64()

	// Per-unit scale from the truth: trough −amp·NoiseSD on the best site
	// at time 0.
	scale := make([]float64, tr.Units())
	for u := range scale {
		best := 0.0
		for c := range nS {
			best = math.Max(best, refFootprint(tr.UnitX[u]-pr.X[c], tr.UnitY[u]-pr.Y[c], tr.UnitZ[u]))
		}
		scale[u] = tr.UnitAmplitude[u] * cfg.NoiseSD / best
	}
	sync := -1
	isSite := make([]bool, C)
	for _, r := range pr.ChanMap {
		isSite[r] = true
	}
	if !isSite[C-1] {
		sync = C - 1
	}

	smoothed := func(t int64) []float64 {
		e, _ := rn.row(t)
		s := make([]float64, nS)
		for i := range nS {
			for j := range nS {
				s[i] += ker[i][j] * e[j]
			}
		}
		return s
	}
	out := make([]int16, int(end-start)*C)
	v := make([]float64, nS)
	for t := start; t < end; t++ {
		clear(v)
		if p&partNoise != 0 {
			s, sp := smoothed(t), smoothed(t-1)
			for c := range v {
				v[c] += cfg.NoiseSD / math.Sqrt(1.25) * (s[c] + 0.5*sp[c])
			}
		}
		if p&partCommon != 0 {
			_, z := rn.row(t)
			cm := cfg.CommonModeSD*z + cfg.CommonModeSine*math.Sin(2*math.Pi*cfg.CommonModeHz*float64(t)/fs+phase)
			for c := range v {
				v[c] += cm
			}
		}
		if p&partOffsets != 0 {
			for c := range v {
				v[c] += off[c]
			}
		}
		if p&partSpikes != 0 {
			for i, ts := range tr.SpikeTimes {
				j := t - ts + int64(tr.TroughIndex)
				if j < 0 || j >= int64(len(tr.UnitWaveform[0])) {
					continue
				}
				u := tr.SpikeClusters[i]
				y := refSpikeY(cfg, tr.UnitY[u], ts)
				sc := scale[u]
				if tr.SpikeScale != nil {
					sc *= float64(tr.SpikeScale[i])
				}
				for c := range v {
					v[c] += sc * refFootprint(tr.UnitX[u]-pr.X[c], y-pr.Y[c], tr.UnitZ[u]) * tr.UnitWaveform[u][j]
				}
			}
		}
		row := out[int(t-start)*C:][:C]
		for c, r := range pr.ChanMap {
			row[r] = refInt16(v[c])
		}
		if p&partSync != 0 && sync >= 0 && math.Mod(float64(t), fs) < fs/2 {
			row[sync] = 64
		}
	}
	return out
}

func TestAgainstReference(t *testing.T) {
	base := DefaultConfig()
	base.Probe = smallProbe()
	base.Seconds = 2.5 * ChunkSamples / base.SampleRate // 15000 samples: 3 chunks, the last short
	base.Units = 6
	base.RateMin, base.RateMax = 40, 120
	base.DriftUmPerS = 30
	base.Seed = 7

	sat := base
	sat.NoiseSD = 4000 // spikes up to 100 000 counts
	sat.OffsetMax = 30000
	sat.Seed = 8

	other := base
	other.SampleRate = 25000
	other.Seconds = 13001 / other.SampleRate
	other.NoiseCorrUm = 0
	other.DriftUmPerS = 0
	other.CommonModeSine = 0
	other.Seed = 9

	one := base
	one.Probe = &probe.Probe{Name: "one", X: []float64{5}, Y: []float64{7}, Shank: []int{0}, ChanMap: []int{0}, NChanFile: 2}
	one.Seconds = (3*ChunkSamples + 1) / one.SampleRate
	one.RateMin, one.RateMax = 300, 400
	one.Seed = 10

	moving := base
	moving.Seed = 11
	moving.Units = 8
	moving.MotionSineUm, moving.MotionSineHz = 7, 3
	moving.MotionSteps = []MotionStep{{TimeS: 0.2, Um: 9}, {TimeS: 0.35, Um: -4}}
	moving.MotionTopGain = 1.4
	moving.UnitZMinUm, moving.UnitZMaxUm = 10, 80
	moving.SimilarPairs = 2
	moving.BurstFraction = 0.5

	bursts := moving
	bursts.Seed = 12
	bursts.DriftUmPerS, bursts.MotionSineUm, bursts.MotionSteps, bursts.MotionTopGain = 0, 0, nil, 0

	for _, tc := range []struct {
		name  string
		cfg   Config
		parts parts
	}{
		{"motion", moving, partAll},
		{"bursts", bursts, partSpikes},
		{"all", base, partAll},
		{"noise", base, partNoise},
		{"spikes", base, partSpikes},
		{"saturating", sat, partAll},
		{"25kHz", other, partAll},
		{"one-site", one, partAll},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := generate(tc.cfg, tc.parts)
			if err != nil {
				t.Fatal(err)
			}
			tr := rec.Truth()
			if tc.cfg.BurstFraction > 0 {
				smaller := 0
				for _, v := range tr.SpikeScale {
					if v < 1 {
						smaller++
					}
				}
				if smaller < 5 {
					t.Fatalf("only %d burst spikes with scale < 1; the test is too weak", smaller)
				}
			}
			if tc.cfg.Units > 0 && tc.parts&partSpikes != 0 {
				crossing := 0
				for _, s := range tr.SpikeTimes {
					a, b := s-int64(tr.TroughIndex), s-int64(tr.TroughIndex)+int64(len(tr.UnitWaveform[0]))
					if a/ChunkSamples != (b-1)/ChunkSamples {
						crossing++
					}
				}
				if crossing == 0 {
					t.Fatalf("no spike crosses a chunk border among %d; the test is too weak", len(tr.SpikeTimes))
				}
			}
			n := rec.Samples()
			C := rec.Channels()
			got := make([]int16, int(n)*C)
			for i := range got {
				got[i] = math.MinInt16 + 12345 // poison
			}
			if err := rec.ReadInt16(got, 0, int(n)); err != nil {
				t.Fatal(err)
			}
			want := reference(rec.Config(), tr, 0, n, tc.parts)
			diff1, saturated := 0, 0
			for i := range want {
				d := int(got[i]) - int(want[i])
				if d < -1 || d > 1 {
					t.Fatalf("sample %d channel %d: got %d, reference %d", i/C, i%C, got[i], want[i])
				}
				if d != 0 {
					diff1++
				}
				if want[i] == math.MaxInt16 || want[i] == math.MinInt16 {
					saturated++
				}
			}
			if diff1 > len(want)/1000 {
				t.Errorf("%d of %d values differ by one count from the reference", diff1, len(want))
			}
			if tc.name == "saturating" && saturated < len(want)/20 {
				t.Errorf("only %d of %d values saturate; the test is too weak", saturated, len(want))
			}
			t.Logf("%d spikes, %d values, %d off by one, %d saturated", len(tr.SpikeTimes), len(want), diff1, saturated)
		})
	}
}

func TestToInt16(t *testing.T) {
	for _, x := range []float32{0, 0.5, -0.5, 1.49, -1.5, 2.5, 32766.4, 32766.5, 32767, 32767.4, 32767.6, 40000,
		-32767.5, -32768, -32768.4, -32768.6, -40000, 1e30, -1e30, float32(math.Inf(1)), float32(math.Inf(-1))} {
		if got, want := toInt16(x), refInt16(float64(x)); got != want {
			t.Errorf("toInt16(%g) = %d, want %d", x, got, want)
		}
	}
}
