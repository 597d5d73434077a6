package sim

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"dspk/probe"
)

// ChunkSamples is the number of samples generated together from one
// random stream. The output depends on it, so it is fixed.
const ChunkSamples = 6000

// Model constants (see the package documentation).
const (
	noiseColour  = 0.5  // lag-1 coefficient a of the temporal colouring
	noiseCutoff  = 2.5  // the spatial noise kernel is cut at this many σ
	footprintUm  = 25.0 // the footprint's distance scale
	unitMarginUm = 10.0 // units lie up to this far beside a shank's outer columns
	unitZMinUm   = 2.0  // distance of units from the probe plane, µm
	unitZMaxUm   = 10.0
	// sourceMaxRatio sets the strongest source of the amplitude-limited
	// distances (Config.UnitZMaxUm > 0): at UnitZMinUm it would give this
	// many times AmplitudeMax.
	sourceMaxRatio = 2.0
	widthJitter    = 0.10 // relative jitter of waveform times
	heightJitter   = 0.15 // relative jitter of the rebound height
	syncValue      = 64   // SpikeGLX sync word when high
)

// Random stream kinds; every stream is seeded by (Config.Seed, kind, index).
const (
	kindUnits uint64 = 1 + iota
	kindOffsets
	kindCommon
	kindSpikes // index: unit
	kindNoise  // index: chunk (uint64(−1) for the row before chunk 0)
	kindPairs  // index: 0
	kindBursts // index: 0 picks the bursting units; unit+1 their bursts
)

// splitmix64 is the finaliser of SplitMix64, a bijective bit mixer.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// newRand returns the random stream (seed, kind, index): a PCG generator
// whose 128-bit state is a hash of the three words.
func newRand(seed, kind, index uint64) *rand.Rand {
	h := splitmix64(seed ^ splitmix64(kind))
	a := splitmix64(h ^ index)
	b := splitmix64(a ^ 0x5851f42d4c957f2d ^ splitmix64(index))
	return rand.New(rand.NewPCG(a, b))
}

// unit is one simulated neuron.
type unit struct {
	x, y, z float64 // µm at time 0
	amp     float64 // peak amplitude on the best site, noise SDs
	rate    float64 // Hz
	shape   Shape
	tj, rj  float64 // the waveform's time and rebound jitters
	scale   float64 // counts per unit footprint
	peak    int     // best site at time 0
	wave    []float64
	wave32  []float32
	gain    []float32 // scale·f(d) per site at time 0
}

// model is everything a chunk needs; it is immutable after newModel.
type model struct {
	cfg     Config // resolved
	probe   *probe.Probe
	nSites  int
	nChan   int
	samples int64
	siteRow []int
	syncRow int // −1 if none
	pre, nt int

	units    []unit
	times    []int64 // trough samples, sorted
	clusters []int32
	scales   []float32 // per-spike amplitude factors; nil: all 1
	motion   motionModel

	// Spatial noise kernel, CSR over sites.
	kStart []int32
	kIdx   []int32
	kW     []float32

	offsets   []float32
	cmPhase   float64
	noiseGain float32 // NoiseSD/√(1+a²)
}

// footprint is the relative amplitude at 3-D distance² d2 µm².
func footprint(d2 float64) float64 {
	q := 1 + d2/(footprintUm*footprintUm)
	return 1 / (q * math.Sqrt(q))
}

// newModel draws the units, their spike trains, the offsets and the noise
// kernel. cfg must be resolved.
func newModel(cfg Config) *model {
	p := cfg.Probe
	m := &model{
		cfg:     cfg,
		probe:   p,
		nSites:  p.Len(),
		nChan:   p.NChanFile,
		samples: cfg.Samples(),
		siteRow: p.ChanMap,
		syncRow: -1,
	}
	m.pre, m.nt = waveformLen(cfg.SampleRate)
	if !slices.Contains(p.ChanMap, p.NChanFile-1) {
		m.syncRow = p.NChanFile - 1
	}
	m.noiseGain = float32(cfg.NoiseSD / math.Sqrt(1+noiseColour*noiseColour))
	m.motion = newMotionModel(cfg)
	m.buildUnits()
	m.buildPairs()
	m.buildSpikes()
	m.buildKernel()

	r := newRand(cfg.Seed, kindOffsets, 0)
	m.offsets = make([]float32, m.nSites)
	for i := range m.offsets {
		m.offsets[i] = float32(cfg.OffsetMax * (2*r.Float64() - 1))
	}
	m.cmPhase = 2 * math.Pi * newRand(cfg.Seed, kindCommon, 0).Float64()
	return m
}

// shankExtent is the bounding box of one shank's sites.
type shankExtent struct{ x0, x1, y0, y1 float64 }

func (m *model) buildUnits() {
	p, cfg := m.probe, m.cfg
	ext := map[int]*shankExtent{}
	var shanks []int
	for i := range p.Len() {
		e, ok := ext[p.Shank[i]]
		if !ok {
			e = &shankExtent{p.X[i], p.X[i], p.Y[i], p.Y[i]}
			ext[p.Shank[i]] = e
			shanks = append(shanks, p.Shank[i])
		}
		e.x0, e.x1 = math.Min(e.x0, p.X[i]), math.Max(e.x1, p.X[i])
		e.y0, e.y1 = math.Min(e.y0, p.Y[i]), math.Max(e.y1, p.Y[i])
	}
	slices.Sort(shanks)

	r := newRand(cfg.Seed, kindUnits, 0)
	uni := func(a, b float64) float64 { return a + (b-a)*r.Float64() }
	m.units = make([]unit, cfg.Units)
	for k := range m.units {
		u := &m.units[k]
		e := ext[shanks[r.IntN(len(shanks))]]
		u.x = uni(e.x0-unitMarginUm, e.x1+unitMarginUm)
		u.y = uni(e.y0, e.y1)
		uz := r.Float64()
		u.z = unitZMinUm + (unitZMaxUm-unitZMinUm)*uz
		u.amp = math.Exp(uni(math.Log(cfg.AmplitudeMin), math.Log(cfg.AmplitudeMax)))
		if cfg.UnitZMaxUm > 0 {
			u.z = cfg.UnitZMinUm + (m.zLimit(u.amp)-cfg.UnitZMinUm)*uz
		}
		u.rate = uni(cfg.RateMin, cfg.RateMax)
		u.shape = Shape(r.IntN(numShapes))
		u.tj = uni(1-widthJitter, 1+widthJitter)
		u.rj = uni(1-heightJitter, 1+heightJitter)
		m.finishUnit(u)
	}
}

// zLimit is the largest distance from the probe plane of a unit of peak
// amplitude amp: the distance at which the strongest source (one that
// gives sourceMaxRatio·AmplitudeMax at UnitZMinUm) falls to amp, by the
// footprint of the distance alone, capped at UnitZMaxUm.
func (m *model) zLimit(amp float64) float64 {
	cfg := m.cfg
	z0 := cfg.UnitZMinUm
	// footprint(z²) = footprint(z0²)·amp/(ratio·AmplitudeMax) with
	// footprint = q^−1.5, q = 1 + d²/footprintUm².
	q := (1 + z0*z0/(footprintUm*footprintUm)) * math.Pow(sourceMaxRatio*cfg.AmplitudeMax/amp, 2.0/3)
	z := footprintUm * math.Sqrt(q-1)
	return max(z0, min(z, cfg.UnitZMaxUm))
}

// finishUnit computes the waveform, best site, scale and per-site gains
// of u from its shape, jitters, position and amplitude.
func (m *model) finishUnit(u *unit) {
	cfg := m.cfg
	u.wave = shapeBase[u.shape].jittered(u.tj, u.rj).waveform(cfg.SampleRate, m.pre, m.nt)
	u.wave32 = make([]float32, m.nt)
	for i, v := range u.wave {
		u.wave32[i] = float32(v)
	}

	f := make([]float64, m.nSites)
	best := 0
	for i := range f {
		f[i] = m.footprintAt(u, i, u.y)
		if f[i] > f[best] {
			best = i
		}
	}
	u.peak = best
	u.scale = u.amp * cfg.NoiseSD / f[best]
	u.gain = make([]float32, m.nSites)
	for i := range f {
		u.gain[i] = float32(u.scale * f[i])
	}
}

// footprintAt is the footprint of unit u on site i with the unit at depth y.
func (m *model) footprintAt(u *unit, i int, y float64) float64 {
	dx, dy := u.x-m.probe.X[i], y-m.probe.Y[i]
	return footprint(dx*dx + dy*dy + u.z*u.z)
}

// unitY returns the depth of unit u at sample t.
func (m *model) unitY(u *unit, t int64) float64 {
	return u.y + m.motion.unitDisp(m.motion.rigidSample(t), u.y)
}

// refractorySamples is the dead time in whole samples.
func (m *model) refractorySamples() float64 {
	return math.Ceil(m.cfg.RefractoryMs * 1e-3 * m.cfg.SampleRate)
}

func (m *model) buildSpikes() {
	fs := m.cfg.SampleRate
	tau := m.refractorySamples()
	first, last := int64(m.pre), m.samples-int64(m.nt-m.pre)
	bursting := m.burstingUnits()
	var all []spikeEvent
	for k := range m.units {
		u := &m.units[k]
		r := newRand(m.cfg.Seed, kindSpikes, uint64(k))
		if bursting[k] {
			all = m.burstTrain(all, k, r, first, last)
			continue
		}
		meanISI := fs / u.rate
		expMean := meanISI - tau
		// Start well before 0 so the process is near stationary at 0.
		t := -math.Max(fs, 10*meanISI)
		for {
			t += tau + r.ExpFloat64()*expMean
			ts := int64(math.Floor(t))
			if ts > last {
				break
			}
			if ts >= first {
				all = append(all, spikeEvent{ts, int32(k), 1})
			}
		}
	}
	slices.SortFunc(all, func(a, b spikeEvent) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.u, b.u)
	})
	m.times = make([]int64, len(all))
	m.clusters = make([]int32, len(all))
	if slices.Contains(bursting, true) {
		m.scales = make([]float32, len(all))
	}
	for i, s := range all {
		m.times[i], m.clusters[i] = s.t, s.u
		if m.scales != nil {
			m.scales[i] = s.scale
		}
	}
}

// spikeEvent is one spike while the trains are built.
type spikeEvent struct {
	t     int64
	u     int32
	scale float32
}

// kernelWeights returns the normalised spatial noise kernel row of site i
// as (neighbour, weight) pairs in site order.
func (m *model) kernelWeights(i int) ([]int32, []float64) {
	sigma := m.cfg.NoiseCorrUm
	if sigma == 0 {
		return []int32{int32(i)}, []float64{1}
	}
	p := m.probe
	var idx []int32
	var w []float64
	ss := 0.0
	for j := range m.nSites {
		dx, dy := p.X[i]-p.X[j], p.Y[i]-p.Y[j]
		d2 := dx*dx + dy*dy
		if d2 > noiseCutoff*noiseCutoff*sigma*sigma {
			continue
		}
		v := math.Exp(-d2 / (2 * sigma * sigma))
		idx = append(idx, int32(j))
		w = append(w, v)
		ss += v * v
	}
	n := math.Sqrt(ss)
	for k := range w {
		w[k] /= n
	}
	return idx, w
}

func (m *model) buildKernel() {
	m.kStart = make([]int32, m.nSites+1)
	for i := range m.nSites {
		idx, w := m.kernelWeights(i)
		m.kIdx = append(m.kIdx, idx...)
		for _, v := range w {
			m.kW = append(m.kW, float32(v))
		}
		m.kStart[i+1] = int32(len(m.kIdx))
	}
}

// numChunks is the number of chunks of the recording.
func (m *model) numChunks() int64 {
	return (m.samples + ChunkSamples - 1) / ChunkSamples
}

// chunkBounds returns the samples [start, end) of chunk k.
func (m *model) chunkBounds(k int64) (start, end int64) {
	start = k * ChunkSamples
	return start, min(start+ChunkSamples, m.samples)
}

// spikeRange returns the indices [lo, hi) of the spikes whose waveform
// overlaps samples [start, end).
func (m *model) spikeRange(start, end int64) (lo, hi int) {
	a := start + int64(m.pre-m.nt) + 1 // trough > start + pre − nt
	b := end + int64(m.pre)            // trough < end + pre
	lo = sort.Search(len(m.times), func(i int) bool { return m.times[i] >= a })
	hi = sort.Search(len(m.times), func(i int) bool { return m.times[i] >= b })
	return lo, hi
}
