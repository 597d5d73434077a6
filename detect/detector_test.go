package detect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
	"dspk/probe"
)

// refSpike is one detection of the reference.
type refSpike struct {
	col, f, q, sign int
	amp, x, y       float64
	feats           []float64 // nc×P
}

// referenceDetect is Kilosort4's detection (kilosort4.md §9–§10) written
// plainly in float64 over the whole window: no pruning, no chunks, every
// intermediate dense. It takes the grid tables and templates as given.
func referenceDetect(g *Grid, tm *Templates, x []float32, T int, prm Params, owned int) []refSpike {
	C, K, S, nt, nc, nc2, F := g.C(), tm.K, g.S, prm.NT, g.NC, g.NC2, g.F()
	half := nt / 2
	// 1. B[c][k][t] = Σ_j X[c, t+j−30]·wTEMP[k, j], zeros outside.
	B := make([][][]float64, C)
	for c := range C {
		B[c] = make([][]float64, K)
		for k := range K {
			B[c][k] = make([]float64, T)
			for t := range T {
				var s float64
				for j := range nt {
					if tt := t + j - half; tt >= 0 && tt < T {
						s += float64(x[c*T+tt]) * float64(tm.WTEMP[k*nt+j])
					}
				}
				B[c][k][t] = s
			}
		}
	}
	// 2–3. A[q,f,t], As = max_q |A| (first max), sign.
	As := make([][]float64, F)
	imax := make([][]int, F)
	for f := range F {
		As[f] = make([]float64, T)
		imax[f] = make([]int, T)
		for t := range T {
			best, bq, sign := -1.0, 0, 0
			for q := range S * K {
				s, k := q/K, q%K
				var a float64
				for j := range nc {
					a += float64(g.Weights[(f*S+s)*nc+j]) * B[g.IC[f*nc+j]][k][t]
				}
				if math.Abs(a) > best {
					best, bq = math.Abs(a), q
					sign = 1
					if a < 0 {
						sign = -1
					}
				}
			}
			As[f][t] = best
			imax[f][t] = (bq + 1) * sign
		}
	}
	// 4–5. Amax over the nc2 nearest centres; zero the padding; max-pool
	// ±nt0min with −inf outside.
	Amax := make([][]float64, F)
	for f := range F {
		Amax[f] = make([]float64, T)
		for t := range T {
			if t < nt || t >= T-nt {
				continue
			}
			m := math.Inf(-1)
			for j := range nc2 {
				m = max(m, As[g.IC2[f*nc2+j]][t])
			}
			Amax[f][t] = m
		}
	}
	var out []refSpike
	for t := nt; t < nt+owned; t++ {
		for f := range F {
			pool := math.Inf(-1)
			for u := -prm.NT0Min; u <= prm.NT0Min; u++ {
				if tt := t + u; tt >= 0 && tt < T {
					pool = max(pool, Amax[f][tt])
				}
			}
			if !(As[f][t] == pool && As[f][t] > prm.ThUniversal) {
				continue
			}
			q := abs(imax[f][t]) - 1
			sign := 1
			if imax[f][t] < 0 {
				sign = -1
			}
			sp := refSpike{col: t, f: f, q: q, sign: sign, amp: As[f][t]}
			var sw, sx, sy float64
			for j := range nc {
				c := g.IC[f*nc+j]
				v := B[c][q%K][t] * float64(sign)
				if v > 0 {
					sw += v
					sx += v * g.ChanX[c]
					sy += v * g.ChanY[c]
				}
			}
			sp.x, sp.y = sx/sw, sy/sw
			for j := range nc {
				c := int(g.IC[f*nc+j])
				for p := range tm.P {
					var s float64
					for m := range nt {
						s += float64(x[c*T+t-half+m]) * float64(tm.WPCA[p*nt+m])
					}
					sp.feats = append(sp.feats, s)
				}
			}
			out = append(out, sp)
		}
	}
	return out
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// compareToReference checks the detector's spikes against the reference.
func compareToReference(t *testing.T, got *Spikes, want []refSpike, g *Grid, prm Params, ownStart int64) {
	t.Helper()
	type key struct{ col, f int }
	wantBy := map[key]refSpike{}
	for _, s := range want {
		wantBy[key{s.col, s.f}] = s
	}
	off := int64(prm.NT/2 - prm.NT0Min)
	seen := map[key]bool{}
	bad := 0
	for n := range got.Len() {
		col := int(got.Sample[n] - ownStart + off + int64(prm.NT))
		k := key{col, int(got.Center[n])}
		seen[k] = true
		w, ok := wantBy[k]
		if !ok {
			t.Errorf("extra detection at column %d centre %d (amp %g, q %d)", col, k.f, got.Amplitude[n], got.Template[n])
			bad++
			continue
		}
		if int(got.Template[n]) != w.q || int(got.Sign[n]) != w.sign {
			t.Errorf("column %d centre %d: template %d sign %d, reference %d %d", col, k.f, got.Template[n], got.Sign[n], w.q, w.sign)
		}
		if math.Abs(float64(got.Amplitude[n])-w.amp) > 1e-5*w.amp {
			t.Errorf("column %d centre %d: amplitude %.7g, reference %.7g", col, k.f, got.Amplitude[n], w.amp)
		}
		if math.Abs(float64(got.X[n])-w.x) > 1e-3 || math.Abs(float64(got.Y[n])-w.y) > 1e-3 {
			t.Errorf("column %d centre %d: position (%g, %g), reference (%g, %g)", col, k.f, got.X[n], got.Y[n], w.x, w.y)
		}
		for j := range g.NC {
			if int(got.Channels[n*g.NC+j]) != int(g.IC[k.f*g.NC+j]) {
				t.Errorf("column %d centre %d: channel %d is %d, want %d", col, k.f, j, got.Channels[n*g.NC+j], g.IC[k.f*g.NC+j])
			}
		}
		var scale float64
		for _, v := range w.feats {
			scale = max(scale, math.Abs(v))
		}
		for i, v := range w.feats {
			if gv := float64(got.Features[n*g.NC*got.P+i]); math.Abs(gv-v) > 1e-5*scale+1e-6 {
				t.Errorf("column %d centre %d: feature %d = %g, reference %g", col, k.f, i, gv, v)
				break
			}
		}
		if bad > 10 {
			t.Fatal("too many differences")
		}
	}
	for _, w := range want {
		if !seen[key{w.col, w.f}] {
			t.Errorf("missed detection at column %d centre %d (amp %g, q %d)", w.col, w.f, w.amp, w.q)
		}
	}
	// Order: by column, then centre.
	for n := 1; n < got.Len(); n++ {
		if got.Sample[n] < got.Sample[n-1] || (got.Sample[n] == got.Sample[n-1] && got.Center[n] <= got.Center[n-1]) {
			t.Errorf("spikes %d and %d out of order", n-1, n)
			break
		}
	}
}

type detCase struct {
	name           string
	p              *probe.Probe
	nT             int // owned columns of a full window
	owned          int
	nspikes        int
	amin, amax     float64
	k              int
	chunk, workers int
	sizes          int // template sizes S; 0 means the default 5
}

func detCases() []detCase {
	return []detCase{
		{name: "64ch", p: twoColumnProbe(64), nT: 3000, owned: 3000, nspikes: 40, amin: 8, amax: 40, k: 6, chunk: 1888, workers: 2},
		{name: "64ch_chunk100_3workers", p: twoColumnProbe(64), nT: 3000, owned: 3000, nspikes: 40, amin: 8, amax: 40, k: 6, chunk: 100, workers: 3},
		{name: "64ch_lastwindow", p: twoColumnProbe(64), nT: 3000, owned: 1234, nspikes: 40, amin: 8, amax: 40, k: 6, chunk: 1888, workers: 2},
		{name: "24ch_k3_chunk7", p: twoColumnProbe(24), nT: 777, owned: 777, nspikes: 12, amin: 10, amax: 30, k: 3, chunk: 7, workers: 2},
		{name: "7ch_single_column", p: func() *probe.Probe {
			p := twoColumnProbe(7)
			for i := range p.X {
				p.X[i], p.Y[i] = 0, float64(25*i)
			}
			return p
		}(), nT: 500, owned: 500, nspikes: 6, amin: 10, amax: 30, k: 2, chunk: 1888, workers: 1},
		{name: "24ch_S3_nc", p: twoColumnProbe(24), nT: 900, owned: 900, nspikes: 10, amin: 10, amax: 30, k: 5, chunk: 300, workers: 2, sizes: 3},
		{name: "owned1", p: twoColumnProbe(16), nT: 1, owned: 1, nspikes: 1, amin: 30, amax: 30, k: 6, chunk: 1888, workers: 2},
		{name: "1ch", p: twoColumnProbe(1), nT: 300, owned: 300, nspikes: 3, amin: 15, amax: 30, k: 4, chunk: 64, workers: 2},
	}
}

// buildCase returns a detector input for c.
func buildCase(c detCase, seed uint64) (prm Params, g *Grid, tm *Templates, x []float32, T int) {
	prm = DefaultParams()
	prm.NTemplates = c.k
	if c.sizes > 0 {
		prm.TemplateSizes = c.sizes
		prm.NearestChans = 7
		prm.NearestTemplates = 20
	}
	T = c.nT + 2*prm.NT
	var err error
	g, err = NewGrid(c.p, prm)
	if err != nil {
		panic(err)
	}
	tm = synthTemplates(c.k, prm.NPCs, prm.NT, prm.NT0Min)
	rng := rand.New(rand.NewPCG(seed, 17))
	shapes := synthShapes(c.k, prm.NT, prm.NT0Min)
	sp := randomSpikes(rng, c.p, c.nspikes, 0, T, c.amin, c.amax, c.k, true)
	if c.name == "owned1" {
		sp[0].tau = prm.NT - 10 // response peak in the one owned column
	}
	x = synthWindow(rng, c.p, T, shapes, prm.NT0Min, sp, 1, 20)
	return prm, g, tm, x, T
}

func TestDetectMatchesReference(t *testing.T) {
	t.Parallel()
	for _, c := range detCases() {
		t.Run(c.name, func(t *testing.T) {
			prm, g, tm, x, T := buildCase(c, 1)
			d := newCPUDetector(g, tm, T, prm)
			d.setChunk(c.chunk, c.workers)
			poison(d)
			const ownStart = 1_000_000
			var got Spikes
			st := d.Detect(&got, x, ownStart, c.owned)
			want := referenceDetect(g, tm, x, T, prm, c.owned)
			if len(want) == 0 && c.nspikes > 3 {
				t.Fatalf("reference found no spikes: bad test data")
			}
			compareToReference(t, &got, want, g, prm, ownStart)
			t.Logf("%d spikes (reference %d); stats %+v", got.Len(), len(want), st)
		})
	}
}

// poison fills the detector's scratch with NaN, so that anything read
// before being written shows up as a missed or wrong detection.
func poison(d *Detector) {
	nan := float32(math.NaN())
	for _, w := range d.ws {
		for _, s := range [][]float32{w.b, w.m, w.mb, w.sb, w.u, w.resp, w.choice, w.acc} {
			for i := range s {
				s[i] = nan
			}
		}
	}
}

// TestDetectPruningExact checks that pruning changes nothing, on data
// with many spikes, and that it prunes most of the work.
func TestDetectPruningExact(t *testing.T) {
	t.Parallel()
	for _, c := range append(detCases()[:4], detCases()[5]) {
		t.Run(c.name, func(t *testing.T) {
			prm, g, tm, x, T := buildCase(c, 2)
			d := newCPUDetector(g, tm, T, prm)
			d.setChunk(c.chunk, c.workers)
			var a, b Spikes
			sa := d.Detect(&a, x, 0, c.owned)
			d.noPrune = true
			sb := d.Detect(&b, x, 0, c.owned)
			if a.Len() == 0 {
				t.Fatal("no spikes: bad test data")
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("pruned and unpruned detections differ: %d vs %d spikes", a.Len(), b.Len())
			}
			if sa.Strong != sb.Strong {
				t.Errorf("strong points %d pruned, %d unpruned", sa.Strong, sb.Strong)
			}
			if sa.Survivors*4 > sb.Survivors {
				t.Errorf("pruning kept %d of %d (centre, column) pairs", sa.Survivors, sb.Survivors)
			}
			t.Logf("pruned: %+v; unpruned: %+v", sa, sb)
		})
	}
}

// TestDetectChunkingInvariant checks that results do not depend on the
// chunk size or the number of goroutines, and that Detect appends.
func TestDetectChunkingInvariant(t *testing.T) {
	t.Parallel()
	for ci, chunks := range map[int][][2]int{
		0: {{57, 3}, {500, 2}, {1888, 1}, {1888, 4}},
		3: {{1, 2}, {2, 1}, {100, 3}},
	} {
		c := detCases()[ci]
		prm, g, tm, x, T := buildCase(c, 3)
		d := newCPUDetector(g, tm, T, prm)
		var ref Spikes
		d.setChunk(1<<30, 1)
		d.Detect(&ref, x, 5, c.owned)
		if ref.Len() == 0 {
			t.Fatal("no spikes")
		}
		for _, cw := range chunks {
			d.setChunk(cw[0], cw[1])
			var got Spikes
			d.Detect(&got, x, 5, c.owned)
			if !reflect.DeepEqual(ref, got) {
				t.Errorf("%s: chunk %d, %d workers: %d spikes differ from one chunk's %d", c.name, cw[0], cw[1], got.Len(), ref.Len())
			}
		}
		// Appending to a non-empty destination keeps what was there.
		both := Spikes{}
		both.Append(&ref)
		d.Detect(&both, x, 5, c.owned)
		if both.Len() != 2*ref.Len() || both.Sample[ref.Len()] != ref.Sample[0] || both.Sample[0] != ref.Sample[0] {
			t.Errorf("appending: %d spikes, want %d", both.Len(), 2*ref.Len())
		}
	}
}

// TestDetectTiming checks the trough-aligned sample against injected
// isolated spikes: each must be found within ±2 samples of its trough.
func TestDetectTiming(t *testing.T) {
	t.Parallel()
	prm := DefaultParams()
	p := twoColumnProbe(64)
	g, err := NewGrid(p, prm)
	if err != nil {
		t.Fatal(err)
	}
	tm := synthTemplates(6, 6, prm.NT, prm.NT0Min)
	shapes := synthShapes(6, prm.NT, prm.NT0Min)
	nT := 4000
	T := nT + 2*prm.NT
	rng := rand.New(rand.NewPCG(4, 4))
	var sp []injected
	for i := range 20 { // well separated in time
		sp = append(sp, injected{tau: prm.NT + 100 + 190*i, x: 16, y: 100 + 10*float64(i), amp: 20, k: i % 6, sign: 1})
	}
	x := synthWindow(rng, p, T, shapes, prm.NT0Min, sp, 1, 20)
	d := newCPUDetector(g, tm, T, prm)
	var got Spikes
	const ownStart = 777
	d.Detect(&got, x, ownStart, nT)
	for _, s := range sp {
		trough := ownStart + int64(s.tau-prm.NT)
		found := false
		for n := range got.Len() {
			if dt := got.Sample[n] - trough; dt >= -2 && dt <= 2 && math.Abs(float64(got.Y[n])-s.y) < 20 {
				found = true
			}
		}
		if !found {
			t.Errorf("spike with trough at sample %d (y %g) not found", trough, s.y)
		}
	}
	if got.Len() > 2*len(sp) {
		t.Errorf("%d detections for %d spikes", got.Len(), len(sp))
	}
}

func TestDetectAllocs(t *testing.T) {
	c := detCases()[0]
	prm, g, tm, x, T := buildCase(c, 5)
	d := newCPUDetector(g, tm, T, prm)
	var dst Spikes
	d.Detect(&dst, x, 0, c.owned)
	d.Detect(&dst, x, 0, c.owned)
	allocs := testing.AllocsPerRun(5, func() {
		dst.Reset()
		d.Detect(&dst, x, 0, c.owned)
	})
	if allocs != 0 {
		t.Errorf("Detect allocates %g times per window", allocs)
	}
}

func TestDetectPanics(t *testing.T) {
	t.Parallel()
	c := detCases()[3]
	prm, g, tm, x, T := buildCase(c, 6)
	d := newCPUDetector(g, tm, T, prm)
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"short x", func() { d.Detect(&Spikes{}, x[1:], 0, c.owned) }},
		{"owned 0", func() { d.Detect(&Spikes{}, x, 0, 0) }},
		{"owned too many", func() { d.Detect(&Spikes{}, x, 0, T-2*prm.NT+1) }},
		{"T too small", func() { newCPUDetector(g, tm, 2*prm.NT, prm) }},
		{"nt mismatch", func() { p := prm; p.NT = 31; p.NT0Min = 10; newCPUDetector(g, tm, T, p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || len(s) < 7 || s[:7] != "detect:" {
					t.Errorf("panic %v, want one prefixed detect:", r)
				}
			}()
			tc.fn()
		})
	}
}

func TestConvMatchesDirect(t *testing.T) {
	t.Parallel()
	prm := DefaultParams()
	nt := prm.NT
	tm := synthTemplates(6, 6, nt, prm.NT0Min)
	rng := rand.New(rand.NewPCG(8, 8))
	for _, T := range []int{123, 1000, 2500} {
		row := make([]float32, T)
		for i := range row {
			row[i] = float32(rng.NormFloat64() * 3)
		}
		spec := convSpectra(tm.WTEMP, 6, nt, convBlock)
		cor := newCorrelator(spec, 6, nt, convBlock)
		gcor := newGonumCorrelator(gonumSpectra(tm.WTEMP, 6, nt, 512), 6, nt, 512)
		rowB := make([]float32, T)
		for i := range rowB {
			rowB[i] = float32(rng.NormFloat64())
		}
		wt := make([][6]float32, nt)
		for j := range nt {
			for k := range 6 {
				wt[j][k] = tm.WTEMP[k*nt+j]
			}
		}
		xp := make([]float32, T+nt)
		copy(xp[nt/2:], row)
		for _, r := range [][2]int{{0, T}, {5, 1}, {T - 17, 17}, {3, min(T-3, 2000)}} {
			e0, w := r[0], r[1]
			fft := make([]float32, w*6)
			m := make([]float32, w)
			fftB := make([]float32, w*6)
			mB := make([]float32, w)
			dir := make([]float32, w*6)
			gon := make([]float32, w*6)
			gm := make([]float32, w)
			for i := range fft {
				fft[i], dir[i], fftB[i], gon[i] = float32(math.NaN()), float32(math.NaN()), float32(math.NaN()), float32(math.NaN())
			}
			for i := range m {
				m[i], mB[i] = float32(math.NaN()), float32(math.NaN())
			}
			// Paired with another row, alone, and through gonum: the
			// same values to float32 rounding.
			cor.correlate(fft, m, row, fftB, mB, rowB, e0, w)
			single := make([]float32, w*6)
			cor.correlate(single, make([]float32, w), row, nil, nil, nil, e0, w)
			gcor.correlate(gon, gm, row, e0, w)
			correlateDirect(dir, xp, wt, e0, w)
			for i := range fftB {
				var ref float64
				k, col := i/w, e0+i%w
				for j := range nt {
					if tt := col + j - nt/2; tt >= 0 && tt < T {
						ref += float64(rowB[tt]) * float64(tm.WTEMP[k*nt+j])
					}
				}
				if math.Abs(float64(fftB[i])-ref) > 1e-6*(1+math.Abs(ref)) {
					t.Fatalf("second row of a pair: col %d k %d: %g, want %g", col, k, fftB[i], ref)
				}
			}
			for i := range w {
				var mx float64
				for k := range 6 {
					var ref float64
					for j := range nt {
						if tt := e0 + i + j - nt/2; tt >= 0 && tt < T {
							ref += float64(row[tt]) * float64(tm.WTEMP[k*nt+j])
						}
					}
					// Float32 rounding of the result (FFT) or of the
					// accumulation (direct, 61 terms of |x|·|w|).
					var mag float64
					for j := range nt {
						if tt := e0 + i + j - nt/2; tt >= 0 && tt < T {
							mag += math.Abs(float64(row[tt]) * float64(tm.WTEMP[k*nt+j]))
						}
					}
					if f := float64(fft[k*w+i]); math.Abs(f-ref) > 6e-8*math.Abs(ref)+1e-12*mag {
						t.Fatalf("T %d col %d k %d: FFT %.9g, float64 direct %.9g", T, e0+i, k, f, ref)
					}
					if f := float64(single[k*w+i]); math.Abs(f-ref) > 6e-8*math.Abs(ref)+1e-12*mag {
						t.Fatalf("T %d col %d k %d: unpaired FFT %.9g, float64 direct %.9g", T, e0+i, k, f, ref)
					}
					if f := float64(gon[i*6+k]); math.Abs(f-ref) > 6e-8*math.Abs(ref)+1e-12*mag {
						t.Fatalf("T %d col %d k %d: gonum FFT %.9g, float64 direct %.9g", T, e0+i, k, f, ref)
					}
					if f := float64(dir[i*6+k]); math.Abs(f-ref) > 1e-6*mag {
						t.Fatalf("T %d col %d k %d: float32 direct %.9g, float64 %.9g", T, e0+i, k, f, ref)
					}
					mx = max(mx, float64(fft[k*w+i])*float64(fft[k*w+i]))
				}
				if math.Abs(float64(m[i])-mx) > 1e-6*mx {
					t.Fatalf("max B² %g, want %g", m[i], mx)
				}
			}
		}
	}
}

func TestStatsAdd(t *testing.T) {
	var s Stats
	s.Add(Stats{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14})
	s.Add(Stats{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14})
	if s != (Stats{2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28}) {
		t.Errorf("%+v", s)
	}
	_ = fmt.Sprint(s)
}

// TestDetectWindow checks that DetectWindow on a CPU window is Detect on
// its working array, and that NewDetector(dev, …) keeps its device.
func TestDetectWindow(t *testing.T) {
	c := detCases()[0]
	prm, g, tm, x, T := buildCase(c, 5)
	dev, _, _ := compute.Open("cpu")
	d, err := NewDetector(dev, g, tm, T, prm)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Device() != dev {
		t.Error("Device() is not the device given")
	}
	win, err := dev.NewWindow(g.C(), T, 1)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := win.Data()
	copy(h, x)
	var want, got Spikes
	wst := newCPUDetector(g, tm, T, prm).Detect(&want, x, 123, T-2*prm.NT)
	gst, err := d.DetectWindow(&got, win, 123, T-2*prm.NT)
	if err != nil {
		t.Fatal(err)
	}
	// The stage times differ from call to call; the counts may not.
	gst.ConvTime, gst.EvalTime, gst.SuppressTime = 0, 0, 0
	wst.ConvTime, wst.EvalTime, wst.SuppressTime = 0, 0, 0
	if want.Len() == 0 || !reflect.DeepEqual(got, want) || gst != wst {
		t.Errorf("DetectWindow: %d spikes %+v, Detect: %d spikes %+v", got.Len(), gst, want.Len(), wst)
	}
}

// TestPrepareDetector checks a detector built before its templates
// (PrepareDetector, then SetTemplates) against one built with them, spike
// for spike and value for value, on the CPU and, where there is one, the
// GPU; that templates of other sizes are refused and leave it usable;
// and that using it before SetTemplates, or setting them twice, panics.
func TestPrepareDetector(t *testing.T) {
	c := detCases()[2]
	prm, g, tm, x, T := buildCase(c, 9)
	var want Spikes
	newCPUDetector(g, tm, T, prm).Detect(&want, x, 321, c.owned)
	if want.Len() == 0 {
		t.Fatal("no spikes: the case tests nothing")
	}
	for _, name := range []string{"cpu", "gpu"} {
		t.Run(name, func(t *testing.T) {
			var dev *compute.Device
			if name == "gpu" {
				dev = gputest.Device(t)
			}
			d, err := PrepareDetector(dev, g, T, prm)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			mustPanic(t, "Detect before SetTemplates", func() { d.Detect(&Spikes{}, x, 321, c.owned) })
			other := synthTemplates(c.k+1, prm.NPCs, prm.NT, prm.NT0Min)
			if err := d.SetTemplates(other); err == nil {
				t.Fatal("SetTemplates accepted templates of another count")
			}
			if err := d.SetTemplates(tm); err != nil {
				t.Fatal(err)
			}
			mustPanic(t, "SetTemplates twice", func() { d.SetTemplates(tm) })
			var got Spikes
			if dev == nil {
				d.Detect(&got, x, 321, c.owned)
			} else {
				win := deviceWindow(t, dev, g.C(), T, x)
				if _, err := d.DetectWindow(&got, win, 321, c.owned); err != nil {
					t.Fatal(err)
				}
			}
			if a := compareSpikes(&want, &got); a.matched != a.cpu || a.matched != a.gpu || a.exact != a.cpu || !a.orderOK {
				t.Errorf("prepared detector differs from NewDetector's: %v", a)
			}
		})
	}
}

// mustPanic fails unless fn panics with a message prefixed "detect:".
func mustPanic(t *testing.T, what string, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if s, ok := r.(string); !ok || !strings.HasPrefix(s, "detect:") {
			t.Errorf("%s: panic %v, want one prefixed detect:", what, r)
		}
	}()
	fn()
}
