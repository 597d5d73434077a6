package detect

import (
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"dspk/probe"
)

func TestGridNP1(t *testing.T) {
	t.Parallel()
	prm := DefaultParams()
	full := probe.NP1()
	// Kilosort's default map drops site 191: the grid must not change.
	ks := probe.NP1()
	for _, s := range []*[]float64{&ks.X, &ks.Y} {
		*s = slices.Delete(*s, 191, 192)
	}
	ks.Shank = slices.Delete(ks.Shank, 191, 192)
	ks.ChanMap = slices.Delete(ks.ChanMap, 191, 192)
	for _, p := range []*probe.Probe{full, ks} {
		g, err := NewGrid(p, prm)
		if err != nil {
			t.Fatal(err)
		}
		if g.F() != 1532 || g.Candidates != 1532 {
			t.Fatalf("%d channels: F = %d of %d candidates, want 1532", p.Len(), g.F(), g.Candidates)
		}
		if g.Dmin != 20 {
			t.Errorf("dmin %g, want 20", g.Dmin)
		}
		if !slices.Equal(g.Xup, []float64{11, 27, 43, 59}) {
			t.Errorf("xup %v, want [11 27 43 59]", g.Xup)
		}
		if len(g.Yup) != 383 || g.Yup[0] != 20 || g.Yup[382] != 3840 {
			t.Errorf("yup has %d values %g…%g, want 383 values 20…3840", len(g.Yup), g.Yup[0], g.Yup[len(g.Yup)-1])
		}
		for iy, y := range g.Yup {
			if y != 20+10*float64(iy) {
				t.Fatalf("yup[%d] = %g", iy, y)
			}
		}
		// x-major flattening: centre f is (xup[f/383], yup[f%383]).
		for f := range g.F() {
			if g.X[f] != g.Xup[f/383] || g.Y[f] != g.Yup[f%383] || g.Index[f] != f {
				t.Fatalf("centre %d at (%g, %g) index %d", f, g.X[f], g.Y[f], g.Index[f])
			}
			if lim := 16.0; p.Len() == 384 && g.DS[f*g.NC] > lim*lim+1e-9 {
				t.Fatalf("centre %d: nearest site %g µm away, want ≤ %g", f, math.Sqrt(g.DS[f*g.NC]), lim)
			}
		}
		if g.NC != 10 || g.NC2 != 100 || g.S != 5 || len(g.Weights) != 1532*5*10 {
			t.Errorf("NC %d NC2 %d S %d weights %d", g.NC, g.NC2, g.S, len(g.Weights))
		}
		checkGridTables(t, g)
	}
}

// checkGridTables checks IC, DS, IC2 and Weights against brute force.
func checkGridTables(t *testing.T, g *Grid) {
	t.Helper()
	F, C := g.F(), g.C()
	for f := range F {
		// Channels by (distance, index).
		idx := make([]int, C)
		d2 := make([]float64, C)
		for c := range C {
			idx[c] = c
			dx, dy := g.ChanX[c]-g.X[f], g.ChanY[c]-g.Y[f]
			d2[c] = dx*dx + dy*dy
		}
		sort.SliceStable(idx, func(a, b int) bool { return d2[idx[a]] < d2[idx[b]] })
		for j := range g.NC {
			if int(g.IC[f*g.NC+j]) != idx[j] || g.DS[f*g.NC+j] != d2[idx[j]] {
				t.Fatalf("centre %d: channel %d is %d (d² %g), brute force %d (d² %g)",
					f, j, g.IC[f*g.NC+j], g.DS[f*g.NC+j], idx[j], d2[idx[j]])
			}
		}
		// Centres by (distance, index), itself first.
		cidx := make([]int, F)
		cd := make([]float64, F)
		for h := range F {
			cidx[h] = h
			dx, dy := g.X[h]-g.X[f], g.Y[h]-g.Y[f]
			cd[h] = dx*dx + dy*dy
		}
		sort.SliceStable(cidx, func(a, b int) bool { return cd[cidx[a]] < cd[cidx[b]] })
		if int(g.IC2[f*g.NC2]) != f {
			t.Fatalf("centre %d: nearest centre %d, want itself", f, g.IC2[f*g.NC2])
		}
		for j := range g.NC2 {
			if int(g.IC2[f*g.NC2+j]) != cidx[j] {
				t.Fatalf("centre %d: neighbour %d is %d, brute force %d", f, j, g.IC2[f*g.NC2+j], cidx[j])
			}
		}
		// Weights: the formula, unit norm.
		for s, sig := range g.Sigma {
			var norm, ss float64
			for j := range g.NC {
				norm += math.Exp(-2 * g.DS[f*g.NC+j] / (sig * sig))
			}
			norm = math.Sqrt(norm)
			for j := range g.NC {
				w := float64(g.Weights[(f*g.S+s)*g.NC+j])
				want := math.Exp(-g.DS[f*g.NC+j]/(sig*sig)) / norm
				if math.Abs(w-want) > 1e-7 {
					t.Fatalf("centre %d size %d channel %d: weight %g, want %g", f, s, j, w, want)
				}
				ss += w * w
			}
			if math.Abs(ss-1) > 1e-6 {
				t.Fatalf("centre %d size %d: Σw² = %.9f", f, s, ss)
			}
		}
	}
}

func TestGridSmall(t *testing.T) {
	t.Parallel()
	prm := DefaultParams()
	cases := []struct {
		name          string
		p             *probe.Probe
		dmin          float64
		nx, ny, f, nc int
	}{
		{"2col64", twoColumnProbe(64), 20, 3, 63, 189, 10},
		{"1site", twoColumnProbe(1), 1, 1, 1, 1, 1},
		{"7sites", twoColumnProbe(7), 20, 3, 7, 21, 7},
		// x span 40 µm: 40/16 = 2.5 rounds half to even → 3 x values.
		{"span40", func() *probe.Probe {
			p := twoColumnProbe(8)
			for i := range p.X {
				p.X[i] = float64(40 * (i % 2))
			}
			return p
		}(), 20, 3, 7, 21, 8},
		// Depth steps 10, 10, 30: median of [10 10 30]... with 4 rows of
		// two sites: unique y 0, 10, 20, 50 → diffs 10, 10, 30 → 10.
		{"median", func() *probe.Probe {
			p := twoColumnProbe(8)
			ys := []float64{0, 10, 20, 50}
			for i := range p.Y {
				p.Y[i] = ys[i/2]
			}
			return p
		}(), 10, 3, 11, 33, 8},
		// Even number of steps: unique y 0, 10, 40 → diffs 10, 30 → 20.
		{"median_even", func() *probe.Probe {
			p := twoColumnProbe(6)
			ys := []float64{0, 10, 40}
			for i := range p.Y {
				p.Y[i] = ys[i/2]
			}
			return p
		}(), 20, 3, 5, -1, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := NewGrid(c.p, prm)
			if err != nil {
				t.Fatal(err)
			}
			if g.Dmin != c.dmin || len(g.Xup) != c.nx || len(g.Yup) != c.ny || (c.f >= 0 && g.F() != c.f) || g.NC != c.nc {
				t.Errorf("dmin %g, %d x, %d y, F %d, NC %d; want %g %d %d %d %d",
					g.Dmin, len(g.Xup), len(g.Yup), g.F(), g.NC, c.dmin, c.nx, c.ny, c.f, c.nc)
			}
			if g.NC2 != min(100, g.F()) {
				t.Errorf("NC2 %d for %d centres", g.NC2, g.F())
			}
			checkGridTables(t, g)
		})
	}
}

func TestGridMultiShank(t *testing.T) {
	t.Parallel()
	// Two shanks 250 µm apart, the second 500 µm deeper: the cross
	// combinations (x of one shank, y of the other) are dropped.
	p := twoColumnProbe(32)
	for i := 16; i < 32; i++ {
		p.X[i] += 250
		p.Y[i] = p.Y[i-16] + 500
		p.Shank[i] = 1
	}
	prm := DefaultParams()
	g, err := NewGrid(p, prm)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Xup) != 6 || len(g.Yup) != 2*15 {
		t.Fatalf("%d x and %d y values, want 6 and 30", len(g.Xup), len(g.Yup))
	}
	if g.F() != 2*3*15 {
		t.Errorf("F = %d, want 90 (45 per shank)", g.F())
	}
	for f := range g.F() {
		if (g.X[f] < 100) != (g.Y[f] < 400) {
			t.Errorf("centre %d at (%g, %g) mixes the shanks", f, g.X[f], g.Y[f])
		}
	}
	checkGridTables(t, g)
	// With kcoords dropped (one shank) the grid spans both: the gap's
	// centres are filtered by distance.
	for i := range p.Shank {
		p.Shank[i] = 0
	}
	g1, err := NewGrid(p, prm)
	if err != nil {
		t.Fatal(err)
	}
	if g1.Candidates <= g.Candidates {
		t.Errorf("single-shank grid has %d candidates, two-shank %d", g1.Candidates, g.Candidates)
	}
}

func TestGridErrors(t *testing.T) {
	t.Parallel()
	prm := DefaultParams()
	bad := twoColumnProbe(4)
	bad.X = bad.X[:3]
	if _, err := NewGrid(bad, prm); err == nil {
		t.Error("no error for an invalid probe")
	}
	huge := twoColumnProbe(8)
	huge.Y[7] = 1e9
	// probe.Validate refuses it first (coordinates beyond 10 cm); the
	// grid's own bound on template centres backs it up.
	if _, err := NewGrid(huge, prm); err == nil || !strings.Contains(err.Error(), "template centres") && !strings.Contains(err.Error(), "from the origin") {
		t.Errorf("error %v for a 1e9-µm probe", err)
	}
	p := prm
	p.NT = 60
	if _, err := NewGrid(twoColumnProbe(4), p); err == nil {
		t.Error("no error for an even nt")
	}
}

func TestLinspace(t *testing.T) {
	t.Parallel()
	if got := linspace(11, 59, 4); !slices.Equal(got, []float64{11, 27, 43, 59}) {
		t.Errorf("linspace(11, 59, 4) = %v", got)
	}
	if got := linspace(3, 3, 1); !slices.Equal(got, []float64{3}) {
		t.Errorf("linspace(3, 3, 1) = %v", got)
	}
	if got := linspace(0, 1, 3); !slices.Equal(got, []float64{0, 0.5, 1}) {
		t.Errorf("linspace(0, 1, 3) = %v", got)
	}
}
