package probe

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refKNearest is the plain reference: all squared distances, a stable
// sort by (distance, self first, index), the first k.
func refKNearest(px, py, qx, qy []float64, k int, self bool) ([][]int, [][]float64) {
	k = min(k, len(px))
	idx := make([][]int, len(qx))
	d2 := make([][]float64, len(qx))
	for q := range qx {
		type c struct {
			d float64
			i int
		}
		all := make([]c, len(px))
		for i := range px {
			d := math.Pow(px[i]-qx[q], 2) + math.Pow(py[i]-qy[q], 2)
			if math.IsNaN(d) {
				d = math.Inf(1)
			}
			all[i] = c{d, i}
		}
		slices.SortStableFunc(all, func(a, b c) int {
			if a.d != b.d {
				if a.d < b.d {
					return -1
				}
				return 1
			}
			if self && (a.i == q) != (b.i == q) {
				if a.i == q {
					return -1
				}
				return 1
			}
			return a.i - b.i
		})
		for _, e := range all[:k] {
			idx[q] = append(idx[q], e.i)
			d2[q] = append(d2[q], e.d)
		}
		if idx[q] == nil {
			idx[q], d2[q] = []int{}, []float64{}
		}
	}
	return idx, d2
}

// randPoints draws n points on a coarse grid, so that many distances tie.
func randPoints(rng *rand.Rand, n int, grid bool) (x, y []float64) {
	x, y = make([]float64, n), make([]float64, n)
	for i := range n {
		if grid {
			x[i], y[i] = float64(16*rng.IntN(4)), float64(20*rng.IntN(n/3+1))
		} else {
			x[i], y[i] = rng.NormFloat64()*50, rng.Float64()*1000
		}
	}
	return x, y
}

func TestKNearestMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 10, 33, 100} {
		for _, m := range []int{1, 5, 64} {
			for _, k := range []int{1, 2, 7, 10, 100, 1000} {
				for _, grid := range []bool{true, false} {
					px, py := randPoints(rng, n, grid)
					qx, qy := randPoints(rng, m, grid)
					gi, gd := KNearest(px, py, qx, qy, k)
					wi, wd := refKNearest(px, py, qx, qy, k, false)
					if !slices.EqualFunc(gi, wi, slices.Equal) || !slices.EqualFunc(gd, wd, slices.Equal) {
						t.Fatalf("n=%d m=%d k=%d grid=%v:\n got %v %v\nwant %v %v", n, m, k, grid, gi, gd, wi, wd)
					}
					for _, row := range gi {
						if len(row) != min(k, n) {
							t.Fatalf("row length %d; want %d", len(row), min(k, n))
						}
					}
				}
			}
		}
	}
	// No points: empty rows, one per query.
	idx, d2 := KNearest(nil, nil, []float64{0, 1}, []float64{0, 1}, 3)
	if len(idx) != 2 || len(idx[0]) != 0 || len(d2[1]) != 0 {
		t.Errorf("no points: %v %v", idx, d2)
	}
}

func TestNearestMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, p := range []*Probe{NP1(), NP2(), tetrode()} {
		for _, k := range []int{1, 2, 4, 10, 32, 500} {
			got := Nearest(p, k)
			want, _ := refKNearest(p.X, p.Y, p.X, p.Y, k, true)
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("%s k=%d: got %v\nwant %v", p.Name, k, got[:min(3, len(got))], want[:min(3, len(want))])
			}
			for i, row := range got {
				if row[0] != i {
					t.Fatalf("%s k=%d: site %d is not first in its own row %v", p.Name, k, i, row)
				}
			}
		}
	}
	// Random grid probes with many ties.
	for range 20 {
		n := 1 + rng.IntN(60)
		x, y := randPoints(rng, n, true)
		p := &Probe{Name: "grid", X: x, Y: y, Shank: make([]int, n), ChanMap: rng.Perm(n), NChanFile: n}
		k := 1 + rng.IntN(n+2)
		want, _ := refKNearest(x, y, x, y, k, true)
		if got := Nearest(p, k); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("grid n=%d k=%d:\n got %v\nwant %v", n, k, got, want)
		}
	}
}

// tetrode is four co-located sites: every distance ties at zero.
func tetrode() *Probe { return newProbe("tetrode", 4, 4) }

// TestNearestTieBreak pins the deterministic order on exact ties.
func TestNearestTieBreak(t *testing.T) {
	got := Nearest(tetrode(), 4)
	want := [][]int{{0, 1, 2, 3}, {1, 0, 2, 3}, {2, 0, 1, 3}, {3, 0, 1, 2}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("tetrode: %v; want %v", got, want)
	}
	// NP1 site 0 at (43, 20): sites 2 (59, 40) and 3 (27, 40) tie at
	// 16²+20² = 656 µm² (lower index first), site 1 (11, 20) is at 32².
	if got := Nearest(NP1(), 4)[0]; !slices.Equal(got, []int{0, 2, 3, 1}) {
		t.Errorf("NP1 site 0: %v", got)
	}
	// Repeated calls give the same answer.
	a, b := Nearest(NP2(), 17), Nearest(NP2(), 17)
	if !slices.EqualFunc(a, b, slices.Equal) {
		t.Error("Nearest is not deterministic")
	}
}

func TestKNearestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"k0":       func() { KNearest([]float64{0}, []float64{0}, []float64{0}, []float64{0}, 0) },
		"p length": func() { KNearest([]float64{0, 1}, []float64{0}, []float64{0}, []float64{0}, 1) },
		"q length": func() { KNearest([]float64{0}, []float64{0}, []float64{0}, nil, 1) },
		"nearest0": func() { Nearest(NP1(), 0) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.HasPrefix(s, "probe: ") {
					t.Errorf("panic %v; want a probe: message", r)
				}
			}()
			f()
		})
	}
}

func TestSummary(t *testing.T) {
	for _, c := range []struct {
		p    *Probe
		want string
	}{
		{NP1(), "384 sites on 1 shank, x 11–59 µm, y 20–3840 µm, 385 channels in file"},
		{NP2(), "384 sites on 1 shank, x 0–32 µm, y 0–2865 µm, 385 channels in file"},
		{&Probe{X: []float64{0, 250.5}, Y: []float64{-5, 7}, Shank: []int{0, 1}, ChanMap: []int{0, 1}, NChanFile: 1},
			"2 sites on 2 shanks, x 0–250.5 µm, y -5–7 µm, 1 channel in file"},
	} {
		if got := c.p.Summary(); got != c.want {
			t.Errorf("Summary() = %q; want %q", got, c.want)
		}
	}
}

func TestForFile(t *testing.T) {
	p := NP1()
	q, err := p.ForFile(400, "rec.bin")
	if err != nil {
		t.Fatal(err)
	}
	if q.NChanFile != 400 || p.NChanFile != 385 || !slices.Equal(q.ChanMap, p.ChanMap) {
		t.Errorf("ForFile: %d, original %d", q.NChanFile, p.NChanFile)
	}
	q.X[0] = -1
	if p.X[0] != 43 {
		t.Error("ForFile shares storage")
	}
	for nChan, want := range map[int]string{
		383: "384 sites but rec.bin has only 383 channels",
		0:   "rec.bin has 0 channels",
	} {
		if _, err := p.ForFile(nChan, "rec.bin"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ForFile(%d): %v; want %q", nChan, err, want)
		}
	}
	sparse := &Probe{Name: "sparse", X: []float64{0, 0}, Y: []float64{0, 20}, Shank: []int{0, 0}, ChanMap: []int{0, 40}, NChanFile: 41}
	if _, err := sparse.ForFile(32, "rec.bin"); err == nil || !strings.Contains(err.Error(), "site 1 is stored in channel 40 but rec.bin has only 32") {
		t.Errorf("sparse: %v", err)
	}
}

func BenchmarkNearestNP1(b *testing.B) {
	p := NP1()
	for b.Loop() {
		Nearest(p, 32)
	}
}

// BenchmarkKNearestCentres is Kilosort4's iC2 table for NP1: the 100
// nearest of 1532 template centres for each centre.
func BenchmarkKNearestCentres(b *testing.B) {
	var x, y []float64
	for _, cx := range []float64{11, 27, 43, 59} {
		for cy := 20.0; cy <= 3840; cy += 10 {
			x, y = append(x, cx), append(y, cy)
		}
	}
	for b.Loop() {
		KNearest(x, y, x, y, 100)
	}
}
