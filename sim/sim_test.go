package sim

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"dspk/probe"
)

// shortConfig is the default NP1 set-up cut to the given length.
func shortConfig(seconds float64) Config {
	c := DefaultConfig()
	c.Seconds = seconds
	return c
}

// readAll reads every sample of rec with ReadInt16.
func readAll(t testing.TB, rec *Recording) []int16 {
	t.Helper()
	n := int(rec.Samples())
	d := make([]int16, n*rec.Channels())
	if err := rec.ReadInt16(d, 0, n); err != nil {
		t.Fatal(err)
	}
	return d
}

// fileBytes returns the bytes rec.WriteTo writes from the start.
func fileBytes(t testing.TB, rec *Recording) []byte {
	t.Helper()
	if _, err := rec.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	n, err := rec.WriteTo(&b)
	if err != nil {
		t.Fatal(err)
	}
	if n != rec.Size() || int64(b.Len()) != rec.Size() {
		t.Fatalf("WriteTo wrote %d bytes (buffer %d), want %d", n, b.Len(), rec.Size())
	}
	return b.Bytes()
}

func TestWaveforms(t *testing.T) {
	for _, fs := range []float64{30000, 25000, 40000, 10000, 31234.5} {
		pre, nt := waveformLen(fs)
		if fs == 30000 && (pre != 20 || nt != 61) {
			t.Fatalf("30 kHz: trough index %d of %d, want 20 of 61", pre, nt)
		}
		for s := range Shape(numShapes) {
			for _, j := range [][2]float64{{1, 1}, {1 - widthJitter, 1 - heightJitter}, {1 + widthJitter, 1 + heightJitter}, {1 - widthJitter, 1 + heightJitter}} {
				w := shapeBase[s].jittered(j[0], j[1]).waveform(fs, pre, nt)
				if len(w) != nt {
					t.Fatalf("%v at %g Hz: %d samples, want %d", s, fs, len(w), nt)
				}
				if w[pre] != -1 || w[0] != 0 || w[nt-1] != 0 {
					t.Errorf("%v %v at %g Hz: trough %g (want −1), ends %g, %g (want 0)", s, j, fs, w[pre], w[0], w[nt-1])
				}
				imax := 0
				for i, v := range w {
					if math.IsNaN(v) || v < -1 || v > 1 {
						t.Fatalf("%v at %g Hz: sample %d = %g", s, fs, i, v)
					}
					if i != pre && v <= -1+1e-3 {
						t.Errorf("%v %v at %g Hz: sample %d = %g rivals the trough", s, j, fs, i, v)
					}
					if v > w[imax] {
						imax = i
					}
				}
				// Biphasic: a positive rebound after the trough.
				if imax <= pre || w[imax] < 0.1 {
					t.Errorf("%v %v at %g Hz: largest positive value %g at %d, trough at %d", s, j, fs, w[imax], imax, pre)
				}
				if fs == 30000 && j == [2]float64{1, 1} {
					tp := float64(imax-pre) / fs * 1000
					band := map[Shape][2]float64{
						ShapeNarrow: {0.2, 0.4}, ShapeRegular: {0.4, 0.6}, ShapeWide: {0.6, 0.85}, ShapeTriphasic: {0.3, 0.55},
					}[s]
					if lo, hi := band[0], band[1]; tp < lo || tp > hi {
						t.Errorf("%v: trough-to-peak %.3f ms, want %g–%g", s, tp, lo, hi)
					}
					if s == ShapeTriphasic {
						pm := slices.Max(w[:pre])
						if pm < 0.05 {
							t.Errorf("triphasic: largest value before the trough %g, want a positive phase", pm)
						}
					}
				}
			}
		}
	}
}

func TestShapeText(t *testing.T) {
	for s := range Shape(numShapes) {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Shape
		if err := back.UnmarshalText(b); err != nil || back != s || s.String() != string(b) {
			t.Errorf("%d: %q → %d, %v", s, b, back, err)
		}
	}
	if _, err := Shape(numShapes).MarshalText(); err == nil {
		t.Error("MarshalText of an unknown shape succeeded")
	}
	var s Shape
	if err := s.UnmarshalText([]byte("round")); err == nil {
		t.Error("UnmarshalText of an unknown name succeeded")
	}
}

func TestConfigErrors(t *testing.T) {
	if _, err := DefaultConfig().resolved(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	badProbe := probe.NP1()
	badProbe.ChanMap[3] = badProbe.ChanMap[4]
	for name, edit := range map[string]func(*Config){
		"zero":          func(c *Config) { *c = Config{} },
		"no samples":    func(c *Config) { c.Seconds = 1e-6 },
		"negative time": func(c *Config) { c.Seconds = -1 },
		"NaN seconds":   func(c *Config) { c.Seconds = math.NaN() },
		"Inf drift":     func(c *Config) { c.DriftUmPerS = math.Inf(1) },
		"slow rate":     func(c *Config) { c.SampleRate = 5000 },
		"units":         func(c *Config) { c.Units = -1 },
		"noise":         func(c *Config) { c.NoiseSD = 0 },
		"corr":          func(c *Config) { c.NoiseCorrUm = -1 },
		"common":        func(c *Config) { c.CommonModeSD = -1 },
		"offset":        func(c *Config) { c.OffsetMax = -1 },
		"uV":            func(c *Config) { c.MicrovoltsPerCount = 0 },
		"amp order":     func(c *Config) { c.AmplitudeMin, c.AmplitudeMax = 10, 5 },
		"amp zero":      func(c *Config) { c.AmplitudeMin = 0 },
		"rate order":    func(c *Config) { c.RateMin, c.RateMax = 10, 5 },
		"rate too high": func(c *Config) { c.RateMax = 600 }, // 2-ms dead time allows < 500 Hz
		"refractory":    func(c *Config) { c.RefractoryMs = -1 },
		"probe":         func(c *Config) { c.Probe = badProbe },
	} {
		c := DefaultConfig()
		edit(&c)
		if _, err := Generate(c); err == nil {
			t.Errorf("%s: Generate accepted %+v", name, c)
		} else if !strings.HasPrefix(err.Error(), "sim: ") {
			t.Errorf("%s: error %q lacks the package prefix", name, err)
		}
	}
}

func TestDeterminism(t *testing.T) {
	cfg := shortConfig(0.5)
	cfg.DriftUmPerS = 10
	hash := func(procs int, c Config) [32]byte {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		rec, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(fileBytes(t, rec))
	}
	h1 := hash(1, cfg)
	h2 := hash(2, cfg)
	h3 := hash(3, cfg)
	if h1 != h2 || h1 != h3 {
		t.Errorf("GOMAXPROCS changes the output: %x %x %x", h1[:6], h2[:6], h3[:6])
	}
	other := cfg
	other.Seed++
	if hash(2, other) == h1 {
		t.Error("a different seed gives the same bytes")
	}
	// The config is not modified and the truth does not depend on procs.
	a, _ := Generate(cfg)
	b, _ := Generate(cfg)
	if !slices.Equal(a.Truth().SpikeTimes, b.Truth().SpikeTimes) || cfg.Probe != nil {
		t.Error("truth differs between two generations, or Generate modified the config")
	}
}

func TestReadPaths(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Probe = smallProbe()
	cfg.Seconds = (3.5*ChunkSamples + 3) / cfg.SampleRate
	cfg.Units = 8
	rec, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	whole := fileBytes(t, rec)
	n, C := rec.Samples(), rec.Channels()
	all := readAll(t, rec)
	for i, v := range all {
		if got := int16(uint16(whole[2*i]) | uint16(whole[2*i+1])<<8); got != v {
			t.Fatalf("value %d: WriteTo %d, ReadInt16 %d", i, got, v)
		}
	}

	// Random ranges, including single samples, chunk borders and the ends.
	rng := rand.New(rand.NewPCG(1, 2))
	ranges := [][2]int64{{0, 1}, {n - 1, 1}, {ChunkSamples - 1, 2}, {ChunkSamples, ChunkSamples}, {0, n}, {5, 0}}
	for range 40 {
		s := rng.Int64N(n)
		ranges = append(ranges, [2]int64{s, 1 + rng.Int64N(n-s)})
	}
	for _, r := range ranges {
		d := make([]int16, int(r[1])*C)
		for i := range d {
			d[i] = -31111
		}
		if err := rec.ReadInt16(d, r[0], int(r[1])); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d, all[r[0]*int64(C):(r[0]+r[1])*int64(C)]) {
			t.Fatalf("ReadInt16(%d, %d) differs from the whole read", r[0], r[1])
		}
	}
	for _, r := range [][2]int64{{-1, 1}, {n, 1}, {n - 1, 2}} {
		if err := rec.ReadInt16(make([]int16, int(r[1])*C), r[0], int(r[1])); err == nil {
			t.Errorf("ReadInt16(%d, %d) past the ends succeeded", r[0], r[1])
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("ReadInt16 with a short dst did not panic")
			}
		}()
		rec.ReadInt16(make([]int16, C), 0, 2)
	}()

	// io.Reader with odd buffer sizes, then Seek and WriteTo from mid-chunk.
	for _, size := range []int{1, 7, 4096, 1 << 20} {
		if _, err := rec.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		var got []byte
		buf := make([]byte, size)
		for {
			m, err := rec.Read(buf)
			got = append(got, buf[:m]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if m == 0 {
				t.Fatal("Read returned 0 bytes and no error")
			}
		}
		if !bytes.Equal(got, whole) {
			t.Fatalf("Read with %d-byte buffers differs from WriteTo", size)
		}
	}
	for _, off := range []int64{1, 2*int64(C)*ChunkSamples + 3, int64(len(whole)) - 1, int64(len(whole))} {
		if _, err := rec.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		m, err := rec.WriteTo(&b)
		if err != nil || m != int64(len(whole))-off || !bytes.Equal(b.Bytes(), whole[off:]) {
			t.Fatalf("WriteTo from %d: %d bytes, %v", off, m, err)
		}
	}
	if p, err := rec.Seek(-5, io.SeekEnd); err != nil || p != int64(len(whole))-5 {
		t.Errorf("Seek(-5, end) = %d, %v", p, err)
	}
	if _, err := rec.Seek(-1, io.SeekStart); err == nil {
		t.Error("Seek to −1 succeeded")
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.ReadInt16(make([]int16, C), 0, 1); err == nil {
		t.Error("ReadInt16 after Close succeeded")
	}
}

// failWriter fails after limit bytes.
type failWriter struct{ n, limit int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		return 0, io.ErrClosedPipe
	}
	w.n += len(p)
	return len(p), nil
}

func TestWriteToError(t *testing.T) {
	rec, err := Generate(shortConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	w := &failWriter{limit: 3 * ChunkSamples * 385 * 2}
	n, err := rec.WriteTo(w)
	if err != io.ErrClosedPipe || n != int64(w.limit) {
		t.Errorf("WriteTo into a failing writer: %d bytes, %v", n, err)
	}
	// The pipeline's goroutines have finished; give them time to exit.
	after := runtime.NumGoroutine()
	for i := 0; i < 100 && after > before; i++ {
		time.Sleep(10 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	if after > before {
		t.Errorf("%d goroutines before WriteTo, %d after", before, after)
	}
}

func TestRecordingInterface(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Probe = smallProbe()
	cfg.Seconds = 0.1
	rec, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	uv := rec.MicrovoltsPerCount()
	for r, v := range uv {
		want := cfg.MicrovoltsPerCount
		if r == 11 {
			want = 0
		}
		if v != want {
			t.Errorf("row %d: %g µV per count, want %g", r, v, want)
		}
	}
	if rec.Channels() != 12 || rec.Samples() != 3000 || rec.SampleRate() != 30000 || rec.Format() != "sim" ||
		rec.Size() != 3000*12*2 || !strings.Contains(rec.Name(), "seed=1") {
		t.Errorf("channels %d samples %d rate %g format %s size %d name %s",
			rec.Channels(), rec.Samples(), rec.SampleRate(), rec.Format(), rec.Size(), rec.Name())
	}
	p := rec.Probe()
	p.X[0] = 999
	if rec.Probe().X[0] == 999 || rec.Config().Probe.X[0] == 999 || cfg.Probe.X[0] != 0 {
		t.Error("Probe or Config share the probe's arrays")
	}
	def, _ := Generate(shortConfig(0.01))
	if def.Channels() != 385 || def.Probe().Len() != 384 {
		t.Errorf("default probe: %d channels, %d sites", def.Channels(), def.Probe().Len())
	}
}

func TestSpikeTrains(t *testing.T) {
	cfg := DefaultConfig() // 60 s, 120 units: spike trains only, nothing rendered
	rec, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Truth()
	fs := cfg.SampleRate
	pre, nt := tr.TroughIndex, len(tr.UnitWaveform[0])
	first, last := int64(pre), tr.Samples-int64(nt-pre)
	tau := int64(math.Ceil(cfg.RefractoryMs * 1e-3 * fs))
	if len(tr.SpikeTimes) != len(tr.SpikeClusters) {
		t.Fatalf("%d times, %d clusters", len(tr.SpikeTimes), len(tr.SpikeClusters))
	}
	lastOf := make([]int64, tr.Units())
	for i := range lastOf {
		lastOf[i] = -1 << 62
	}
	for i, s := range tr.SpikeTimes {
		u := tr.SpikeClusters[i]
		if s < first || s > last {
			t.Fatalf("spike %d at %d outside [%d, %d]", i, s, first, last)
		}
		if i > 0 && (s < tr.SpikeTimes[i-1] || s == tr.SpikeTimes[i-1] && u <= tr.SpikeClusters[i-1]) {
			t.Fatalf("spikes %d and %d out of order", i-1, i)
		}
		if u < 0 || int(u) >= tr.Units() {
			t.Fatalf("spike %d of unit %d", i, u)
		}
		if s-lastOf[u] < tau {
			t.Fatalf("unit %d fires at %d and %d, inside the %d-sample refractory period", u, lastOf[u], s, tau)
		}
		lastOf[u] = s
	}
	// Counts of a dead-time renewal process: mean λT, SD √(λT)·CV with
	// CV = 1 − λτ.
	span := float64(last-first+1) / fs
	counts := tr.UnitSpikeCounts()
	var sumN, sumMean, sumVar float64
	for u, n := range counts {
		lam := tr.UnitRate[u]
		if lam < cfg.RateMin || lam > cfg.RateMax {
			t.Errorf("unit %d rate %g Hz outside %g–%g", u, lam, cfg.RateMin, cfg.RateMax)
		}
		mean := lam * span
		sd := math.Sqrt(mean) * (1 - lam*float64(tau)/fs)
		if math.Abs(float64(n)-mean) > 5*sd+1 {
			t.Errorf("unit %d: %d spikes, expected %.0f ± %.1f", u, n, mean, sd)
		}
		sumN += float64(n)
		sumMean += mean
		sumVar += sd * sd
	}
	if math.Abs(sumN-sumMean) > 5*math.Sqrt(sumVar) {
		t.Errorf("%g spikes in all, expected %.0f ± %.0f", sumN, sumMean, math.Sqrt(sumVar))
	}
	t.Logf("%d spikes from %d units in %g s", len(tr.SpikeTimes), tr.Units(), cfg.Seconds)
}

func TestUnitDistributions(t *testing.T) {
	cfg := shortConfig(1)
	cfg.Units = 4000
	rec, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Truth()
	p := rec.Probe()
	below := 0
	shapes := make([]int, numShapes)
	gm := math.Sqrt(cfg.AmplitudeMin * cfg.AmplitudeMax)
	for u := range tr.Units() {
		a := tr.UnitAmplitude[u]
		if a < cfg.AmplitudeMin || a > cfg.AmplitudeMax {
			t.Fatalf("unit %d amplitude %g outside %g–%g", u, a, cfg.AmplitudeMin, cfg.AmplitudeMax)
		}
		if a < gm {
			below++
		}
		shapes[tr.UnitShape[u]]++
		if tr.UnitX[u] < slices.Min(p.X)-unitMarginUm || tr.UnitX[u] > slices.Max(p.X)+unitMarginUm ||
			tr.UnitY[u] < slices.Min(p.Y) || tr.UnitY[u] > slices.Max(p.Y) ||
			tr.UnitZ[u] < unitZMinUm || tr.UnitZ[u] > unitZMaxUm {
			t.Fatalf("unit %d at (%g, %g, %g) outside the probe's box", u, tr.UnitX[u], tr.UnitY[u], tr.UnitZ[u])
		}
	}
	// Log-uniform: half the units below the geometric mean of the bounds.
	if f := float64(below) / float64(tr.Units()); math.Abs(f-0.5) > 0.04 {
		t.Errorf("%.3f of units below %g SD, want 0.5 (log-uniform)", f, gm)
	}
	for s, n := range shapes {
		if math.Abs(float64(n)/float64(tr.Units())-0.25) > 0.04 {
			t.Errorf("shape %v: %d of %d units", Shape(s), n, tr.Units())
		}
	}
}

func TestAmplitudes(t *testing.T) {
	// Spikes alone, rendered and rounded: the trough of an isolated spike
	// on the best site is −amplitude·NoiseSD.
	cfg := shortConfig(10)
	cfg.RateMin, cfg.RateMax = 3, 3
	rec, err := generate(cfg, partSpikes)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Truth()
	p := rec.Probe()
	pre, nt := tr.TroughIndex, len(tr.UnitWaveform[0])
	C := rec.Channels()
	win := make([]int16, nt*C)
	measured := make([]bool, tr.Units())
	for i, s := range tr.SpikeTimes {
		u := tr.SpikeClusters[i]
		if measured[u] || i > 0 && s-tr.SpikeTimes[i-1] < int64(nt) ||
			i+1 < len(tr.SpikeTimes) && tr.SpikeTimes[i+1]-s < int64(nt) {
			continue
		}
		measured[u] = true
		if err := rec.ReadInt16(win, s-int64(pre), nt); err != nil {
			t.Fatal(err)
		}
		best, bestV, at := -1, int16(0), -1
		for c, r := range p.ChanMap {
			for j := range nt {
				if v := win[j*C+r]; v < bestV {
					best, bestV, at = c, v, j
				}
			}
		}
		want := -tr.UnitAmplitude[u] * cfg.NoiseSD
		if math.Abs(float64(bestV)-want) > 0.5+1e-6 || at != pre {
			t.Errorf("unit %d: trough %d at %d, want %.2f at %d", u, bestV, at, want, pre)
		}
		if best != int(tr.UnitPeakChannel[u]) && win[pre*C+p.ChanMap[tr.UnitPeakChannel[u]]] != bestV {
			t.Errorf("unit %d: deepest trough on site %d, truth says %d", u, best, tr.UnitPeakChannel[u])
		}
		if a := -float64(bestV) / cfg.NoiseSD; a < cfg.AmplitudeMin-0.05 || a > cfg.AmplitudeMax+0.05 {
			t.Errorf("unit %d: measured amplitude %.2f SD outside %g–%g", u, a, cfg.AmplitudeMin, cfg.AmplitudeMax)
		}
	}
	n := 0
	for _, m := range measured {
		if m {
			n++
		}
	}
	if n < tr.Units()*9/10 {
		t.Errorf("only %d of %d units had an isolated spike", n, tr.Units())
	}
}

func TestNoiseStatistics(t *testing.T) {
	cfg := shortConfig(1)
	rec, err := generate(cfg, partNoise)
	if err != nil {
		t.Fatal(err)
	}
	p := rec.Probe()
	d := readAll(t, rec)
	C, n, nS := rec.Channels(), int(rec.Samples()), p.Len()
	x := make([][]float64, nS)
	for c, r := range p.ChanMap {
		x[c] = make([]float64, n)
		for i := range n {
			x[c][i] = float64(d[i*C+r])
		}
	}
	// Rounding adds variance 1/12.
	wantSD := math.Sqrt(cfg.NoiseSD*cfg.NoiseSD + 1.0/12)
	mean := func(v []float64) float64 {
		s := 0.0
		for _, a := range v {
			s += a
		}
		return s / float64(len(v))
	}
	cov := func(a, b []float64, lag int) float64 {
		s := 0.0
		for i := lag; i < len(a); i++ {
			s += a[i] * b[i-lag]
		}
		return s / float64(len(a)-lag)
	}
	sumSD, sumLag := 0.0, 0.0
	for c := range nS {
		if m := mean(x[c]); math.Abs(m) > 0.5 {
			t.Errorf("site %d: mean %g", c, m)
		}
		sd := math.Sqrt(cov(x[c], x[c], 0))
		if math.Abs(sd/wantSD-1) > 0.03 {
			t.Errorf("site %d: SD %.3f, want %.3f", c, sd, wantSD)
		}
		sumSD += sd
		sumLag += cov(x[c], x[c], 1) / (sd * sd)
	}
	if m := sumSD / float64(nS); math.Abs(m/wantSD-1) > 0.005 {
		t.Errorf("mean SD %.4f, want %.4f", m, wantSD)
	}
	// Lag-1 autocorrelation a/(1+a²) = 0.4, less the share of the rounding.
	wantLag := 0.4 * cfg.NoiseSD * cfg.NoiseSD / (wantSD * wantSD)
	if m := sumLag / float64(nS); math.Abs(m-wantLag) > 0.01 {
		t.Errorf("mean lag-1 autocorrelation %.4f, want %.4f", m, wantLag)
	}
	// Spatial correlation: Σ_k w_ik·w_jk for the normalised kernel rows.
	ker := refKernel(p, cfg.NoiseCorrUm)
	checked, far := 0, 0
	for i := 0; i < nS; i += 3 {
		for j := i + 1; j < nS; j++ {
			want := 0.0
			for k := range nS {
				want += ker[i][k] * ker[j][k]
			}
			want *= cfg.NoiseSD * cfg.NoiseSD / (wantSD * wantSD)
			dist := math.Hypot(p.X[i]-p.X[j], p.Y[i]-p.Y[j])
			if want < 0.02 && (dist < 150 || j%17 != 0) {
				continue
			}
			got := cov(x[i], x[j], 0) / math.Sqrt(cov(x[i], x[i], 0)*cov(x[j], x[j], 0))
			if math.Abs(got-want) > 0.035 {
				t.Errorf("sites %d and %d (%.0f µm): correlation %.3f, want %.3f", i, j, dist, got, want)
			}
			if want == 0 {
				far++
			} else {
				checked++
			}
		}
	}
	if checked < 500 || far < 100 {
		t.Errorf("checked %d correlated and %d distant pairs; the test is too weak", checked, far)
	}
	t.Logf("%d correlated and %d distant pairs", checked, far)
}

func TestCommonModeOffsetsSync(t *testing.T) {
	cfg := shortConfig(2)
	rec, err := generate(cfg, partCommon)
	if err != nil {
		t.Fatal(err)
	}
	d := readAll(t, rec)
	C, n := rec.Channels(), int(rec.Samples())
	// Every site carries the same value; fit the 7-Hz sine.
	cm := make([]float64, n)
	var s2, c2, sxs, sxc float64
	for i := range n {
		row := d[i*C : i*C+384]
		for _, v := range row[1:] {
			if v != row[0] {
				t.Fatalf("sample %d: common mode differs between sites", i)
			}
		}
		if d[i*C+384] != 0 {
			t.Fatalf("sample %d: sync row %d without partSync", i, d[i*C+384])
		}
		cm[i] = float64(row[0])
		ph := 2 * math.Pi * cfg.CommonModeHz * float64(i) / cfg.SampleRate
		sv, cv := math.Sin(ph), math.Cos(ph)
		s2 += sv * sv
		c2 += cv * cv
		sxs += cm[i] * sv
		sxc += cm[i] * cv
	}
	// 14 whole periods in 2 s: sine and cosine are orthogonal.
	as, ac := sxs/s2, sxc/c2
	if amp := math.Hypot(as, ac); math.Abs(amp-cfg.CommonModeSine) > 0.3 {
		t.Errorf("7-Hz amplitude %.3f, want %g", amp, cfg.CommonModeSine)
	}
	res := 0.0
	for i := range n {
		ph := 2 * math.Pi * cfg.CommonModeHz * float64(i) / cfg.SampleRate
		r := cm[i] - as*math.Sin(ph) - ac*math.Cos(ph)
		res += r * r
	}
	wantSD := math.Sqrt(cfg.CommonModeSD*cfg.CommonModeSD + 1.0/12)
	if sd := math.Sqrt(res / float64(n)); math.Abs(sd/wantSD-1) > 0.03 {
		t.Errorf("broadband common mode SD %.3f, want %.3f", sd, wantSD)
	}

	rec, err = generate(cfg, partOffsets|partSync)
	if err != nil {
		t.Fatal(err)
	}
	d = readAll(t, rec)
	distinct := map[int16]bool{}
	for c := range 384 {
		o := d[c]
		distinct[o] = true
		if math.Abs(float64(o)) > cfg.OffsetMax {
			t.Errorf("site %d offset %d beyond ±%g", c, o, cfg.OffsetMax)
		}
		for i := range n {
			if d[i*C+c] != o {
				t.Fatalf("site %d: offset changes at sample %d", c, i)
			}
		}
	}
	// 384 draws from 601 integers give ≈ 284 distinct values.
	if len(distinct) < 220 {
		t.Errorf("only %d distinct offsets on 384 sites", len(distinct))
	}
	for i := range n {
		want := int16(0)
		if i%30000 < 15000 {
			want = 64
		}
		if d[i*C+384] != want {
			t.Fatalf("sample %d: sync %d, want %d", i, d[i*C+384], want)
		}
	}
}

func TestDrift(t *testing.T) {
	cfg := shortConfig(4)
	cfg.DriftUmPerS = 25 // 100 µm over the recording
	cfg.Units = 20
	cfg.RateMin, cfg.RateMax = 3, 3
	rec, err := generate(cfg, partSpikes)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Truth()
	p := rec.Probe()
	y := tr.SpikeY()
	C := rec.Channels()
	row := make([]int16, C)
	checked := 0
	for i, s := range tr.SpikeTimes {
		if s < 90000 || i > 0 && s-tr.SpikeTimes[i-1] < 61 || i+1 < len(tr.SpikeTimes) && tr.SpikeTimes[i+1]-s < 61 {
			continue
		}
		u := tr.SpikeClusters[i]
		if want := tr.UnitY[u] + cfg.DriftUmPerS*float64(s)/cfg.SampleRate; y[i] != want {
			t.Fatalf("SpikeY[%d] = %g, want %g", i, y[i], want)
		}
		if err := rec.ReadInt16(row, s, 1); err != nil {
			t.Fatal(err)
		}
		best := 0
		for c := range p.Len() {
			if row[p.ChanMap[c]] < row[p.ChanMap[best]] {
				best = c
			}
		}
		// The deepest site sits within a site pitch of the moved unit
		// (units near the ends may have moved off the probe).
		if y[i] < slices.Max(p.Y)-20 && math.Abs(p.Y[best]-y[i]) > 25 {
			t.Errorf("spike %d of unit %d at %d: deepest site at y=%g, unit at y=%g (y=%g at time 0)", i, u, s, p.Y[best], y[i], tr.UnitY[u])
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("only %d late isolated spikes checked", checked)
	}
}
