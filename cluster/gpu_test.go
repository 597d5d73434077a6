package cluster

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/compute"
	"dspk/internal/gputest"
)

// GPU tests: the CUDA back end against the CPU back end, bit for bit
// (labels, counts, Wall, group table). They skip without a GPU.

func clusterOn(t testing.TB, dev *compute.Device, in *Input, prm Params) *Result {
	t.Helper()
	cl, err := NewClusterer(dev, prm)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if dev != nil && cl.Backend() != "cuda" {
		t.Fatalf("back end %q on %v", cl.Backend(), dev)
	}
	res, err := cl.Cluster(in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func sameResult(t *testing.T, what string, got, want *Result) {
	t.Helper()
	if got.N != want.N || !slices.Equal(got.Counts, want.Counts) || !slices.Equal(got.Groups, want.Groups) {
		t.Fatalf("%s: %d clusters %v, CPU %d %v", what, got.N, got.Counts, want.N, want.Counts)
	}
	for i := range want.Labels {
		if got.Labels[i] != want.Labels[i] {
			t.Fatalf("%s: spike %d label %d, CPU %d", what, i, got.Labels[i], want.Labels[i])
		}
	}
	for i := range want.Wall {
		if math.Float32bits(got.Wall[i]) != math.Float32bits(want.Wall[i]) {
			t.Fatalf("%s: Wall[%d] = %v, CPU %v", what, i, got.Wall[i], want.Wall[i])
		}
	}
}

// randomInput returns an input of several units on the 16-channel probe,
// of the sizes given, each with 1–6 clusters sep apart.
func randomInput(rng *rand.Rand, sizes []int, sep float64) *Input {
	in := &Input{NC: 4, P: 3}
	probe16(in)
	var truth []int
	for u, n := range sizes {
		first := (u * 4) % (in.C - in.NC + 1)
		addUnit(rng, in, 35, float64(20+40*u), first, n, gaussMeans(rng, 1+rng.IntN(6), in.NC*in.P, sep), 0, &truth)
	}
	return in
}

// TestGPUClusterMatchesCPU compares the back ends on random problems with
// odd group sizes (below and just above the minimum, one spike), and
// settings that change every kernel's path (λ = 0, k = 1, few rounds,
// fewer candidates than spikes with weight).
func TestGPUClusterMatchesCPU(t *testing.T) {
	dev := gputest.Device(t)
	rng := rand.New(rand.NewPCG(testSeed(t), 41))
	type tc struct {
		sizes []int
		sep   float64
		mod   func(*Params)
	}
	for i, c := range []tc{
		{[]int{1300, 2201, 999}, 16, nil},
		{[]int{1000, 1, 4100}, 10, nil},
		{[]int{1777, 1501}, 25, func(p *Params) { p.Lambda = 0 }},
		{[]int{1203, 3011}, 12, func(p *Params) { p.ClusterNeighbors = 1; p.Rounds = 7 }},
		{[]int{2500}, 14, func(p *Params) { p.Candidates = 7; p.InitLabels = 33; p.ClusterDownsampling = 3 }},
		{[]int{1100, 1200, 1300}, 20, func(p *Params) { p.MinGroup = 50; p.MaxClusterSubset = 40 }},
	} {
		in := randomInput(rng, c.sizes, c.sep)
		prm := DefaultParams()
		if c.mod != nil {
			c.mod(&prm)
		}
		want := clusterOn(t, nil, in, prm)
		got := clusterOn(t, dev, in, prm)
		sameResult(t, "case "+string(rune('0'+i)), got, want)
	}
}

// np1Input returns an NP1-sized 'spikes' problem: 96 units on a 384-channel
// two-column probe, one per group, 6000 spikes each (d = 15 × 6 = 90) from
// 12 unit-variance clusters 25 apart of unequal sizes.
func np1Input() *Input {
	rng := rand.New(rand.NewPCG(7, 7))
	in := &Input{NC: 15, P: 6, C: 384}
	for c := 0; c < in.C; c++ {
		in.ChanX = append(in.ChanX, float64([]int{43, 11, 59, 27}[c%4]))
		in.ChanY = append(in.ChanY, float64(20*(c/2+1)))
	}
	const n, d = 6000, 90
	for u := 0; u < 96; u++ {
		in.UnitX, in.UnitY = append(in.UnitX, 35), append(in.UnitY, float64(20+40*u))
		first := min(4*u, in.C-in.NC)
		for j := 0; j < in.NC; j++ {
			in.UnitChans = append(in.UnitChans, int32(first+j))
		}
	}
	means := make([][][]float64, 96)
	for u := range means {
		means[u] = gaussMeans(rng, 12, d, 25)
	}
	// Spikes in time order, units interleaved.
	for i := 0; i < 96*n; i++ {
		u := rng.IntN(96)
		c := min(int(12*rng.Float64()*rng.Float64()), 11)
		in.Unit = append(in.Unit, int32(u))
		for t := 0; t < d; t++ {
			in.Features = append(in.Features, float32(means[u][c][t]+rng.NormFloat64()))
		}
	}
	return in
}

// TestGPUClusterNP1MatchesCPU compares the back ends on the NP1-sized
// problem (about 10 s of CPU time per core-minute… the CPU back end takes
// ≈ 1 s per group per core).
func TestGPUClusterNP1MatchesCPU(t *testing.T) {
	dev := gputest.Device(t)
	if testing.Short() {
		t.Skip("NP1-sized comparison skipped in -short")
	}
	in := np1Input()
	want := clusterOn(t, nil, in, DefaultParams())
	got := clusterOn(t, dev, in, DefaultParams())
	if len(got.Groups) != 96 {
		t.Errorf("%d groups, want 96", len(got.Groups))
	}
	sameResult(t, "NP1", got, want)
	t.Logf("%d groups, %d clusters", len(got.Groups), got.N)
}

// TestGPUClusterDeterministic runs the CUDA back end twice.
func TestGPUClusterDeterministic(t *testing.T) {
	dev := gputest.Device(t)
	in := randomInput(rand.New(rand.NewPCG(3, 3)), []int{2000, 1500, 3000}, 12)
	a := clusterOn(t, dev, in, DefaultParams())
	b := clusterOn(t, dev, in, DefaultParams())
	sameResult(t, "second run", b, a)
}

// BenchmarkGPUCluster times the CUDA back end on the NP1-sized problem,
// whole and by device stage. Floors (kilosort4-sort.md §10): k-means++
// 200 × 100 × 2·n·d summed over groups (2.2 TFLOP for Kilosort4's NP1
// first clustering; here float64, H200 FP64 ≈ 34 TFLOP/s without tensor
// cores), kNN 2·d·Σ n_g·s_g (34 GFLOP there); bytes: the float64
// features read once per k-means++ round (200 × 8·Σ n_g·d), and the
// features uploaded once.
func BenchmarkGPUCluster(b *testing.B) {
	dev := gputest.Device(b)
	in := np1Input()
	prm := DefaultParams()
	cl, err := NewClusterer(dev, prm)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	var res *Result
	for b.Loop() {
		if res, err = cl.Cluster(in); err != nil {
			b.Fatal(err)
		}
	}
	var kmFlop, knnFlop, bytes float64
	for _, g := range res.Groups {
		n, d := float64(g.Spikes), float64(g.Channels*in.P)
		if g.Spikes < prm.MinGroup {
			continue
		}
		s := float64(len(landmarks(g.Spikes, prm.ClusterDownsampling, prm.MaxClusterSubset)))
		kmFlop += float64(prm.InitLabels*prm.Candidates) * 2 * n * d
		knnFlop += 2 * d * n * s
		bytes += float64(prm.InitLabels) * 8 * n * d
	}
	st := cl.gpu.times
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(kmFlop/1e12, "kmeans-TFLOP")
	b.ReportMetric(knnFlop/1e9, "knn-GFLOP")
	b.ReportMetric(max(kmFlop/34e12, bytes/4.8e12), "kmeans-floor-s")
	b.ReportMetric(kmFlop/st.kmeans.Seconds()/1e12, "kmeans-TFLOP/s")
	b.ReportMetric(st.upload.Seconds(), "upload-s")
	b.ReportMetric(st.knn.Seconds(), "knn-s")
	b.ReportMetric(st.kmeans.Seconds(), "kmeans-s")
	b.ReportMetric(st.assign.Seconds(), "assign-s")
	b.ReportMetric(sec-st.upload.Seconds()-st.knn.Seconds()-st.kmeans.Seconds()-st.assign.Seconds(), "host-s")
	b.ReportMetric(float64(st.rounds), "rounds")
}
