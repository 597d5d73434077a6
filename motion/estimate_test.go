package motion

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"dspk/compute"
)

// testProbe returns C sites in NP1's pattern (two per row, rows 20 µm
// apart) starting at depth 20 µm.
func testProbe(C int) (x, y []float64) {
	xs := [4]float64{43, 11, 59, 27}
	for i := range C {
		x = append(x, xs[i%4])
		y = append(y, float64(20*(i/2+1)))
	}
	return x, y
}

// estimateOn runs an Estimator on dev over win.
func estimateOn(t testing.TB, dev *compute.Device, yc []float64, win []refSpikes, p Params) *Estimate {
	t.Helper()
	e, err := NewEstimator(dev, yc, len(win), p)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for w, s := range win {
		// Split each window over two calls to check that Add accumulates.
		h := len(s.y) / 2
		if err := e.Add(w, s.y[:h], s.amp[:h]); err != nil {
			t.Fatal(err)
		}
		if err := e.Add(w, s.y[h:], s.amp[h:]); err != nil {
			t.Fatal(err)
		}
	}
	est, err := e.Estimate()
	if err != nil {
		t.Fatal(err)
	}
	return est
}

func checkAgainstRef(t *testing.T, est *Estimate, d [][]float64, yblk []float64, tol float64) {
	t.Helper()
	if est.Windows != len(d) || est.Blocks != len(yblk) {
		t.Fatalf("sizes %d×%d, reference %d×%d", est.Windows, est.Blocks, len(d), len(yblk))
	}
	for j := range yblk {
		if math.Abs(est.Yblk[j]-yblk[j]) > 1e-9 {
			t.Errorf("yblk[%d] = %v, reference %v", j, est.Yblk[j], yblk[j])
		}
	}
	bad := 0
	for w := range d {
		for j := range d[w] {
			if g := est.Dshift[w*est.Blocks+j]; math.Abs(g-d[w][j]) > tol {
				if bad++; bad <= 5 {
					t.Errorf("dshift[%d, %d] = %v µm, reference %v", w, j, g, d[w][j])
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d shifts differ", bad, len(d)*len(yblk))
	}
}

type estCase struct {
	nb, C, nblocks, n int
	pitch, dy         float64 // row pitch of the sites (0: 20 µm) and binning_depth (0: 5 µm)
}

// sites returns the case's site depths: two sites per row, rows pitch
// apart.
func (tc estCase) sites() []float64 {
	_, yc := testProbe(tc.C)
	if tc.pitch != 0 {
		for i := range yc {
			yc[i] = tc.pitch * float64(i/2+1)
		}
	}
	return yc
}

func (tc estCase) params() Params {
	p := DefaultParams()
	p.NBlocks = tc.nblocks
	if tc.dy != 0 {
		p.BinningDepth = tc.dy
	}
	return p
}

// estCases are odd sizes: Nb = 1, 2, 7, 13, 301; Y = 46, 62, 94, 66, 190
// with 20-µm rows (always even) and odd Y = 65, 89, 33 with 15-µm rows or
// 7-µm bins; nblocks 1, 3, 5.
var estCases = []estCase{
	{1, 24, 1, 60, 0, 0}, {2, 31, 1, 80, 0, 0}, {7, 47, 3, 200, 0, 0}, {7, 33, 1, 150, 0, 0}, {13, 96, 5, 400, 0, 0}, {301, 23, 1, 40, 0, 0},
	{5, 44, 1, 120, 15, 0}, {9, 60, 3, 200, 15, 0}, {4, 23, 1, 90, 20, 7},
}

// TestEstimateMatchesReference compares the CPU estimate with the plain
// reference on fresh random windows of odd sizes.
func TestEstimateMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	for _, tc := range estCases {
		if testing.Short() && tc.nb > 100 {
			continue
		}
		yc, p := tc.sites(), tc.params()
		win := randomWindows(rng, tc.nb, tc.n, yc[0]-3, yc[len(yc)-1]+3)
		est := estimateOn(t, nil, yc, win, p)
		d, yblk := refEstimate(yc, win, p)
		checkAgainstRef(t, est, d, yblk, 1e-9)
		g, _ := newGeometry(yc, p)
		t.Logf("Nb %d, Y %d, nblocks %d: %d shifts agree", tc.nb, g.rows, tc.nblocks, len(est.Dshift))
	}
}

// driftWindows simulates nb windows of units at fixed depths displaced by
// drift(t, depth) µm, n spikes per window.
func driftWindows(rng *rand.Rand, nb, n int, lo, hi float64, drift func(t int, y float64) float64) []refSpikes {
	units := make([]float64, 150)
	amps := make([]float64, len(units))
	for i := range units {
		units[i] = lo + 40 + rng.Float64()*(hi-lo-80)
		amps[i] = 10 * math.Exp(rng.Float64()*math.Log(8))
	}
	out := make([]refSpikes, nb)
	for t := range nb {
		for range n {
			u := rng.IntN(len(units))
			yy := units[u] + drift(t, units[u]) + 2*rng.NormFloat64()
			out[t].y = append(out[t].y, float32(yy))
			out[t].amp = append(out[t].amp, float32(amps[u]*(1+0.05*rng.NormFloat64())))
		}
	}
	return out
}

// TestEstimateRecoversDrift checks that a known drift of a synthetic
// fingerprint is recovered: rigid (linear plus a sinusoid) and non-rigid
// (speed growing with depth) motion, RMS error after removing the mean
// offset.
func TestEstimateRecoversDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	_, yc := testProbe(384)
	lo, hi := yc[0], yc[len(yc)-1]
	const nb = 60
	for _, tc := range []struct {
		name    string
		nblocks int
		drift   func(t int, y float64) float64
		tol     float64
	}{
		{"linear+sine", 1, func(t int, _ float64) float64 {
			return -30 + 60*float64(t)/nb + 4*math.Sin(float64(t)/3)
		}, 2},
		{"nonrigid", 5, func(t int, y float64) float64 {
			return (y - lo) / (hi - lo) * 40 * float64(t) / nb
		}, 5},
	} {
		win := driftWindows(rng, nb, 1500, lo, hi, tc.drift)
		for _, reg := range []Registration{RegisterKilosort, RegisterPairwise} {
			p := DefaultParams()
			p.NBlocks = tc.nblocks
			p.Registration = reg
			p.Pairwise = DefaultPairwiseParams()
			est := estimateOn(t, nil, yc, win, p)
			for j := range est.Blocks {
				// The estimate undoes the drift: dshift ≈ −drift + constant.
				var errs []float64
				var m float64
				for w := range nb {
					v := est.Dshift[w*est.Blocks+j] + tc.drift(w, est.Yblk[j])
					errs = append(errs, v)
					m += v / nb
				}
				var rms float64
				for _, v := range errs {
					rms += (v - m) * (v - m) / nb
				}
				rms = math.Sqrt(rms)
				t.Logf("%s, %v registration, block %d (y %.0f µm): RMS error %.2f µm", tc.name, reg, j, est.Yblk[j], rms)
				// The outer blocks' drift is the block's mean: compare with a
				// looser bound there.
				if rms > tc.tol {
					t.Errorf("%s, %v registration, block %d: RMS error %.2f µm > %v", tc.name, reg, j, rms, tc.tol)
				}
			}
		}
	}
}

// TestEstimateEmptyWindow checks the empty-window rule: an empty window
// takes its neighbours' interpolated shifts, and an empty reference
// window moves the reference to the nearest non-empty one.
func TestEstimateEmptyWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	_, yc := testProbe(192)
	lo, hi := yc[0], yc[len(yc)-1]
	const nb = 9
	win := driftWindows(rng, nb, 800, lo, hi, func(t int, _ float64) float64 { return 3 * float64(t) })
	win[4] = refSpikes{} // the reference min(300, 9/2) = 4
	win[8] = refSpikes{}
	est := estimateOn(t, nil, yc, win, DefaultParams())
	d := est.Dshift
	if want := (d[3] + d[5]) / 2; d[4] != want {
		t.Errorf("empty window 4: %v µm, want %v (neighbours %v, %v)", d[4], want, d[3], d[5])
	}
	if d[8] != d[7] {
		t.Errorf("empty last window: %v µm, want %v", d[8], d[7])
	}
	for w := range nb {
		if math.Abs(d[w]) > 40 {
			t.Errorf("window %d: %v µm", w, d[w])
		}
	}
	if est.Spikes[4] != 0 || est.Spikes[0] != 800 {
		t.Errorf("spikes %v", est.Spikes)
	}
}

func TestEstimatorErrors(t *testing.T) {
	_, yc := testProbe(384)
	p := DefaultParams()
	for _, tc := range []struct {
		name    string
		windows int
		mod     func(*Params)
		want    string
	}{
		{"no windows", 0, nil, "shorter than one batch"},
		{"nblocks", 10, func(p *Params) { p.NBlocks = 70 }, "nblocks 70 is larger than the probe allows"},
		{"nblocks 0", 10, func(p *Params) { p.NBlocks = 0 }, "nblocks ≥ 1"},
		{"binning", 10, func(p *Params) { p.BinningDepth = 0 }, "binning_depth"},
	} {
		q := p
		if tc.mod != nil {
			tc.mod(&q)
		}
		_, err := NewEstimator(nil, yc, tc.windows, q)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewEstimator(nil, []float64{20, 40, 60}, 3, p); err == nil || !strings.Contains(err.Error(), "spans 10 depth bins of 5 µm; estimating motion needs at least 11") {
		t.Errorf("a probe of 40 µm: %v", err)
	}
	// The largest nblocks allowed works: 766 rows / 69 = 11 rows.
	q := p
	q.NBlocks = 69
	if _, err := NewEstimator(nil, yc, 3, q); err != nil {
		t.Errorf("nblocks 69: %v", err)
	}
	e, err := NewEstimator(nil, yc, 10, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Add(10, nil, nil); err == nil {
		t.Error("Add of window 10 of 10: no error")
	}
	if err := e.Add(0, []float32{100}, nil); err == nil {
		t.Error("Add of mismatched lengths: no error")
	}
	if err := e.Add(1, []float32{100, float32(math.NaN())}, []float32{10, 10}); err == nil || !strings.Contains(err.Error(), "window 1, spike 1") {
		t.Errorf("Add of NaN: %v", err)
	}
	y := make([]float32, 199)
	a := make([]float32, 199)
	for i := range y {
		y[i], a[i] = 500, 20
	}
	if err := e.Add(3, y, a); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Estimate(); err == nil || !strings.Contains(err.Error(), "199 detections in 10 windows; it needs at least 20 per window on average (200)") {
		t.Errorf("too few spikes: %v", err)
	}
	if err := e.Add(3, y[:1], a[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Estimate(); err != nil {
		t.Errorf("200 spikes: %v", err)
	}
}

// TestGaussian3 compares gaussian3 with the reference on odd shapes,
// including axes of length 1 and 2 (shorter than the radius).
func TestGaussian3(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 2))
	for _, n := range [][3]int{{11, 1, 1}, {11, 2, 3}, {5, 7, 9}, {1, 4, 2}} {
		for _, sig := range [][3]float64{{0.5, 0.5, 0.5}, {1.3, 0, 2.2}} {
			x := make([]float64, n[0]*n[1]*n[2])
			e := make([][][]float64, n[0])
			for a := range n[0] {
				e[a] = make([][]float64, n[1])
				for b := range n[1] {
					e[a][b] = make([]float64, n[2])
					for c := range n[2] {
						v := rng.NormFloat64()
						e[a][b][c], x[(a*n[1]+b)*n[2]+c] = v, v
					}
				}
			}
			got := gaussian3(x, n, sig)
			want := refGauss(e, sig)
			for a := range n[0] {
				for b := range n[1] {
					for c := range n[2] {
						if g, w := got[(a*n[1]+b)*n[2]+c], want[a][b][c]; math.Abs(g-w) > 1e-12 {
							t.Fatalf("shape %v σ %v at %d,%d,%d: %v, want %v", n, sig, a, b, c, g, w)
						}
					}
				}
			}
		}
	}
}

// TestBinEdges checks the float32 bin edges the CUDA back end searches
// against the CPU's row and column of every value near them.
func TestBinEdges(t *testing.T) {
	_, yc := testProbe(100)
	p := DefaultParams()
	g, err := newGeometry(yc, p)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k < g.rows; k++ {
		e := smallestFloat32(func(v float32) bool { return g.row(v) >= k })
		below := math.Nextafter32(e, float32(math.Inf(-1)))
		if g.row(e) != k || g.row(below) != k-1 {
			t.Fatalf("row edge %d = %v: rows %d, %d below", k, e, g.row(e), g.row(below))
		}
	}
	for k := 1; k < AmpBins; k++ {
		e := smallestFloat32(func(v float32) bool { return ampCol(v, p.ThUniversal) >= k })
		below := math.Nextafter32(e, float32(math.Inf(-1)))
		if ampCol(e, 9) != k || ampCol(below, 9) != k-1 {
			t.Fatalf("amplitude edge %d = %v: columns %d, %d below", k, e, ampCol(e, 9), ampCol(below, 9))
		}
	}
	// Kilosort4's examples (kilosort4-sort.md §3.1).
	for _, c := range []struct {
		a   float32
		col int
	}{{20, 6}, {50, 14}, {99, 19}, {1000, 19}, {9, 0}, {1, 0}} {
		if got := ampCol(c.a, 9); got != c.col {
			t.Errorf("amplitude %v: column %d, want %d", c.a, got, c.col)
		}
	}
	if g0, _ := newGeometry(func() []float64 { _, y := testProbe(384); return y }(), p); g0.rows != 766 || g0.y0 != 19 {
		t.Errorf("NP1: Y = %d, y0 = %v; want 766, 19", g0.rows, g0.y0)
	}
}
