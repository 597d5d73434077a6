package cluster

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randRows returns n·d float32-representable values widened to float64;
// with levels > 0 they are quantised to that many levels (many equal
// distances, to exercise the tie rules).
func randRows(rng *rand.Rand, n, d, levels int) []float64 {
	x := make([]float64, n*d)
	for i := range x {
		v := rng.NormFloat64()
		if levels > 0 {
			v = float64(rng.IntN(levels))
		}
		x[i] = float64(float32(v))
	}
	return x
}

// TestLandmarks pins the landmark choice and the cap (round half to even
// of numpy's linspace positions).
func TestLandmarks(t *testing.T) {
	for _, c := range []struct {
		n, ds, limit int
		want         []int32
	}{
		{1, 20, 0, []int32{0}},
		{41, 20, 0, []int32{0, 20, 40}},
		{40, 20, 25000, []int32{0, 20}},
		{10, 1, 6, []int32{1, 2, 4, 5, 7, 8}},   // drop linspace(0, 9, 4) = 0, 3, 6, 9
		{12, 2, 3, []int32{2, 6, 8}},            // s1 = 6, drop 0, 2.5 → 2, 5
		{7, 1, 0, []int32{0, 1, 2, 3, 4, 5, 6}}, // no cap
	} {
		if got := landmarks(c.n, c.ds, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("landmarks(%d, %d, %d) = %v, want %v", c.n, c.ds, c.limit, got, c.want)
		}
	}
	// The cap leaves exactly limit landmarks.
	for _, s1 := range []int{26, 100, 997} {
		for _, limit := range []int{1, 2, 25, s1 - 1} {
			if got := len(landmarks(s1, 1, limit)); got != limit {
				t.Errorf("landmarks(%d, 1, %d) keeps %d", s1, limit, got)
			}
		}
	}
}

// TestGraphMatchesDense compares the kNN graph with a dense O(n²)
// reference: full distance rows sorted by (distance, landmark), the dense
// link matrix M without self-links, its sums and the incoming lists.
func TestGraphMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	for _, c := range []struct{ n, d, ds, k, levels int }{
		{1, 1, 1, 1, 0}, {7, 3, 2, 4, 0}, {333, 5, 20, 10, 0}, {1001, 17, 20, 10, 0},
		{257, 2, 3, 10, 3}, {500, 1, 7, 9, 2}, {64, 4, 1, 64, 0}, {30, 3, 20, 10, 0},
	} {
		x := randRows(rng, c.n, c.d, c.levels)
		land := landmarks(c.n, c.ds, 0)
		g := buildGraph(x, c.n, c.d, land, c.k)
		s := len(land)
		k := min(c.k, s)
		if g.k != k || g.s != s || g.n != c.n {
			t.Fatalf("%+v: graph sizes n %d s %d k %d", c, g.n, g.s, g.k)
		}
		M := make([]int, c.n*s)
		for i := 0; i < c.n; i++ {
			type cand struct {
				d float64
				j int
			}
			all := make([]cand, s)
			for j, li := range land {
				sum := 0.0
				for t := 0; t < c.d; t++ {
					diff := x[i*c.d+t] - x[int(li)*c.d+t]
					sum += diff * diff
				}
				all[j] = cand{sum, j}
			}
			slices.SortStableFunc(all, func(a, b cand) int {
				if a.d < b.d {
					return -1
				}
				if a.d > b.d {
					return 1
				}
				return 0
			})
			for r := 0; r < k; r++ {
				if got := g.kn[i*k+r]; int(got) != all[r].j {
					t.Fatalf("%+v: spike %d neighbour %d = landmark %d, want %d", c, i, r, got, all[r].j)
				}
				if int(land[all[r].j]) != i {
					M[i*s+all[r].j] = 1
				}
			}
		}
		m := 0
		for i := 0; i < c.n; i++ {
			row := 0
			for j := 0; j < s; j++ {
				row += M[i*s+j]
			}
			if int(g.ki[i]) != row {
				t.Fatalf("%+v: k_i[%d] = %d, want %d", c, i, g.ki[i], row)
			}
			m += row
		}
		if g.m != m {
			t.Fatalf("%+v: m = %d, want %d", c, g.m, m)
		}
		for j := 0; j < s; j++ {
			col := 0
			var in []int32
			for i := 0; i < c.n; i++ {
				col += M[i*s+j]
				if slices.Contains(g.kn[i*k:(i+1)*k], int32(j)) {
					in = append(in, int32(i))
				}
			}
			if int(g.ks[j]) != col {
				t.Fatalf("%+v: k_s[%d] = %d, want %d", c, j, g.ks[j], col)
			}
			if got := g.inList[g.inStart[j]:g.inStart[j+1]]; !slices.Equal(got, in) {
				t.Fatalf("%+v: landmark %d incoming %v, want %v", c, j, got, in)
			}
		}
	}
}

// denseAssign is the reference of assign: dense score matrices
// S[s, k] = #{(i, r): kn[i,r] = s, c_i = k} − (λ/m)·k_s·N_k and
// R[i, k] = #{r: d[kn[i,r]] = k} − (λ/m)·k_i·N'_k, first argmax over
// every label.
func denseAssign(g *graph, c []int32, K, rounds int, lambda float64) ([]int32, int) {
	lam := 0.0
	if g.m > 0 {
		lam = lambda / float64(g.m)
	}
	argmax := func(row []float64) int32 {
		b := 0
		for k := range row {
			if row[k] > row[b] {
				b = k
			}
		}
		return int32(b)
	}
	landStep := func(d []int32, K int) {
		N := make([]float64, K)
		for _, l := range c {
			N[l]++
		}
		S := make([]float64, g.s*K)
		for i := 0; i < g.n; i++ {
			for _, s := range g.kn[i*g.k : (i+1)*g.k] {
				S[int(s)*K+int(c[i])]++
			}
		}
		for s := 0; s < g.s; s++ {
			row := S[s*K : (s+1)*K]
			for k := range row {
				row[k] = row[k] - lam*float64(g.ks[s])*N[k]
			}
			d[s] = argmax(row)
		}
	}
	d := make([]int32, g.s)
	for r := 0; r < rounds; r++ {
		landStep(d, K)
		N := make([]float64, K)
		for _, l := range d {
			N[l]++
		}
		R := make([]float64, g.n*K)
		for i := 0; i < g.n; i++ {
			for _, s := range g.kn[i*g.k : (i+1)*g.k] {
				R[i*K+int(d[s])]++
			}
			row := R[i*K : (i+1)*K]
			for k := range row {
				row[k] = row[k] - lam*float64(g.ki[i])*N[k]
			}
			c[i] = argmax(row)
		}
	}
	uniq := slices.Clone(c)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	for i, l := range c {
		j, _ := slices.BinarySearch(uniq, l)
		c[i] = int32(j)
	}
	landStep(d, len(uniq))
	return d, len(uniq)
}

// TestAssignMatchesDense checks the sparse assignment against dense score
// matrices on random graphs and labels, λ = 0 (no penalty), 1 and large
// (the penalty wins and labels without counts are chosen).
func TestAssignMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, c := range []struct {
		n, d, ds, k, K, rounds int
		lambda                 float64
	}{
		{1, 2, 1, 1, 1, 3, 1}, {50, 3, 5, 4, 7, 4, 1}, {1001, 4, 20, 10, 200, 6, 1},
		{777, 6, 3, 10, 37, 5, 0}, {600, 2, 20, 10, 200, 5, 40}, {999, 5, 20, 10, 13, 30, 1},
		{300, 3, 2, 5, 200, 3, 3.5},
	} {
		x := randRows(rng, c.n, c.d, 0)
		g := buildGraph(x, c.n, c.d, landmarks(c.n, c.ds, 0), c.k)
		c0 := make([]int32, c.n)
		for i := range c0 {
			c0[i] = int32(rng.IntN(c.K))
		}
		cf, cr := slices.Clone(c0), slices.Clone(c0)
		df, kf := assign(g, cf, c.K, c.rounds, c.lambda)
		dr, kr := denseAssign(g, cr, c.K, c.rounds, c.lambda)
		if kf != kr || !slices.Equal(cf, cr) || !slices.Equal(df, dr) {
			t.Errorf("%+v: sparse K'=%d differs from dense K'=%d (spike labels equal %v, landmark labels equal %v)",
				c, kf, kr, slices.Equal(cf, cr), slices.Equal(df, dr))
		}
	}
}

// refKmeansPP is the plain reference of kmeansPP: per round the dense
// [n, Q] matrix g = 2·x_i·x_q − ‖x_q‖², δ = max(g − e, 0), column sums
// in blocks of scoreBlock spikes (each block summed in order, then the
// block sums in order), first argmax, update. The draws come from the same sampler.
func refKmeansPP(x []float64, n, d, nInit, nCand int, seed int64) []int32 {
	return refKmeansPPTrace(x, n, d, nInit, nCand, seed, nil)
}

// refKmeansPPTrace is refKmeansPP calling trace with every round's
// candidate scores.
func refKmeansPPTrace(x []float64, n, d, nInit, nCand int, seed int64, trace func(j int, score []float64)) []int32 {
	rng := initRNG(seed)
	nrm := func(i int) float64 {
		s := 0.0
		for t := 0; t < d; t++ {
			s += x[i*d+t] * x[i*d+t]
		}
		return s
	}
	ip := func(i, j int) float64 {
		s := 0.0
		for t := 0; t < d; t++ {
			s += x[i*d+t] * x[j*d+t]
		}
		return s
	}
	e := make([]float64, n)
	c := make([]int32, n)
	for j := 0; j < nInit; j++ {
		w := make([]float64, n)
		for i := range w {
			w[i] = math.Max(nrm(i)-e[i], 0)
		}
		q := sampleWeighted(rng, w, nCand, nil, nil)
		if len(q) == 0 {
			break
		}
		G := make([][]float64, n)
		score := make([]float64, len(q))
		for i := 0; i < n; i++ {
			G[i] = make([]float64, len(q))
			for a, qi := range q {
				G[i][a] = 2*ip(i, int(qi)) - nrm(int(qi))
			}
		}
		for b0 := 0; b0 < n; b0 += scoreBlock {
			for a := range q {
				s := 0.0
				for i := b0; i < min(n, b0+scoreBlock); i++ {
					s += math.Max(G[i][a]-e[i], 0)
				}
				score[a] += s
			}
		}
		if trace != nil {
			trace(j, score)
		}
		best := 0
		for a := range score {
			if score[a] > score[best] {
				best = a
			}
		}
		for i := 0; i < n; i++ {
			if G[i][best]-e[i] > 0 {
				c[i], e[i] = int32(j), G[i][best]
			}
		}
	}
	return c
}

// TestKmeansPPMatchesReference checks the memoised and the pruned
// k-means++, with the scalar and (where present) the vector kernels,
// against the dense reference bit for bit (same draws, same sums).
func TestKmeansPPMatchesReference(t *testing.T) {
	saved, savedMemo := useDots512, kmeansMemoBytes
	defer func() { useDots512, kmeansMemoBytes = saved, savedMemo }()
	// The memoised path (every group of these tests fits its budget).
	for _, vec := range []bool{false, true} {
		if vec && !saved {
			continue
		}
		useDots512 = vec
		testKmeansPP(t)
	}
	// The pruned path.
	kmeansMemoBytes = 0
	for _, vec := range []bool{false, true} {
		if vec && !saved {
			t.Log("no AVX-512 here: the vector scoring was not run")
			continue
		}
		useDots512 = vec
		testKmeansPP(t)
		if vec {
			for _, layout := range []int{1, 2, 3} {
				scoreLayout = layout
				testKmeansPP(t)
			}
			scoreLayout = 0
		}
	}
}

func testKmeansPP(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, c := range []struct{ n, d, nInit, nCand int }{
		{1, 1, 3, 1}, {5, 3, 4, 100}, {257, 13, 20, 7}, {400, 2, 80, 100}, {301, 9, 30, 33}, {4500, 3, 6, 20}, {8193, 2, 3, 9},
	} {
		x := randRows(rng, c.n, c.d, 0)
		got, want := tracedKmeansPP(t, x, c.n, c.d, c.nInit, c.nCand)
		if !slices.Equal(got, want) {
			t.Errorf("%+v: labels differ from the reference", c)
		}
	}
	// Clustered rows, where the pruning skips most pairs, and rows with
	// exact duplicates (spikes on their anchor).
	for _, c := range []struct{ n, d, k int }{{900, 12, 6}, {501, 3, 2}, {700, 40, 15}, {5000, 4, 3}} {
		means := gaussMeans(rng, c.k, c.d, 30)
		x := make([]float64, c.n*c.d)
		for i := 0; i < c.n; i++ {
			m := means[rng.IntN(c.k)]
			for t := 0; t < c.d; t++ {
				x[i*c.d+t] = float64(float32(m[t] + rng.NormFloat64()))
				if i%7 == 0 {
					x[i*c.d+t] = float64(float32(m[t]))
				}
			}
		}
		got, want := tracedKmeansPP(t, x, c.n, c.d, 40, 100)
		if !slices.Equal(got, want) {
			t.Errorf("clustered %+v: labels differ from the reference", c)
		}
	}
	// All-zero features: no weight, every spike keeps label 0.
	if got := kmeansPP(make([]float64, 30), 10, 3, 5, 4, initRNG(5), nil); slices.Max(got) != 0 {
		t.Errorf("zero features gave labels %v", got)
	}
}

// tracedKmeansPP runs kmeansPP and the dense reference (seed 5) and
// fails t where any round's candidate scores differ in a bit; it returns
// both label sets.
func tracedKmeansPP(t *testing.T, x []float64, n, d, nInit, nCand int) (got, want []int32) {
	t.Helper()
	var gs, ws [][]float64
	kmeansTrace = func(_ int, score []float64) { gs = append(gs, slices.Clone(score)) }
	got = kmeansPP(x, n, d, nInit, nCand, initRNG(5), nil)
	kmeansTrace = nil
	want = refKmeansPPTrace(x, n, d, nInit, nCand, 5, func(_ int, score []float64) { ws = append(ws, slices.Clone(score)) })
	if len(gs) != len(ws) {
		t.Errorf("n %d d %d: %d rounds, reference %d", n, d, len(gs), len(ws))
		return got, want
	}
	for j := range gs {
		for a := range ws[j] {
			if math.Float64bits(gs[j][a]) != math.Float64bits(ws[j][a]) {
				t.Errorf("n %d d %d (layout %d, memo %v): round %d candidate %d: score %v, reference %v", n, d, scoreLayout, kmeansMemoBytes > 0, j, a, gs[j][a], ws[j][a])
				return got, want
			}
		}
	}
	return got, want
}

// TestSampleWeighted checks the sampler's law on a small case against the
// exact probabilities of successive draws without replacement, and its
// edge cases.
func TestSampleWeighted(t *testing.T) {
	w := []float64{1, 2, 0, 3, 0.5}
	W := 6.5
	rng := rand.New(rand.NewPCG(11, 0))
	const trials = 40000
	count := map[[2]int32]int{}
	for r := 0; r < trials; r++ {
		q := sampleWeighted(rng, w, 2, nil, nil)
		if len(q) != 2 || q[0] == q[1] || q[0] == 2 || q[1] == 2 {
			t.Fatalf("draw %v", q)
		}
		count[[2]int32{q[0], q[1]}]++
	}
	for a := range w {
		for b := range w {
			if a == b || w[a] == 0 || w[b] == 0 {
				continue
			}
			p := w[a] / W * w[b] / (W - w[a])
			got := float64(count[[2]int32{int32(a), int32(b)}]) / trials
			if sd := math.Sqrt(p * (1 - p) / trials); math.Abs(got-p) > 5*sd {
				t.Errorf("P(%d then %d) = %.4f, want %.4f ± %.4f", a, b, got, p, sd)
			}
		}
	}
	// Fewer positive weights than asked: all of them, by key.
	q := sampleWeighted(rng, []float64{0, 1, 0, 2}, 5, nil, nil)
	if s := slices.Sorted(slices.Values(q)); !slices.Equal(s, []int32{1, 3}) {
		t.Errorf("draw of 5 from 2 positive = %v", q)
	}
	if q := sampleWeighted(rng, []float64{0, 0}, 3, nil, nil); len(q) != 0 {
		t.Errorf("draw from zero weights = %v", q)
	}
	// Same seed, same draws.
	a := sampleWeighted(initRNG(5), w, 3, nil, nil)
	b := sampleWeighted(initRNG(5), w, 3, nil, nil)
	if !slices.Equal(a, b) {
		t.Errorf("same seed gave %v and %v", a, b)
	}
}

// TestSampleWeightedMatchesKeys checks the sampler, which skips the
// logarithm of keys that cannot enter, against every key computed and
// sorted: the same indices in the same order, on weights spread over
// many orders of magnitude, with zeros, ties and tiny ones.
func TestSampleWeightedMatchesKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	for trial := range 300 {
		n := 1 + rng.IntN(3000)
		w := make([]float64, n)
		for i := range w {
			switch rng.IntN(8) {
			case 0:
				w[i] = 0
			case 1:
				w[i] = 1e-300 * rng.Float64()
			case 2:
				w[i] = 1
			default:
				w[i] = math.Exp(rng.NormFloat64() * 5)
			}
		}
		k := 1 + rng.IntN(120)
		seed := uint64(trial)
		got := sampleWeighted(rand.New(rand.NewPCG(seed, 0)), w, k, nil, nil)
		r := rand.New(rand.NewPCG(seed, 0))
		type kv struct {
			key float64
			i   int32
		}
		var all []kv
		for i, wi := range w {
			u := 1 - r.Float64()
			if wi > 0 {
				all = append(all, kv{math.Log(u) / wi, int32(i)})
			}
		}
		slices.SortFunc(all, func(a, b kv) int {
			if a.key != b.key {
				if a.key > b.key {
					return -1
				}
				return 1
			}
			return int(a.i - b.i)
		})
		want := []int32{}
		for _, a := range all[:min(k, len(all))] {
			want = append(want, a.i)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n %d, k %d): %v, want %v", trial, n, k, got, want)
		}
	}
}
