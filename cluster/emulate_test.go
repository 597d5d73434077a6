package cluster

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/internal/emutest"
)

// The kernels of kernels/cluster.cu run here on the CPU, compiled as C++
// with CUDA's builtins emulated (testdata/emulate.cc, fibers from
// ops/testdata/emulate.h), launched as cuda.go launches them on the
// layout cuda.go builds, against the CPU back end bit for bit: this checks
// their indexing, summation order and tie rules on machines without a
// GPU. It needs g++ (C++20) and skips without it.

// emu is the kernel emulator of this test binary, built for the CUDA back
// end's largest label count.
var emu = emutest.New("cluster", fmt.Sprintf("-DKMAX=%d", cudaKMax))

// TestMain removes the emulator's build directory after the tests.
func TestMain(m *testing.M) { emu.Main(m) }

// emuGroups returns device groups of clustered, float32-valued rows: the
// sizes and widths given, a share of rows repeated (exact ties).
func emuGroups(rng *rand.Rand, ns, ds []int) []*devGroup {
	var dg []*devGroup
	for gi, n := range ns {
		d := ds[gi]
		means := gaussMeans(rng, 1+rng.IntN(6), d, 8)
		x := make([]float64, n*d)
		for i := 0; i < n; i++ {
			m := means[rng.IntN(len(means))]
			for t := 0; t < d; t++ {
				x[i*d+t] = float64(float32(m[t] + rng.NormFloat64()))
			}
			if i%11 == 5 {
				copy(x[i*d:(i+1)*d], x[(i-5)*d:(i-4)*d])
			}
		}
		dg = append(dg, &devGroup{x: x, n: n, d: d})
	}
	return dg
}

func testParams() *Params {
	prm := DefaultParams()
	return &prm
}

// TestKernelKnnEmulated compares the knn kernel with buildGraph.
func TestKernelKnnEmulated(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 31))
	prm := testParams()
	for _, k := range []int{10, 1, 32} {
		prm.ClusterNeighbors = k
		dg := emuGroups(rng, []int{1, 37, 421, 260}, []int{3, 7, 12, 1})
		// Few distinct rows: equal distances at the k-th place.
		dg = append(dg, &devGroup{x: randRows(rng, 333, 2, 3), n: 333, d: 2})
		lay, err := newLayout(dg, prm)
		if err != nil {
			t.Fatal(err)
		}
		var in bytes.Buffer
		emutest.Put(&in, lay.meta, lay.x, lay.land)
		out := bytes.NewReader(emu.Run(t, in.Bytes(), "knn", len(dg), lay.nSpk, len(lay.x), len(lay.land), lay.maxN))
		kn := make([]int32, lay.nSpk*cudaKMax)
		emutest.Get(t, out, kn)
		for i, g := range dg {
			m := lay.meta[i*metaLen:]
			got := graphFromTable(g.n, g.land, int(m[metaK]), kn[int(m[metaSpk])*cudaKMax:], cudaKMax)
			want := buildGraph(g.x, g.n, g.d, g.land, k)
			if !slices.Equal(got.kn, want.kn) {
				t.Fatalf("k %d group %d (n %d, d %d): kNN tables differ", k, i, g.n, g.d)
			}
		}
	}
}

// TestKernelKmeansEmulated runs the k-means++ rounds with the kernels
// (norms, score, pick, update, weights) and the host's draws
// (sampleGroups), as cuda.go does, against kmeansPP per group.
func TestKernelKmeansEmulated(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 32))
	prm := testParams()
	K, Q := 16, 37
	dg := emuGroups(rng, []int{1, 300, 613, 257}, []int{2, 9, 5, 17})
	// Few distinct rows: equal candidate scores.
	dg = append(dg, &devGroup{x: randRows(rng, 290, 2, 3), n: 290, d: 2})
	// One group of zeros: no weight, it stops at once.
	dg = append(dg, &devGroup{x: make([]float64, 40*3), n: 40, d: 3})
	lay, err := newLayout(dg, prm)
	if err != nil {
		t.Fatal(err)
	}
	nSpk := lay.nSpk
	e := make([]float64, nSpk)
	c := make([]int32, nSpk)
	w := make([]float64, nSpk)
	for i, g := range dg {
		o := int(lay.meta[i*metaLen+metaSpk])
		for r := 0; r < g.n; r++ {
			xr := g.x[r*g.d : (r+1)*g.d]
			w[o+r] = max(dot(xr, xr), 0)
		}
		g.rng = initRNG(prm.ClusterInitSeed)
	}
	cand := make([]int32, len(dg)*Q)
	nq := make([]int32, len(dg))
	for j := 0; j < K; j++ {
		sampleGroups(dg, lay.meta, w, Q, cand, nq, 2)
		if slices.Max(nq) == 0 {
			break
		}
		wantTot := blockedScores(dg, lay, e, cand, nq, Q)
		var in bytes.Buffer
		emutest.Put(&in, lay.meta, lay.x, e, c, cand, nq)
		out := bytes.NewReader(emu.Run(t, in.Bytes(), "kround", len(dg), nSpk, len(lay.x), Q, j, lay.maxN))
		best := make([]int32, len(dg))
		tot := make([]float64, len(dg)*Q)
		emutest.Get(t, out, e)
		emutest.Get(t, out, c)
		emutest.Get(t, out, w)
		emutest.Get(t, out, best)
		emutest.Get(t, out, tot)
		for g := range dg {
			for a := 0; a < int(nq[g]); a++ {
				if math.Float64bits(tot[g*Q+a]) != math.Float64bits(wantTot[g*Q+a]) {
					t.Fatalf("round %d group %d candidate %d: score %v, blocked reference %v", j, g, a, tot[g*Q+a], wantTot[g*Q+a])
				}
			}
		}
		for i, v := range w {
			if !(v >= 0) || math.IsInf(v, 0) || math.IsNaN(e[i]) {
				t.Fatalf("round %d spike %d: weight %v, gain %v", j, i, v, e[i])
			}
		}
	}
	for i, g := range dg {
		o := int(lay.meta[i*metaLen+metaSpk])
		want := kmeansPP(g.x, g.n, g.d, K, Q, initRNG(prm.ClusterInitSeed), nil)
		if !slices.Equal(c[o:o+g.n], want) {
			t.Errorf("group %d (n %d, d %d): k-means++ labels differ from the CPU's", i, g.n, g.d)
		}
	}
}

// TestKernelAssignEmulated runs assignment rounds with the kernels
// (sizes, landmarkStep, spikeStep) against the CPU assigner, for λ = 0
// and λ > 0, from random labels (some unused) and from k-means++ labels.
func TestKernelAssignEmulated(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 33))
	prm := testParams()
	for _, tc := range []struct {
		lambda  float64
		K, R, k int
		kmeans  bool
	}{{1, 40, 5, 10, false}, {0, 17, 4, 10, false}, {3.5, 30, 6, 4, true}, {1, 200, 3, 10, true}} {
		prm.ClusterNeighbors = tc.k
		dg := emuGroups(rng, []int{1, 333, 581, 40}, []int{2, 6, 4, 3})
		lay, err := newLayout(dg, prm)
		if err != nil {
			t.Fatal(err)
		}
		kn := make([]int32, lay.nSpk*cudaKMax)
		c0 := make([]int32, lay.nSpk)
		for i, g := range dg {
			g.g = buildGraph(g.x, g.n, g.d, g.land, tc.k)
			o := int(lay.meta[i*metaLen+metaSpk])
			for r := 0; r < g.n; r++ {
				copy(kn[(o+r)*cudaKMax:], g.g.kn[r*g.g.k:(r+1)*g.g.k])
			}
			if tc.kmeans {
				copy(c0[o:], kmeansPP(g.x, g.n, g.d, tc.K, 20, initRNG(5), nil))
			} else {
				for r := 0; r < g.n; r++ {
					c0[o+r] = int32(rng.IntN(tc.K - tc.K/4))
				}
			}
		}
		ki, ks, lam, inStart, inList := lay.links(dg, tc.lambda)
		var in bytes.Buffer
		emutest.Put(&in, lay.meta, kn, ki, ks, lam, inStart, inList, c0)
		out := bytes.NewReader(emu.Run(t, in.Bytes(), "assign", len(dg), lay.nSpk, len(lay.land), len(inList), tc.K, tc.R, lay.maxN, lay.maxS))
		c := make([]int32, lay.nSpk)
		d := make([]int32, len(lay.land))
		emutest.Get(t, out, c)
		emutest.Get(t, out, d)
		for i, g := range dg {
			o := int(lay.meta[i*metaLen+metaSpk])
			lo := int(lay.meta[i*metaLen+metaLand])
			cw := append([]int32(nil), c0[o:o+g.n]...)
			dw := make([]int32, g.g.s)
			a := newAssigner(g.g, tc.lambda, tc.K)
			for r := 0; r < tc.R; r++ {
				a.landmarkStep(cw, dw)
				a.spikeStep(cw, dw)
			}
			if !slices.Equal(c[o:o+g.n], cw) || !slices.Equal(d[lo:lo+g.g.s], dw) {
				t.Fatalf("%+v group %d (n %d): assignment labels differ from the CPU's", tc, i, g.n)
			}
		}
	}
}

// blockedScores is the plain reference of the candidate scores: per group
// and candidate, Σ over blocks of scoreBlock spikes of (the block's terms
// max(2·x_i·x_q − ‖x_q‖² − e_i, 0) summed in order from 0), in block order.
func blockedScores(dg []*devGroup, lay *layout, e []float64, cand, nq []int32, Q int) []float64 {
	tot := make([]float64, len(dg)*Q)
	for gi, g := range dg {
		o := int(lay.meta[gi*metaLen+metaSpk])
		row := func(i int) []float64 { return g.x[i*g.d : (i+1)*g.d] }
		for a := 0; a < int(nq[gi]); a++ {
			q := int(cand[gi*Q+a])
			vq := dot(row(q), row(q))
			for b0 := 0; b0 < g.n; b0 += scoreBlock {
				s := 0.0
				for i := b0; i < min(g.n, b0+scoreBlock); i++ {
					s += max(2*dot(row(i), row(q))-vq-e[o+i], 0)
				}
				tot[gi*Q+a] += s
			}
		}
	}
	return tot
}
