package cluster

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// gaussMeans returns k random points of dimension d, pairwise about sep
// apart (random directions of norm sep/√2).
func gaussMeans(rng *rand.Rand, k, d int, sep float64) [][]float64 {
	means := make([][]float64, k)
	for c := range means {
		means[c] = make([]float64, d)
		nrm := 0.0
		for t := range means[c] {
			means[c][t] = rng.NormFloat64()
			nrm += means[c][t] * means[c][t]
		}
		for t := range means[c] {
			means[c][t] *= sep / math.Sqrt(nrm) / math.Sqrt2
		}
	}
	return means
}

// probe16 returns a 16-channel two-column probe (20 µm rows).
func probe16(in *Input) {
	in.C = 16
	for c := 0; c < in.C; c++ {
		in.ChanX = append(in.ChanX, float64([]int{43, 11, 59, 27}[c%4]))
		in.ChanY = append(in.ChanY, float64(20*(c/2+1)))
	}
}

// addUnit adds a unit at (x, y) on channels first…first+NC−1 and n spikes
// from Gaussian clusters of unit variance around means; truth gets each
// spike's cluster (offset by base).
func addUnit(rng *rand.Rand, in *Input, x, y float64, first int, n int, means [][]float64, base int, truth *[]int) {
	u := int32(len(in.UnitX))
	in.UnitX, in.UnitY = append(in.UnitX, x), append(in.UnitY, y)
	for j := 0; j < in.NC; j++ {
		in.UnitChans = append(in.UnitChans, int32(first+j))
	}
	d := in.NC * in.P
	for i := 0; i < n; i++ {
		c := rng.IntN(len(means))
		*truth = append(*truth, base+c)
		in.Unit = append(in.Unit, u)
		for t := 0; t < d; t++ {
			in.Features = append(in.Features, float32(means[c][t]+rng.NormFloat64()))
		}
	}
}

// purity returns, over found clusters, the spike-weighted share of each
// cluster's majority truth, and over truths the share of each truth's
// largest found cluster.
func purity(labels []int32, truth []int) (prec, rec float64) {
	type pair struct{ f, t int }
	joint := map[pair]int{}
	nf, nt := map[int]int{}, map[int]int{}
	for i, l := range labels {
		joint[pair{int(l), truth[i]}]++
		nf[int(l)]++
		nt[truth[i]]++
	}
	bestF, bestT := map[int]int{}, map[int]int{}
	for p, v := range joint {
		bestF[p.f] = max(bestF[p.f], v)
		bestT[p.t] = max(bestT[p.t], v)
	}
	var sf, st int
	for _, v := range bestF {
		sf += v
	}
	for _, v := range bestT {
		st += v
	}
	return float64(sf) / float64(len(labels)), float64(st) / float64(len(labels))
}

func run(t *testing.T, in *Input, prm Params) *Result {
	t.Helper()
	cl, err := NewClusterer(nil, prm)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	res, err := cl.Cluster(in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestClusterSeparated recovers well-separated Gaussian clusters of one
// group with high purity.
func TestClusterSeparated(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := &Input{NC: 6, P: 3}
	probe16(in)
	var truth []int
	addUnit(rng, in, 35, 60, 0, 3001, gaussMeans(rng, 5, 18, 14), 0, &truth)
	res := run(t, in, DefaultParams())
	prec, rec := purity(res.Labels, truth)
	t.Logf("N %d, counts %v, purity %.4f, completeness %.4f", res.N, res.Counts, prec, rec)
	if res.N < 5 || res.N > 7 || prec < 0.98 || rec < 0.9 {
		t.Errorf("5 separated clusters: found %d, purity %.4f, completeness %.4f", res.N, prec, rec)
	}
}

// TestClusterOneGaussian keeps one Gaussian cluster whole.
func TestClusterOneGaussian(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	in := &Input{NC: 5, P: 4}
	probe16(in)
	var truth []int
	addUnit(rng, in, 35, 60, 0, 2500, gaussMeans(rng, 1, 20, 0), 0, &truth)
	if res := run(t, in, DefaultParams()); res.N != 1 {
		t.Errorf("one Gaussian: %d clusters %v", res.N, res.Counts)
	}
}

// TestClusterGroups clusters three units in three groups (one below the
// group minimum) and checks the numbering, the group table and Wall
// against plain means.
func TestClusterGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	in := &Input{NC: 4, P: 3}
	probe16(in)
	var truth []int
	// Units listed out of depth order: groups follow the grid (y up).
	addUnit(rng, in, 35, 150, 10, 1300, gaussMeans(rng, 1, 12, 0), 10, &truth)
	addUnit(rng, in, 35, 30, 0, 2200, gaussMeans(rng, 2, 12, 16), 0, &truth)
	addUnit(rng, in, 35, 90, 5, 999, gaussMeans(rng, 2, 12, 16), 5, &truth)
	res := run(t, in, DefaultParams())
	if len(res.Groups) != 3 {
		t.Fatalf("%d groups: %+v", len(res.Groups), res.Groups)
	}
	wantSpikes := []int{2200, 999, 1300}
	wantClusters := []int{2, 1, 1}
	first := 0
	for j, g := range res.Groups {
		if g.Spikes != wantSpikes[j] || g.Clusters != wantClusters[j] || g.First != first || g.Channels != 4 || g.Units != 1 {
			t.Errorf("group %d: %+v, want %d spikes, %d clusters from %d", j, g, wantSpikes[j], wantClusters[j], first)
		}
		first += g.Clusters
	}
	if res.N != 4 || len(res.Counts) != 4 {
		t.Fatalf("N %d counts %v", res.N, res.Counts)
	}
	// Labels per group in their range; Wall = plain means.
	C, P, NC := in.C, in.P, in.NC
	sums := make([]float64, res.N*C*P)
	cnt := make([]int, res.N)
	for i, l := range res.Labels {
		g := res.Groups[[]int{2, 0, 1}[in.Unit[i]]]
		if int(l) < g.First || int(l) >= g.First+g.Clusters {
			t.Fatalf("spike %d of unit %d has label %d outside its group %+v", i, in.Unit[i], l, g)
		}
		cnt[l]++
		u := in.Unit[i]
		for j := 0; j < NC; j++ {
			ch := in.UnitChans[int(u)*NC+j]
			for p := 0; p < P; p++ {
				sums[(int(l)*C+int(ch))*P+p] += float64(in.Features[(i*NC+j)*P+p])
			}
		}
	}
	if !slices.Equal(cnt, res.Counts) {
		t.Errorf("counts %v, want %v", res.Counts, cnt)
	}
	for k := 0; k < res.N; k++ {
		for q := 0; q < C*P; q++ {
			want := float32(sums[k*C*P+q] / float64(cnt[k]))
			if got := res.Wall[k*C*P+q]; got != want {
				t.Fatalf("Wall[%d][%d][%d] = %v, want %v", k, q/P, q%P, got, want)
			}
		}
	}
	prec, rec := purity(res.Labels, truth)
	if prec < 0.8 || rec < 0.95 { // the small group's two clusters stay one
		t.Errorf("purity %.3f completeness %.3f", prec, rec)
	}
}

// fourUnits returns an input of four units on the 16-channel probe, each
// of three sub-clusters and about 1 100 spikes.
func fourUnits() *Input {
	rng := rand.New(rand.NewPCG(6, 1))
	in := &Input{NC: 4, P: 2}
	probe16(in)
	var truth []int
	for u := 0; u < 4; u++ {
		addUnit(rng, in, 35, 30+40*float64(u), 2*u, 1100+37*u, gaussMeans(rng, 3, 8, 8), 3*u, &truth)
	}
	return in
}

// TestClusterDeterministic clusters the same input with different worker
// counts and GOMAXPROCS: the same bytes every time.
func TestClusterDeterministic(t *testing.T) {
	in := fourUnits()
	bytesOf := func(r *Result) string {
		b := unsafe.Slice((*byte)(unsafe.Pointer(&r.Labels[0])), 4*len(r.Labels))
		w := unsafe.Slice((*byte)(unsafe.Pointer(&r.Wall[0])), 4*len(r.Wall))
		return string(b) + string(w)
	}
	// Fewer labels and rounds keep the test short; the schedule is what
	// is under test.
	prm := DefaultParams()
	prm.InitLabels, prm.Rounds = 40, 30
	prm.Workers = 1
	ref := bytesOf(run(t, in, prm))
	for _, c := range []struct{ workers, procs int }{{1, 1}, {3, 2}, {0, 1}, {0, 2}, {8, 2}} {
		old := runtime.GOMAXPROCS(c.procs)
		prm.Workers = c.workers
		got := bytesOf(run(t, in, prm))
		runtime.GOMAXPROCS(old)
		if got != ref {
			t.Errorf("workers %d GOMAXPROCS %d: different result", c.workers, c.procs)
		}
	}
	// The k-means++ memo budget decides only which path a group takes:
	// none, room for one group's rows at a time (the others in flight
	// take the pruned path), room for all.
	saved := kmeansMemoBytes
	defer func() { kmeansMemoBytes = saved }()
	prm.Workers = 4
	for _, budget := range []int64{0, 16 << 20, 1 << 30} {
		kmeansMemoBytes = budget
		if got := bytesOf(run(t, in, prm)); got != ref {
			t.Errorf("memo budget %d: different result", budget)
		}
	}
}

// TestClusterInputErrors checks that bad input is refused with a message
// naming the problem.
func TestClusterInputErrors(t *testing.T) {
	good := func() *Input {
		in := &Input{NC: 2, P: 1}
		probe16(in)
		in.UnitX, in.UnitY, in.UnitChans = []float64{35}, []float64{40}, []int32{0, 1}
		in.Unit = []int32{0, 0}
		in.Features = []float32{1, 2, 3, 4}
		return in
	}
	cl, _ := NewClusterer(nil, DefaultParams())
	if _, err := cl.Cluster(good()); err != nil {
		t.Fatalf("good input: %v", err)
	}
	for _, c := range []struct {
		edit func(*Input)
		want string
	}{
		{func(in *Input) { in.Unit[1] = 1 }, "spike 1 has unit 1"},
		{func(in *Input) { in.Features[3] = float32(math.NaN()) }, "spike 1 feature (1, 0) is NaN"},
		{func(in *Input) { in.UnitChans[1] = 16 }, "unit 0 channel 1 is 16"},
		{func(in *Input) { in.UnitChans[1] = 0 }, "unit 0 lists channel 0 twice"},
		{func(in *Input) { in.Unit, in.Features = nil, nil }, "no spikes"},
		{func(in *Input) { in.Features = in.Features[:3] }, "3 feature values"},
		{func(in *Input) { in.UnitY[0] = math.Inf(1) }, "unit 0 position"},
		{func(in *Input) { in.ChanX = in.ChanX[:3] }, "3 channel x"},
	} {
		in := good()
		c.edit(in)
		_, err := cl.Cluster(in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
	bad := DefaultParams()
	bad.ClusterNeighbors = 0
	if _, err := NewClusterer(nil, bad); err == nil || !strings.Contains(err.Error(), "cluster_neighbors") {
		t.Errorf("cluster_neighbors 0: %v", err)
	}
}

// TestClusterTinyGroups clusters very small groups with the group minimum
// lowered to 1 (one spike, one landmark, fewer spikes than candidates or
// neighbours): labels in range, every cluster non-empty.
func TestClusterTinyGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	prm := DefaultParams()
	prm.MinGroup = 1
	prm.InitLabels, prm.Rounds = 20, 10
	for _, n := range []int{1, 2, 3, 21, 41, 99} {
		in := &Input{NC: 2, P: 2}
		probe16(in)
		var truth []int
		addUnit(rng, in, 35, 60, 0, n, gaussMeans(rng, 2, 4, 10), 0, &truth)
		res := run(t, in, prm)
		if res.N < 1 || len(res.Counts) != res.N {
			t.Fatalf("n %d: N %d counts %v", n, res.N, res.Counts)
		}
		for k, c := range res.Counts {
			if c == 0 {
				t.Errorf("n %d: cluster %d empty", n, k)
			}
		}
		for i, l := range res.Labels {
			if l < 0 || int(l) >= res.N {
				t.Fatalf("n %d: spike %d label %d", n, i, l)
			}
		}
	}
}

// TestClusterSharedGroup puts two units with overlapping channel lists in
// one group: the features go on the union of their channels (zeros where
// a unit has none), the units' spikes separate, and each cluster's Wall is
// zero on the channels its unit lacks.
func TestClusterSharedGroup(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	in := &Input{NC: 4, P: 2}
	probe16(in)
	var truth []int
	addUnit(rng, in, 35, 60, 0, 1200, gaussMeans(rng, 1, 8, 0), 0, &truth)
	addUnit(rng, in, 40, 65, 2, 900, gaussMeans(rng, 1, 8, 0), 1, &truth)
	for i := range in.Features { // lift unit 1's spikes away from unit 0's
		if in.Unit[i/(in.NC*in.P)] == 1 && i%(in.NC*in.P) == 0 {
			in.Features[i] += 15
		}
	}
	res := run(t, in, DefaultParams())
	if len(res.Groups) != 1 || res.Groups[0].Units != 2 || res.Groups[0].Channels != 6 {
		t.Fatalf("groups %+v, want one of 2 units on 6 channels", res.Groups)
	}
	if prec, rec := purity(res.Labels, truth); res.N != 2 || prec < 0.99 || rec < 0.99 {
		t.Fatalf("%d clusters, purity %.3f completeness %.3f", res.N, prec, rec)
	}
	C, P := in.C, in.P
	for k := 0; k < res.N; k++ {
		unit := in.Unit[slices.Index(res.Labels, int32(k))]
		for ch := 0; ch < C; ch++ {
			on := slices.Contains(in.UnitChans[int(unit)*in.NC:int(unit+1)*in.NC], int32(ch))
			for p := 0; p < P; p++ {
				if v := res.Wall[(k*C+ch)*P+p]; (v != 0) != on {
					t.Errorf("cluster %d (unit %d) Wall on channel %d = %v", k, unit, ch, v)
				}
			}
		}
	}
}

// TestClusterContextStops cancels a clustering from inside its k-means++
// rounds (through the test hook) and before it starts: ClusterContext
// returns the context's error and no result, and the rounds stop soon
// after the cancellation instead of running to the end.
func TestClusterContextStops(t *testing.T) {
	in := fourUnits()
	prm := DefaultParams()
	prm.Workers = 2
	var mu sync.Mutex
	rounds, cancelAt := 0, -1
	var cancel context.CancelFunc
	kmeansTrace = func(int, []float64) {
		mu.Lock()
		defer mu.Unlock()
		rounds++
		if rounds == cancelAt {
			cancel()
		}
	}
	defer func() { kmeansTrace = nil }()
	run(t, in, prm)
	total := rounds
	if total < 400 {
		t.Fatalf("only %d k-means++ rounds in the whole clustering", total)
	}
	cl, err := NewClusterer(nil, prm)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, at := range []int{1, 10, total / 2} {
		var ctx context.Context
		ctx, cancel = context.WithCancel(context.Background())
		rounds, cancelAt = 0, at
		res, err := cl.ClusterContext(ctx, in)
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Fatalf("cancelled at round %d: result %v, error %v", at, res != nil, err)
		}
		// Each worker stops at its next round.
		if rounds > at+prm.Workers {
			t.Errorf("cancelled at round %d of %d: %d rounds ran", at, total, rounds)
		}
		cancel()
	}
	ctx, stop := context.WithCancel(context.Background())
	stop()
	rounds, cancelAt = 0, -1
	if res, err := cl.ClusterContext(ctx, in); !errors.Is(err, context.Canceled) || res != nil || rounds > 0 {
		t.Fatalf("cancelled before: result %v, error %v, %d rounds", res != nil, err, rounds)
	}
}
