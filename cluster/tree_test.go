package cluster

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randGraphLabels returns a kNN graph on random rows and random spike and
// landmark labels in [0, K), every label used by some spike.
func randGraphLabels(rng *rand.Rand, n, K int) (*graph, []int32, []int32) {
	x := randRows(rng, n, 3, 0)
	g := buildGraph(x, n, 3, landmarks(n, 4, 0), 6)
	c := make([]int32, n)
	for i := range c {
		c[i] = int32(i % K)
	}
	rng.Shuffle(n, func(i, j int) { c[i], c[j] = c[j], c[i] })
	d := make([]int32, g.s)
	for s := range d {
		d[s] = int32(rng.IntN(K))
	}
	return g, c, d
}

// TestTreeMatchesBruteForce replays each greedy merge on a brute-force
// state that recomputes every ρ between the current nodes from the
// definitions (sums over the nodes' leaves of the symmetrised link counts
// and expectations): the merged pair must be a maximiser, the first in
// row-major order where the maximum is clear, with the same ρ and node
// ids.
func TestTreeMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 4))
	for _, c := range []struct{ n, K int }{{40, 1}, {40, 2}, {300, 9}, {900, 40}, {1201, 77}} {
		g, cl, dl := randGraphLabels(rng, c.n, c.K)
		tree := makeTree(g, cl, dl, c.K)
		K := c.K
		if len(tree) != K-1 {
			t.Fatalf("%+v: %d merges", c, len(tree))
		}
		cc := make([][]float64, K)
		cn := make([][]float64, K)
		KI, KS := make([]float64, K), make([]float64, K)
		for a := range cc {
			cc[a], cn[a] = make([]float64, K), make([]float64, K)
		}
		for i := 0; i < g.n; i++ {
			KI[cl[i]] += float64(g.ki[i])
			for _, s := range g.kn[i*g.k : (i+1)*g.k] {
				if int(g.land[s]) != i {
					cc[cl[i]][dl[s]]++
				}
			}
		}
		for s := 0; s < g.s; s++ {
			KS[dl[s]] += float64(g.ks[s])
		}
		ccs, cns := make([][]float64, K), make([][]float64, K)
		for a := 0; a < K; a++ {
			ccs[a], cns[a] = make([]float64, K), make([]float64, K)
			for b := 0; b < K; b++ {
				ccs[a][b] = cc[a][b] + cc[b][a]
				cns[a][b] = (0.001 + KI[a]*KS[b]/float64(g.m)) + (0.001 + KI[b]*KS[a]/float64(g.m))
			}
		}
		sets := make([][]int, K)
		node := make([]int, K)
		active := make([]bool, K)
		for a := range sets {
			sets[a], node[a], active[a] = []int{a}, a, true
		}
		rho := func(y, x int) float64 {
			var num, den float64
			for _, a := range sets[y] {
				for _, b := range sets[x] {
					num += ccs[a][b]
					den += cns[a][b]
				}
			}
			return num / den
		}
		for k, mg := range tree {
			by, bx, best := -1, -1, math.Inf(-1)
			second := math.Inf(-1)
			for y := 0; y < K; y++ {
				for x := y + 1; x < K; x++ {
					if !active[y] || !active[x] {
						continue
					}
					r := rho(y, x)
					if r > best {
						second = best
						by, bx, best = y, x, r
					} else if r > second {
						second = r
					}
				}
			}
			y := slices.Index(node, mg.b)
			x := slices.Index(node, mg.a)
			if y < 0 || x < 0 || !active[y] || !active[x] || y >= x || mg.node != K+k {
				t.Fatalf("%+v merge %d: %+v does not join two current nodes (y %d, x %d)", c, k, mg, y, x)
			}
			r := rho(y, x)
			tol := 1e-12 * math.Max(1, math.Abs(best))
			if math.Abs(r-best) > tol || math.Abs(mg.rho-r) > tol {
				t.Fatalf("%+v merge %d: ρ %v (brute %v), maximum %v", c, k, mg.rho, r, best)
			}
			if best-second > tol && (y != by || x != bx) {
				t.Fatalf("%+v merge %d: merged (%d, %d), the maximum is (%d, %d)", c, k, y, x, by, bx)
			}
			sets[y] = append(sets[y], sets[x]...)
			node[y] = K + k
			active[x] = false
			node[x] = -1
		}
	}
}

// TestFinalLabelsMatchesRecursion checks the final clusters against a
// recursive reading of the rule: from the root, a kept split recurses into
// both children, a refused one makes its node one cluster; clusters are
// numbered by ascending node id.
func TestFinalLabelsMatchesRecursion(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for trial := 0; trial < 60; trial++ {
		K := 1 + rng.IntN(30)
		g, cl, dl := randGraphLabels(rng, 200, K)
		tree := makeTree(g, cl, dl, K)
		p := rng.Float64()
		keepOf := make([]bool, len(tree))
		for k := range keepOf {
			keepOf[k] = rng.Float64() < p
		}
		var asked []int
		got, nf := finalLabels(tree, K, func(mg merge, _ [][]int) bool {
			asked = append(asked, mg.node)
			return keepOf[mg.node-K]
		})
		if !slices.IsSortedFunc(asked, func(a, b int) int { return b - a }) {
			t.Fatalf("merges asked out of order: %v", asked)
		}
		// Reference.
		var clusters []int
		var leavesOf func(nd int) []int
		leavesOf = func(nd int) []int {
			if nd < K {
				return []int{nd}
			}
			mg := tree[nd-K]
			return append(leavesOf(mg.b), leavesOf(mg.a)...)
		}
		var walk func(nd int)
		walk = func(nd int) {
			if nd < K || !keepOf[nd-K] {
				clusters = append(clusters, nd)
				return
			}
			walk(tree[nd-K].a)
			walk(tree[nd-K].b)
		}
		walk(K + len(tree) - 1)
		slices.Sort(clusters)
		want := make([]int32, K)
		for j, nd := range clusters {
			for _, l := range leavesOf(nd) {
				want[l] = int32(j)
			}
		}
		if nf != len(clusters) || !slices.Equal(got, want) {
			t.Fatalf("K %d: %d clusters %v, want %d %v", K, nf, got, len(clusters), want)
		}
	}
}

// TestDipScore checks the score on hand-made histograms.
func TestDipScore(t *testing.T) {
	h := make([]float64, 399)
	for i := range h {
		h[i] = 10 * (math.Exp(-sq(float64(i-100)/20)) + math.Exp(-sq(float64(i-300)/20)))
	}
	if s := dipScore(h); !(s > 0.99) {
		t.Errorf("two separated bumps: score %v", s)
	}
	for i := range h {
		h[i] = 5
	}
	if s := dipScore(h); s != 0 {
		t.Errorf("flat histogram: score %v", s)
	}
	for i := range h {
		h[i] = 10 * math.Exp(-sq(float64(i-199)/30))
	}
	if s := dipScore(h); !(s < 0.1) {
		t.Errorf("one central bump: score %v", s)
	}
	// Nothing left of the central bins and a positive minimum: −∞.
	for i := range h {
		h[i] = 0
		if i >= 175 {
			h[i] = 1 + float64(i-175)
		}
	}
	if s := dipScore(h); !math.IsInf(s, -1) {
		t.Errorf("empty left side: score %v", s)
	}
	clear(h)
	if s := dipScore(h); !math.IsNaN(s) {
		t.Errorf("empty histogram: score %v", s)
	}
}

func sq(v float64) float64 { return v * v }

// TestBimodality checks the split score: two separated blobs labelled by
// blob score high, one blob split at random scores low.
func TestBimodality(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	const n, d = 2000, 6
	prm := DefaultParams()
	x := make([]float64, n*d)
	c := make([]int32, n)
	for i := 0; i < n; i++ {
		c[i] = int32(i % 2)
		for t := 0; t < d; t++ {
			x[i*d+t] = rng.NormFloat64()
			if t == 1 && c[i] == 1 {
				x[i*d+t] += 12
			}
		}
	}
	sp := splitter{x: x, n: n, d: d, c: c, prm: &prm}
	if s := sp.bimodality([]int{0}, []int{1}, 2); !(s >= 0.6) {
		t.Errorf("separated blobs: score %v", s)
	}
	for i := range c {
		c[i] = int32(rng.IntN(2))
		x[i*d+1] = rng.NormFloat64()
	}
	if s := sp.bimodality([]int{0}, []int{1}, 2); !(s < 0.6) {
		t.Errorf("one blob: score %v", s)
	}
}

// TestGaussSmooth checks the taps and the reflect mode on small cases.
func TestGaussSmooth(t *testing.T) {
	if n := len(gaussKernel(4)); n != 33 {
		t.Errorf("σ 4: %d taps, want 33 (radius 16)", n)
	}
	if n := len(gaussKernel(0.5)); n != 5 {
		t.Errorf("σ 0.5: %d taps, want 5", n)
	}
	for _, c := range []struct{ i, n, want int }{{-1, 5, 0}, {-2, 5, 1}, {5, 5, 4}, {6, 5, 3}, {-3, 2, 1}, {4, 2, 0}, {0, 1, 0}, {-5, 1, 0}} {
		if got := reflect(c.i, c.n); got != c.want {
			t.Errorf("reflect(%d, %d) = %d, want %d", c.i, c.n, got, c.want)
		}
	}
	// A constant stays constant; an impulse in the middle gives the taps.
	h := []float64{3, 3, 3, 3, 3, 3, 3}
	for i, v := range gaussSmooth(h, 0.5) {
		if math.Abs(v-3) > 1e-12 {
			t.Errorf("constant smoothed [%d] = %v", i, v)
		}
	}
	imp := make([]float64, 9)
	imp[4] = 1
	w := gaussKernel(0.5)
	got := gaussSmooth(imp, 0.5)
	for j, wj := range w {
		if math.Abs(got[2+j]-wj) > 1e-15 {
			t.Errorf("impulse response [%d] = %v, want %v", 2+j, got[2+j], wj)
		}
	}
	// Reflection at the edge: an impulse at 0 gets its mirrored tap back.
	imp = make([]float64, 9)
	imp[0] = 1
	if got := gaussSmooth(imp, 0.5); math.Abs(got[0]-(w[2]+w[1])) > 1e-15 {
		t.Errorf("edge impulse [0] = %v, want %v", got[0], w[2]+w[1])
	}
}
