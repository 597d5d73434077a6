package cluster

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// np1Group returns the features of an NP1-sized 'spikes' group: n = 6000
// spikes, d = 90 (15 channels × 6 PCs), from 12 Gaussian clusters of
// unequal sizes, unit variance, means about sep apart (the noise alone
// puts two spikes of one cluster √180 ≈ 13.4 apart).
func np1Group(sep float64) ([]float64, int, int) { return np1GroupN(sep, 6000) }

// np1GroupN is np1Group with n spikes: a 60-s NP1 recording of 600 units
// gives groups of about a thousand.
func np1GroupN(sep float64, n int) ([]float64, int, int) {
	const d = 90
	rng := rand.New(rand.NewPCG(1, 1))
	means := gaussMeans(rng, 12, d, sep)
	x := make([]float64, n*d)
	for i := 0; i < n; i++ {
		c := min(int(12*rng.Float64()*rng.Float64()), 11)
		for t := 0; t < d; t++ {
			x[i*d+t] = float64(float32(means[c][t] + rng.NormFloat64()))
		}
	}
	return x, n, d
}

// BenchmarkGroup times the clustering of one NP1-sized group (n = 6000,
// d = 90, clusters 25 apart) on one goroutine, whole and by stage, and
// k-means++ also on overlapping clusters (10 apart), where its exact
// pruning skips almost nothing. GFLOP/s counts the unpruned work. Floor: k-means++ is
// 200 rounds × 100 candidates × 2·n·d = 21.6 GFLOP, the kNN graph
// 3·n·s·d = 0.49 GFLOP (s = 300 landmarks), the assignment 200 × 2 ×
// (n + s)·10 label counts, the splits ≲ Σ n_node·d² per visited node.
func BenchmarkGroup(b *testing.B) {
	x, n, d := np1Group(25)
	prm := DefaultParams()
	land := landmarks(n, prm.ClusterDownsampling, prm.MaxClusterSubset)
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			clusterGroup(x, n, d, &prm)
		}
		b.ReportMetric(21.6e9*float64(b.N)/b.Elapsed().Seconds()/1e9, "kmeans-GFLOP/s")
	})
	b.Run("knn", func(b *testing.B) {
		for b.Loop() {
			buildGraph(x, n, d, land, prm.ClusterNeighbors)
		}
	})
	// Each k-means++ case by both paths: the memoised inner products
	// (the default where the rows fit kmeansMemoBytes: 6000 spikes need
	// 288 MB, so "memo" raises the budget) and the pruned one.
	saved := kmeansMemoBytes
	defer func() { kmeansMemoBytes = saved }()
	paths := []struct {
		name   string
		budget int64
	}{{"memo", 1 << 30}, {"pruned", 0}}
	for _, sep := range []float64{25, 10} {
		xs, _, _ := np1Group(sep)
		for _, p := range paths {
			b.Run(fmt.Sprintf("kmeanspp/sep=%g/%s", sep, p.name), func(b *testing.B) {
				kmeansMemoBytes = p.budget
				for b.Loop() {
					kmeansPP(xs, n, d, prm.InitLabels, prm.Candidates, initRNG(prm.ClusterInitSeed), nil)
				}
				b.ReportMetric(21.6e9*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
	kmeansMemoBytes = saved
	// A small group (n = 1000), as a 60-s recording of a dense probe
	// gives: each anchor holds few spikes, so laying out its candidates
	// costs as much as scoring them.
	xm, nm, _ := np1GroupN(25, 1000)
	for _, p := range paths {
		b.Run("kmeanspp/n=1000/"+p.name, func(b *testing.B) {
			kmeansMemoBytes = p.budget
			for b.Loop() {
				kmeansPP(xm, nm, d, prm.InitLabels, prm.Candidates, initRNG(prm.ClusterInitSeed), nil)
			}
			b.ReportMetric(3.6e9*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	kmeansMemoBytes = saved
	g := buildGraph(x, n, d, land, prm.ClusterNeighbors)
	c0 := kmeansPP(x, n, d, prm.InitLabels, prm.Candidates, initRNG(prm.ClusterInitSeed), nil)
	b.Run("assign", func(b *testing.B) {
		for b.Loop() {
			c := append([]int32(nil), c0...)
			assign(g, c, prm.InitLabels, prm.Rounds, prm.Lambda)
		}
	})
	c := append([]int32(nil), c0...)
	dl, K := assign(g, c, prm.InitLabels, prm.Rounds, prm.Lambda)
	b.Run("tree+splits", func(b *testing.B) {
		for b.Loop() {
			tree := makeTree(g, c, dl, K)
			sp := splitter{x: x, n: n, d: d, c: c, prm: &prm}
			finalLabels(tree, K, func(mg merge, leaves [][]int) bool { return sp.keep(mg, leaves, K) })
		}
	})
}

// BenchmarkSampleWeighted times one k-means++ draw of an NP1 group on the
// host (6000 weights, 100 candidates): the CUDA back end draws on the host
// every round for every group.
func BenchmarkSampleWeighted(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	w := make([]float64, 6000)
	for i := range w {
		w[i] = rng.Float64() * 100
	}
	r := initRNG(5)
	for b.Loop() {
		sampleWeighted(r, w, 100, nil, nil)
	}
}
