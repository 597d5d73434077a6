package preprocess

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"dspk/compute"
	"dspk/linalg"
)

// refPipeline is Kilosort4's preprocessing of one padded window in plain
// float64: selection, sign, mean removal, lower-median CAR, the circular
// correlation with HighpassTaps written out in the time domain, and dense
// whitening (W nil: none). It returns [C][T]. stages < 6 stops after that
// step (4: before the high-pass).
func refPipeline(src []int16, p Params, W []float64, stages int) []float64 {
	C, T, cf := len(p.ChanMap), p.T(), p.NChanFile
	x := make([]float64, C*T)
	for c, r := range p.ChanMap {
		var s float64
		for t := range T {
			v := float64(src[t*cf+r])
			if p.InvertSign {
				v = -v
			}
			x[c*T+t] = v
			s += v
		}
		for t := range T {
			x[c*T+t] -= s / float64(T)
		}
	}
	if p.DoCAR {
		col := make([]float64, C)
		for t := range T {
			for c := range C {
				col[c] = x[c*T+t]
			}
			slices.Sort(col)
			med := col[(C-1)/2]
			for c := range C {
				x[c*T+t] -= med
			}
		}
	}
	if stages <= 4 {
		return x
	}
	h := HighpassTaps(p.Fs, p.HighpassCutoff, p.HighpassOrder, T)
	for c := range C {
		copy(x[c*T:c*T+T], refCircular(x[c*T:c*T+T], h, 0))
	}
	if W == nil {
		return x
	}
	y := make([]float64, C*T)
	for i := range C {
		for j := range C {
			if w := W[i*C+j]; w != 0 {
				for t := range T {
					y[i*T+t] += w * x[j*T+t]
				}
			}
		}
	}
	return y
}

// randWindow returns a padded window of T samples of cf interleaved
// int16 channels: per-channel offsets, shared (common-mode) noise,
// independent noise and a few large spikes; the last channel, if sync is
// set, is a large square wave.
func randWindow(rng *rand.Rand, T, cf int, sync bool) []int16 {
	src := make([]int16, T*cf)
	off := make([]float64, cf)
	for c := range off {
		off[c] = 300 * rng.NormFloat64()
	}
	for t := range T {
		common := 40 * rng.NormFloat64()
		for c := range cf {
			v := off[c] + common + 20*rng.NormFloat64()
			if rng.IntN(500) == 0 {
				v -= 400
			}
			src[t*cf+c] = int16(math.Round(v))
		}
		if sync {
			src[t*cf+cf-1] = int16(30000 * ((t / 7) % 2))
		}
	}
	return src
}

// randWhitening returns a sparse whitening of C channels with K
// non-zeros per row, the diagonal among them.
func randWhitening(rng *rand.Rand, C, K int) *linalg.Whitening {
	w := &linalg.Whitening{C: C, K: K, Index: make([]int32, C*K), Value: make([]float32, C*K)}
	for c := range C {
		perm := rng.Perm(C)
		cols := []int{c}
		for _, j := range perm {
			if len(cols) == K {
				break
			}
			if j != c {
				cols = append(cols, j)
			}
		}
		for k, j := range cols {
			w.Index[c*K+k] = int32(j)
			w.Value[c*K+k] = float32(rng.NormFloat64() * 0.1)
		}
		w.Value[c*K] = 1 + float32(rng.Float64())
	}
	return w
}

func nanWindow(n int) []float32 { return nanRow(n) }

// small returns parameters for short test windows.
func small(chanMap []int, cf, batch, pad int) Params {
	p := DefaultParams()
	p.ChanMap, p.NChanFile, p.BatchSize, p.NT = chanMap, cf, batch, pad
	return p
}

func iota(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

// TestRunAgainstReference runs whole windows against the float64
// reference pipeline, to 1e-5 of the output's peak.
func TestRunAgainstReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	type tc struct {
		name    string
		p       Params
		whitenK int
	}
	var cases []tc
	for _, car := range []bool{true, false} {
		for _, inv := range []bool{false, true} {
			for _, wk := range []int{0, 3} {
				// 7 channels (odd) of a 9-channel file, shuffled map.
				p := small([]int{8, 0, 3, 5, 1, 6, 2}, 9, 400, 61)
				p.DoCAR, p.InvertSign = car, inv
				cases = append(cases, tc{fmt.Sprintf("C7_car%v_inv%v_w%d", car, inv, wk), p, wk})
			}
		}
	}
	// Even channel count (lower median), periodic filter path (T = 3122).
	p := small([]int{0, 1, 2, 3, 4, 5}, 6, 3000, 61)
	cases = append(cases, tc{"C6_T3122", p, 0})
	p = small([]int{5, 4, 3, 2, 1, 0}, 7, 3000, 61)
	p.InvertSign = true
	cases = append(cases, tc{"C6_T3122_inv_w", p, 4})
	// Sizes 1, odd lengths, no padding.
	cases = append(cases,
		tc{"C1", small([]int{0}, 1, 50, 3), 0},
		tc{"C2_T1", small([]int{1, 0}, 2, 1, 0), 0},
		tc{"C3_T2", small([]int{0, 1, 2}, 3, 2, 0), 1},
		tc{"C5_T127", small([]int{4, 3, 2, 1, 0}, 5, 5, 61), 2},
		tc{"C8_T1001", small(iota(8), 8, 1001, 0), 0},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pp, err := newCPU(c.p)
			if err != nil {
				t.Fatal(err)
			}
			C, T := len(c.p.ChanMap), c.p.T()
			if pp.Channels() != C || pp.Len() != T {
				t.Fatalf("Channels, Len = %d, %d; want %d, %d", pp.Channels(), pp.Len(), C, T)
			}
			var w *linalg.Whitening
			var W []float64
			if c.whitenK > 0 {
				w = randWhitening(rng, C, min(c.whitenK, C))
				W = w.Dense()
			}
			// Two windows through the same cpuPreprocessor: nothing leaks.
			for rep := range 2 {
				src := randWindow(rng, T, c.p.NChanFile, false)
				dst := nanWindow(C * T)
				pp.Run(dst, src, w)
				want := refPipeline(src, c.p, W, 6)
				if d := maxRelDiff32(dst, want); d > 1e-5 {
					t.Errorf("window %d: Run differs from the reference by %g of the peak", rep, d)
				}
			}
		})
	}
}

// TestReferenceStages checks steps 1–4 (selection, sign, mean removal,
// CAR) alone, where the output is still in counts, to float32 rounding.
func TestReferenceStages(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(23, 24))
	for _, C := range []int{1, 2, 7, 8, 33} {
		for _, car := range []bool{false, true} {
			for _, inv := range []bool{false, true} {
				cf := C + 2
				m := rng.Perm(cf)[:C]
				p := small(m, cf, 37, 5) // T = 47: not a multiple of blockT
				p.DoCAR, p.InvertSign = car, inv
				pp, err := newCPU(p)
				if err != nil {
					t.Fatal(err)
				}
				src := randWindow(rng, p.T(), cf, false)
				out := nanWindow(C * p.T())
				pp.reference(out, src)
				want := refPipeline(src, p, nil, 4)
				for i, v := range out {
					if d := math.Abs(float64(v) - want[i]); !(d <= 1e-6*math.Max(1, math.Abs(want[i]))+2e-4) {
						t.Fatalf("C %d car %v inv %v: element %d = %v, want %v", C, car, inv, i, v, want[i])
					}
				}
				// Mean removal: every channel sums to ~0 without CAR.
				if !car {
					for c := range C {
						var s float64
						for _, v := range out[c*p.T() : (c+1)*p.T()] {
							s += float64(v)
						}
						if math.Abs(s) > 1e-2 {
							t.Errorf("C %d inv %v: channel %d sums to %g after mean removal", C, inv, c, s)
						}
					}
				}
				// CAR: each column's lower median is 0.
				if car {
					col := make([]float32, C)
					for tt := range p.T() {
						for c := range C {
							col[c] = out[c*p.T()+tt]
						}
						if med := LowerMedian(col); med != 0 {
							t.Fatalf("C %d inv %v: column %d has lower median %v after CAR", C, inv, tt, med)
						}
					}
				}
			}
		}
	}
}

// TestRunNP1File runs a 385-channel file (SpikeGLX sync in row 384) with
// the 384- and 383-channel NP1 maps: the sync channel is dropped and
// leaves no trace.
func TestRunNP1File(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(25, 26))
	np1383 := append(iota(191), iota(384)[192:]...)
	for _, m := range [][]int{iota(384), np1383} {
		p := small(m, 385, 120, 61)
		pp, err := newCPU(p)
		if err != nil {
			t.Fatal(err)
		}
		src := randWindow(rng, p.T(), 385, true)
		dst := nanWindow(len(m) * p.T())
		pp.Run(dst, src, nil)
		want := refPipeline(src, p, nil, 6)
		if d := maxRelDiff32(dst, want); d > 1e-5 {
			t.Errorf("%d channels: Run differs from the reference by %g of the peak", len(m), d)
		}
		// Changing the sync channel changes nothing.
		for t := range p.T() {
			src[t*385+384] = int16(rng.IntN(65536) - 32768)
		}
		dst2 := nanWindow(len(m) * p.T())
		pp.Run(dst2, src, nil)
		if !slices.Equal(dst, dst2) {
			t.Errorf("%d channels: output depends on the sync channel", len(m))
		}
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	ok := small([]int{0, 1}, 3, 100, 10)
	for _, tc := range []struct {
		name string
		edit func(*Params)
	}{
		{"empty map", func(p *Params) { p.ChanMap = nil }},
		{"map out of range", func(p *Params) { p.ChanMap = []int{0, 3} }},
		{"negative map", func(p *Params) { p.ChanMap = []int{-1} }},
		{"no file channels", func(p *Params) { p.NChanFile = 0 }},
		{"batch_size 0", func(p *Params) { p.BatchSize = 0 }},
		{"negative nt", func(p *Params) { p.NT = -1 }},
		{"cutoff above Nyquist", func(p *Params) { p.HighpassCutoff = 20000 }},
		{"cutoff 0", func(p *Params) { p.HighpassCutoff = 0 }},
		{"order 0", func(p *Params) { p.HighpassOrder = 0 }},
		{"fs 0", func(p *Params) { p.Fs = 0 }},
	} {
		p := ok
		p.ChanMap = slices.Clone(ok.ChanMap)
		tc.edit(&p)
		if _, err := newCPU(p); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else if !strings.HasPrefix(err.Error(), "preprocess: ") {
			t.Errorf("%s: error %q lacks the package prefix", tc.name, err)
		}
	}
	if _, err := newCPU(ok); err != nil {
		t.Fatal(err)
	}
	// New copies the map.
	m := []int{0, 1}
	pp, _ := newCPU(small(m, 3, 100, 10))
	m[0] = 2
	if pp.Params().ChanMap[0] != 0 {
		t.Error("New kept the caller's channel map")
	}
}

func TestRunPanics(t *testing.T) {
	t.Parallel()
	p := small([]int{0, 1}, 3, 100, 10)
	pp, err := newCPU(p)
	if err != nil {
		t.Fatal(err)
	}
	T := p.T()
	for name, f := range map[string]func(){
		"short src": func() { pp.Run(make([]float32, 2*T), make([]int16, 3*T-1), nil) },
		"long dst":  func() { pp.Run(make([]float32, 2*T+1), make([]int16, 3*T), nil) },
		"whitening shape": func() {
			pp.Run(make([]float32, 2*T), make([]int16, 3*T), randWhitening(rand.New(rand.NewPCG(1, 1)), 3, 1))
		},
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil {
					t.Errorf("%s: no panic", name)
				} else if s, ok := r.(string); !ok || !strings.HasPrefix(s, "preprocess: ") {
					t.Errorf("%s: panic %v lacks the package prefix", name, r)
				}
			}()
			f()
		}()
	}
}

// TestRunAllocations checks that windows after the first allocate
// nothing: without a whitening none at all, with one only what
// Whitening.Apply allocates by itself; for a contiguous and a permuted
// channel map, with CAR groups, and through the Preprocessor's window path.
func TestRunAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	perm := iota(16)
	perm[3], perm[9] = perm[9], perm[3]
	grouped := small(iota(16), 17, 3000, 61)
	grouped.Groups = make([]int, 16)
	for i := range grouped.Groups {
		grouped.Groups[i] = i / 5
	}
	w := randWhitening(rng, 16, 4)
	for name, p := range map[string]Params{
		"contiguous": small(iota(16), 17, 3000, 61),
		"permuted":   small(perm, 17, 3000, 61),
		"groups":     grouped,
	} {
		pp, err := newCPU(p)
		if err != nil {
			t.Fatal(err)
		}
		src := randWindow(rng, p.T(), 17, true)
		dst := make([]float32, 16*p.T())
		pp.Run(dst, src, nil)
		if a := testing.AllocsPerRun(5, func() { pp.Run(dst, src, nil) }); a != 0 {
			t.Errorf("%s: Run allocates %v times per window (%d workers)", name, a, pp.workers)
		}
		pp.Run(dst, src, w)
		if a := testing.AllocsPerRun(5, func() { pp.Run(dst, src, w) }); a != 0 {
			t.Errorf("%s: whitened Run allocates %v times per window", name, a)
		}
	}
	p := small(iota(16), 17, 3000, 61)
	dev, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	pp, err := New(dev, p)
	if err != nil {
		t.Fatal(err)
	}
	win, err := dev.NewWindow(pp.Channels(), pp.Len(), pp.FileChannels())
	if err != nil {
		t.Fatal(err)
	}
	defer win.Close()
	src := randWindow(rng, p.T(), 17, true)
	step := func() {
		if err := win.Load(src); err != nil {
			t.Fatal(err)
		}
		if err := pp.Window(win); err != nil {
			t.Fatal(err)
		}
	}
	step()
	if a := testing.AllocsPerRun(5, step); a != 0 {
		t.Errorf("Window allocates %v times per window", a)
	}
}
