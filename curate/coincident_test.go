package curate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refCoincidence is Coincidence written out: every spike of a checked
// against every spike of b, for the nearest partner and for each lag.
func refCoincidence(a, b []int64, maxLag, half int64) (int, int64) {
	lag, bestExact := int64(0), -1
	for L := -maxLag; L <= maxLag; L++ {
		e := 0
		for _, x := range a {
			nearest, found := int64(0), false
			for _, y := range b {
				if d := y - x; abs64(d) <= maxLag+half && (!found || abs64(d) < abs64(nearest)) {
					nearest, found = d, true
				}
			}
			if found && nearest == L {
				e++
			}
		}
		if e > bestExact || e == bestExact && abs64(L) < abs64(lag) {
			lag, bestExact = L, e
		}
	}
	c := 0
	for _, x := range a {
		for _, y := range b {
			if d := y - x; d >= lag-half && d <= lag+half {
				c++
				break
			}
		}
	}
	return c, lag
}

// TestCoincidence checks Coincidence against refCoincidence on random
// trains of odd sizes: independent ones, copies at a lag with jitter and
// missing spikes, and empty ones.
func TestCoincidence(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for trial := range 200 {
		na, nb := rng.IntN(40), rng.IntN(40)
		dur := int64(1 + rng.IntN(3000))
		a := make([]int64, na)
		for i := range a {
			a[i] = rng.Int64N(dur)
		}
		var b []int64
		if trial%2 == 0 {
			lag := rng.Int64N(21) - 10
			for _, x := range a {
				if rng.Float64() < 0.8 {
					b = append(b, x+lag+rng.Int64N(3)-1)
				}
			}
		}
		for range nb {
			b = append(b, rng.Int64N(dur))
		}
		slices.Sort(a)
		slices.Sort(b)
		maxLag, half := rng.Int64N(15), rng.Int64N(5)
		c, l := Coincidence(a, b, maxLag, half)
		rc, rl := refCoincidence(a, b, maxLag, half)
		if c != rc || l != rl {
			t.Fatalf("trial %d (%d and %d spikes, lags ±%d, half %d): %d at %d, reference %d at %d", trial, na, len(b), maxLag, half, c, l, rc, rl)
		}
	}
}

// TestMergeCoincident is the case the coincident rule is for: one neuron
// seen on two templates of disjoint channels 60 µm apart (B, the weaker,
// holds copies of 80 % of A's spikes 5 samples later and a few of its
// own), beside a unit on B's channels that fires on its own and holds
// copies of 40 % of A's spikes 4 samples earlier, and a unit 1 mm away
// that copies A's train. B joins A without its copies; the neighbour
// loses its copies and stays; the far unit stays whole; without the rule
// nothing changes.
func TestMergeCoincident(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	C, P, nt, NC := 6, 5, 21, 2
	wpca := orthoBasis(rng, P, nt)
	ch := &Channels{X: make([]float64, C), Y: []float64{0, 20, 40, 60, 80, 1000}}
	on := [][]int{{0, 1}, {3, 4}, {4}, {5}} // A, B, a neighbour of B, a far unit
	u := &Units{N: 4, C: C, P: P, W: make([]float32, 4*C*P)}
	for k, cs := range on {
		for i, c := range cs {
			for p := range P {
				g := 1 + 0.3*float64(k) - 0.4*float64(i)
				if k == 0 {
					g *= 2 // A is the strongest
				}
				u.W[(k*C+c)*P+p] = float32(g * (1 + 0.1*float64(p)))
			}
		}
		ch.Chans = append(ch.Chans, []int32{int32(cs[0]), int32(cs[len(cs)-1])})
	}
	trainA := refractoryTrain(rng, 8, 60, 60)
	var trainB []int64
	for _, x := range trainA {
		if rng.Float64() < 0.8 {
			trainB = append(trainB, x+5)
		}
	}
	own := refractoryTrain(rng, 0.5, 60, 60)
	trainB = append(trainB, own...)
	ownN := refractoryTrain(rng, 6, 60, 60)
	trainN := slices.Clone(ownN)
	for _, x := range trainA {
		if rng.Float64() < 0.4 {
			trainN = append(trainN, x-4)
		}
	}
	build := func() *Spikes {
		s := &Spikes{NC: NC, P: P}
		add := func(k int, ts []int64) {
			for _, x := range ts {
				s.Time = append(s.Time, x)
				s.Template = append(s.Template, int32(k))
				s.Cluster = append(s.Cluster, int32(k))
				for _, c := range ch.Chans[k] {
					s.Features = append(s.Features, u.W[(k*C+int(c))*P:(k*C+int(c)+1)*P]...)
				}
			}
		}
		add(0, trainA)
		add(1, trainB)
		add(2, trainN)
		add(3, trainA)
		s.SortByTime()
		return s
	}
	bs := NewBasis(wpca, P, nt)
	prm := DefaultParams()
	prm.Interleaved, prm.SameWaveform = 0, 0
	off := prm
	off.Coincident = 0
	if r := Merge(build(), u, bs, ch, off); r.Units.N != 4 || len(r.Merges) != 0 || r.Copies != nil {
		t.Fatalf("without the rule: %d units, merges %+v", r.Units.N, r.Merges)
	}
	if r := Merge(build(), u, bs, nil, prm); r.Units.N != 4 {
		t.Fatalf("without positions: %d units, merges %+v", r.Units.N, r.Merges)
	}
	res := Run(build(), u, bs, ch, prm, false)
	m := res.Merges
	if res.Units.N != 3 || len(m) != 1 || !m[0].Coincident || m[0].Into != 0 || m[0].From != 1 || m[0].Shift != -5 {
		t.Fatalf("units %d, merges %+v", res.Units.N, m)
	}
	if f := m[0].Similarity; math.Abs(f-float64(len(trainB)-len(own))/float64(len(trainB))) > 0.02 {
		t.Errorf("coincident fraction %.3f; want about %.3f", f, float64(len(trainB)-len(own))/float64(len(trainB)))
	}
	// The merged unit: every spike of A, and B's own moved by 5 samples;
	// the neighbour (now unit 1): its own spikes; the far unit (2): A's.
	trains := make([][]int64, 3)
	for i, c := range res.Spikes.Cluster {
		trains[c] = append(trains[c], res.Spikes.Time[i])
	}
	want := slices.Clone(trainA)
	for _, x := range own {
		want = append(want, x-5)
	}
	slices.Sort(want)
	if !slices.Equal(trains[0], want) {
		t.Errorf("merged unit has %d spikes; want %d (A's %d and B's own %d)", len(trains[0]), len(want), len(trainA), len(own))
	}
	// Of its own spikes, those with one of the merged unit's 4 ± 3
	// samples later are copies by chance.
	var wantN []int64
	for _, y := range ownN {
		i, _ := slices.BinarySearch(want, y+1)
		if !(i < len(want) && want[i] <= y+7) {
			wantN = append(wantN, y)
		}
	}
	if !slices.Equal(trains[1], wantN) || len(ownN)-len(wantN) > 5 {
		t.Errorf("the neighbour kept %d spikes; want %d of its own %d", len(trains[1]), len(wantN), len(ownN))
	}
	if !slices.Equal(trains[2], trainA) {
		t.Errorf("the far unit has %d spikes; want A's %d", len(trains[2]), len(trainA))
	}
	if n := len(res.Kept); n != len(trainA)+len(trainB)+len(trainN)+len(trainA) {
		t.Errorf("Kept covers %d spikes", n)
	}
	// Its template is A's on A's channels and non-zero on B's.
	W := res.Units.W[:C*P]
	for _, c := range []int{0, 1} {
		if !slices.Equal(W[c*P:(c+1)*P], u.W[c*P:(c+1)*P]) {
			t.Errorf("channel %d: %v, want A's %v", c, W[c*P:(c+1)*P], u.W[c*P:(c+1)*P])
		}
	}
	for _, c := range []int{3, 4} {
		if !slices.ContainsFunc(W[c*P:(c+1)*P], func(v float32) bool { return v != 0 }) {
			t.Errorf("channel %d of the merged template is zero", c)
		}
	}
}

// TestDropSparse: a unit of 5 spikes in 60 s (under 0.1 Hz) is dropped
// after the merges, its spikes not kept and the units after it
// renumbered; -min-rate 0 keeps it.
func TestDropSparse(t *testing.T) {
	rng := rand.New(rand.NewPCG(65, 66))
	C, P, nt, NC := 3, 4, 21, 1
	wpca := orthoBasis(rng, P, nt)
	ch := &Channels{X: make([]float64, C), Y: []float64{0, 500, 1000}}
	u := &Units{N: 3, C: C, P: P, W: make([]float32, 3*C*P)}
	for k := range 3 {
		for p := range P {
			u.W[(k*C+k)*P+p] = float32(1 + k + p)
		}
		ch.Chans = append(ch.Chans, []int32{int32(k)})
	}
	trains := [][]int64{refractoryTrain(rng, 5, 60, 60), {30000, 300000, 600000, 900000, 1200000}, refractoryTrain(rng, 3, 60, 60)}
	build := func() *Spikes {
		s := &Spikes{NC: NC, P: P}
		for k, tr := range trains {
			for _, x := range tr {
				s.Time = append(s.Time, x)
				s.Template = append(s.Template, int32(k))
				s.Cluster = append(s.Cluster, int32(k))
				s.Features = append(s.Features, u.W[(k*C+k)*P:(k*C+k+1)*P]...)
			}
		}
		s.SortByTime()
		return s
	}
	bs := NewBasis(wpca, P, nt)
	prm := DefaultParams()
	res := Run(build(), u, bs, ch, prm, false)
	if res.Units.N != 2 || res.Sparse != 1 || len(res.Good) != 2 {
		t.Fatalf("units %d, dropped %d, labels %d; want 2, 1, 2", res.Units.N, res.Sparse, len(res.Good))
	}
	counts := make([]int, 2)
	for _, c := range res.Spikes.Cluster {
		counts[c]++
	}
	if counts[0] != len(trains[0]) || counts[1] != len(trains[2]) {
		t.Errorf("unit spikes %v; want %d and %d", counts, len(trains[0]), len(trains[2]))
	}
	kept := 0
	for _, k := range res.Kept {
		if k {
			kept++
		}
	}
	if kept != res.Spikes.Len() || len(res.Kept) != len(trains[0])+len(trains[1])+len(trains[2]) {
		t.Errorf("Kept: %d of %d true, %d spikes", kept, len(res.Kept), res.Spikes.Len())
	}
	if !slices.Equal(res.Units.W[C*P:], u.W[2*C*P:]) {
		t.Error("the third unit's template did not become the second's")
	}
	prm.MinRate = 0
	if r := Run(build(), u, bs, ch, prm, false); r.Units.N != 3 || r.Sparse != 0 {
		t.Errorf("-min-rate 0: %d units, %d dropped", r.Units.N, r.Sparse)
	}
}
