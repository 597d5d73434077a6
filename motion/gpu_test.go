package motion

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
)

// GPU tests run the CUDA back ends on the first GPU and skip, saying so,
// where there is none. They compare with the CPU back end and the float64
// reference, on fresh random inputs of odd sizes (the seed logged, fixed
// by DSPK_TEST_SEED), with NaN-poisoned outputs.

// TestGPUEstimateMatchesCPU compares the CUDA estimate (host Add) with the
// CPU's: dshift identical bit for bit (both back ends sum every score in
// the order of scoreLanes), over several rounds of fresh random windows of
// odd sizes, each estimated twice on the device (run to run) by two
// estimators; and within 1e-9 µm of the float64 reference.
func TestGPUEstimateMatchesCPU(t *testing.T) {
	dev := gputest.Device(t)
	rng := rand.New(rand.NewPCG(testSeed(t), 11))
	for round := range 4 {
		for _, tc := range estCases {
			yc, p := tc.sites(), tc.params()
			win := randomWindows(rng, tc.nb, tc.n, yc[0]-3, yc[len(yc)-1]+3)
			cpu := estimateOn(t, nil, yc, win, p)
			for rep := range 2 {
				gpu := estimateOn(t, dev, yc, win, p)
				checkIdentical(t, fmt.Sprintf("round %d, case %+v, run %d", round, tc, rep), gpu, cpu)
			}
			if round == 0 {
				ref, yblk := refEstimate(yc, win, p)
				checkAgainstRef(t, cpu, ref, yblk, 1e-9)
			}
		}
	}
}

// checkIdentical fails unless got's dshift and yblk are want's bit for
// bit.
func checkIdentical(t *testing.T, what string, got, want *Estimate) {
	t.Helper()
	if got.Windows != want.Windows || got.Blocks != want.Blocks {
		t.Fatalf("%s: sizes %d×%d, CPU %d×%d", what, got.Windows, got.Blocks, want.Windows, want.Blocks)
	}
	bad := 0
	for i := range want.Dshift {
		if math.Float64bits(got.Dshift[i]) != math.Float64bits(want.Dshift[i]) {
			if bad++; bad <= 5 {
				t.Errorf("%s: dshift[%d, %d] = %v µm, CPU %v", what, i/want.Blocks, i%want.Blocks, got.Dshift[i], want.Dshift[i])
			}
		}
	}
	for j := range want.Yblk {
		if math.Float64bits(got.Yblk[j]) != math.Float64bits(want.Yblk[j]) {
			t.Errorf("%s: yblk[%d] = %v, CPU %v", what, j, got.Yblk[j], want.Yblk[j])
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d shifts differ", what, bad, len(want.Dshift))
	}
}

// TestGPUScoresBitIdentical runs the scores kernel directly against the
// CPU scorer on the odd sizes of scoreCases (random and tie-prone inputs,
// cumulative shifts beyond ±rows) three times each, into a NaN-poisoned
// device output: every score the same bits.
func TestGPUScoresBitIdentical(t *testing.T) {
	dev := gputest.Device(t)
	rng := rand.New(rand.NewPCG(testSeed(t), 15))
	_, yc := testProbe(384)
	p := DefaultParams()
	p.NBlocks = 5 // 9 blocks: room for every case's outputs
	g, err := newGeometry(yc, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range scoreCases {
		if tc.rows > g.rows {
			t.Fatalf("case %+v: %d rows, the device buffers hold %d", tc, tc.rows, g.rows)
		}
		ce, err := newCUDAEstimator(dev, g, tc.nb, p)
		if err != nil {
			t.Fatal(err)
		}
		ce.rows = tc.rows // R and S buffers are large enough; G is sized by setG
		G, R, S := randomScoreInput(rng, tc)
		n := len(tc.starts) * (2*tc.smax + 1) * tc.nb
		want := make([]float64, n)
		cpuScorer{G: G, nb: tc.nb, rows: tc.rows}.scores(want, tc.starts, tc.l, tc.smax, S, R)
		if err := ce.setG(G); err != nil {
			t.Fatal(err)
		}
		for rep := range 3 {
			err := dev.Do(func(c *compute.Ctx) error { return c.Memset32(ce.out.Ptr, 0xffffffff, ce.outBytes/4) })
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float64, n)
			if err := ce.scores(got, tc.starts, tc.l, tc.smax, S, R); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("case %+v run %d: score %d = %v, CPU %v (bits differ)", tc, rep, i, got[i], want[i])
				}
			}
		}
		if err := ce.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGPUEstimateNP1 compares the back ends on NP1's 766 depth bins with a
// drifting fingerprint, rigid and nblocks 5, 301 windows: dshift
// identical bit for bit.
func TestGPUEstimateNP1(t *testing.T) {
	dev := gputest.Device(t)
	rng := rand.New(rand.NewPCG(testSeed(t), 12))
	_, yc := testProbe(384)
	lo, hi := yc[0], yc[len(yc)-1]
	win := driftWindows(rng, 301, 500, lo, hi, func(t int, y float64) float64 {
		return 20*math.Sin(float64(t)/40) + (y-lo)/(hi-lo)*float64(t)/20
	})
	for _, nblocks := range []int{1, 5} {
		p := DefaultParams()
		p.NBlocks = nblocks
		cpu := estimateOn(t, nil, yc, win, p)
		gpu := estimateOn(t, dev, yc, win, p)
		checkIdentical(t, fmt.Sprintf("NP1, nblocks %d", nblocks), gpu, cpu)
	}
}

// TestGPUAddDevice bins spikes from device arrays (with a capacity below
// the count, a count below the capacity, and host Adds mixed in) and
// compares the estimate with the CPU's of the same spikes (dshift bit for
// bit); spikes with a NaN are reported by Estimate.
func TestGPUAddDevice(t *testing.T) {
	dev := gputest.Device(t)
	rng := rand.New(rand.NewPCG(testSeed(t), 13))
	_, yc := testProbe(97)
	p := DefaultParams()
	p.NBlocks = 3
	win := randomWindows(rng, 17, 300, yc[0]-30, yc[len(yc)-1]+30)
	// Amplitudes on the column edges and below the threshold.
	g, _ := newGeometry(yc, p)
	for k := 1; k < AmpBins; k++ {
		e := smallestFloat32(func(v float32) bool { return ampCol(v, 9) >= k })
		win[0].amp[k] = e
		win[1].amp[k] = math.Nextafter32(e, 0)
	}
	for k := 1; k < g.rows; k += 7 {
		e := smallestFloat32(func(v float32) bool { return g.row(v) >= k })
		win[2].y = append(win[2].y, e, math.Nextafter32(e, float32(math.Inf(-1))))
		win[2].amp = append(win[2].amp, 30, 3)
	}
	cpu := estimateOn(t, nil, yc, win, p)
	e, err := NewEstimator(dev, yc, len(win), p)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	maxN := 0
	for _, s := range win {
		maxN = max(maxN, len(s.y))
	}
	err = dev.Do(func(c *compute.Ctx) error {
		ym, err := c.Alloc(maxN * 4)
		if err != nil {
			return err
		}
		defer c.Free(ym)
		am, err := c.Alloc(maxN * 4)
		if err != nil {
			return err
		}
		defer c.Free(am)
		cm, err := c.Alloc(4)
		if err != nil {
			return err
		}
		defer c.Free(cm)
		for w, s := range win {
			n := len(s.y)
			h := n / 3 // the first third by host Add (outside Do is not needed: Add is host only)
			if err := e.Add(w, s.y[:h], s.amp[:h]); err != nil {
				return err
			}
			if err := compute.Upload(c, ym.Ptr, s.y[h:]); err != nil {
				return err
			}
			if err := compute.Upload(c, am.Ptr, s.amp[h:]); err != nil {
				return err
			}
			cnt, capN := int32(n-h), n-h
			switch w % 3 {
			case 1: // count above the capacity: the rest comes by a second call
				cnt = int32(n - h + 1000)
				capN = (n - h) / 2
			case 2: // capacity above the count
				capN = maxN
			}
			if err := compute.Upload(c, cm.Ptr, []int32{cnt}); err != nil {
				return err
			}
			if err := e.AddDevice(c, w, ym.Ptr, am.Ptr, cm.Ptr, capN); err != nil {
				return err
			}
			if w%3 == 1 {
				rest := s.y[h+capN:]
				if err := compute.Upload(c, ym.Ptr, rest); err != nil {
					return err
				}
				if err := compute.Upload(c, am.Ptr, s.amp[h+capN:]); err != nil {
					return err
				}
				if err := compute.Upload(c, cm.Ptr, []int32{int32(len(rest))}); err != nil {
					return err
				}
				if err := e.AddDevice(c, w, ym.Ptr, am.Ptr, cm.Ptr, maxN); err != nil {
					return err
				}
			}
		}
		return c.Sync()
	})
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := e.Estimate()
	if err != nil {
		t.Fatal(err)
	}
	for w := range cpu.Spikes {
		if cpu.Spikes[w] != gpu.Spikes[w] {
			t.Errorf("window %d: %d spikes, CPU %d", w, gpu.Spikes[w], cpu.Spikes[w])
		}
	}
	checkIdentical(t, "AddDevice", gpu, cpu)
	// The histograms themselves are equal: compare the counts.
	ec, _ := NewEstimator(nil, yc, len(win), p)
	for w, s := range win {
		ec.Add(w, s.y, s.amp)
	}
	for i := range ec.counts {
		if ec.counts[i] != e.counts[i] {
			t.Fatalf("count %d: GPU %d, CPU %d", i, e.counts[i], ec.counts[i])
		}
	}
	// A NaN on the device is an error at Estimate.
	err = dev.Do(func(c *compute.Ctx) error {
		m, err := c.Alloc(12)
		if err != nil {
			return err
		}
		defer c.Free(m)
		if err := compute.Upload(c, m.Ptr, []float32{float32(math.NaN()), 10, 0}); err != nil {
			return err
		}
		if err := compute.Upload(c, m.Ptr.Add(8), []int32{1}); err != nil {
			return err
		}
		if err := e.AddDevice(c, 0, m.Ptr, m.Ptr.Add(4), m.Ptr.Add(8), 1); err != nil {
			return err
		}
		return c.Sync()
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Estimate(); err == nil {
		t.Error("a NaN depth on the device: no error")
	}
}

// TestGPUCorrectMatchesCPU corrects NaN-poisoned device windows (Window
// and ApplyDevice) and compares with the dense float64 product of the
// CPU's matrix: every sample within (C·6e-8 + 1e-6)·Σ_j|M_cj|·max|x| (the
// float32 dot-product bound), for odd
// channel counts, rigid and block shifts, and windows of equal shifts.
func TestGPUCorrectMatchesCPU(t *testing.T) {
	dev := gputest.Device(t)
	rng := rand.New(rand.NewPCG(testSeed(t), 14))
	for _, tc := range []struct{ C, B, T int }{{1, 1, 7}, {9, 1, 1}, {63, 3, 1001}, {384, 1, 3001}, {384, 9, 2048}} {
		x, y := testProbe(tc.C)
		est := randomEstimate(rng, 4, tc.B, y)
		copy(est.Dshift[2*tc.B:3*tc.B], est.Dshift[1*tc.B:2*tc.B]) // windows 1 and 2 alike
		kc, err := NewCorrector(nil, x, y, DefaultParams(), est)
		if err != nil {
			t.Fatal(err)
		}
		kg, err := NewCorrector(dev, x, y, DefaultParams(), est)
		if err != nil {
			t.Fatal(err)
		}
		win, err := dev.NewWindow(tc.C, tc.T, tc.C)
		if err != nil {
			t.Fatal(err)
		}
		src := make([]float32, tc.C*tc.T)
		for w := range 4 {
			for i := range src {
				src[i] = float32(rng.NormFloat64())
			}
			err := dev.Do(func(c *compute.Ctx) error { return compute.Upload(c, win.DataMem().Ptr, src) })
			if err != nil {
				t.Fatal(err)
			}
			win.MarkWritten()
			if w%2 == 0 {
				if err := kg.Window(win, w); err != nil {
					t.Fatal(err)
				}
			} else {
				// ApplyDevice into a NaN-poisoned buffer, then copied back.
				err := dev.Do(func(c *compute.Ctx) error {
					m, err := c.Alloc(tc.C * tc.T * 4)
					if err != nil {
						return err
					}
					defer c.Free(m)
					if err := c.Memset32(m.Ptr, 0x7fc00000, tc.C*tc.T); err != nil {
						return err
					}
					if err := kg.ApplyDevice(c, m.Ptr, win.DataMem().Ptr, tc.T, w); err != nil {
						return err
					}
					if err := c.CopyDtoD(win.DataMem().Ptr, m.Ptr, tc.C*tc.T*4); err != nil {
						return err
					}
					return c.Sync()
				})
				if err != nil {
					t.Fatal(err)
				}
				win.MarkWritten()
			}
			got, err := win.Data()
			if err != nil {
				t.Fatal(err)
			}
			M := kc.Matrix(w)
			if gm := kg.Matrix(w); !equal32(gm, M) {
				t.Fatalf("C %d window %d: matrices differ between back ends", tc.C, w)
			}
			var mx float64
			for _, v := range src {
				mx = math.Max(mx, math.Abs(float64(v)))
			}
			for c := range tc.C {
				var l1 float64
				for j := range tc.C {
					l1 += math.Abs(float64(M[c*tc.C+j]))
				}
				for tt := range tc.T {
					var want float64
					for j := range tc.C {
						want += float64(M[c*tc.C+j]) * float64(src[j*tc.T+tt])
					}
					if d := math.Abs(float64(got[c*tc.T+tt]) - want); !(d <= (float64(tc.C)*6e-8+1e-6)*l1*mx) {
						t.Fatalf("C %d B %d window %d: [%d, %d] = %v, dense %v", tc.C, tc.B, w, c, tt, got[c*tc.T+tt], want)
					}
				}
			}
		}
		win.Close()
		kg.Close()
	}
}

func equal32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
