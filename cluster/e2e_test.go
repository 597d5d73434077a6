package cluster

import (
	"math"
	"math/rand/v2"
	"testing"
)

// synth builds an Input of one unit (one group) on a 4-column probe whose
// spikes come from k Gaussian clusters in NC·P dimensions: cluster means
// at distance sep apart (random directions), unit variance. It returns the
// input and each spike's true cluster.
func synth(rng *rand.Rand, n, k, NC, P int, sep float64) (*Input, []int) {
	C := 16
	in := &Input{NC: NC, P: P, C: C}
	for c := 0; c < C; c++ {
		in.ChanX = append(in.ChanX, float64([]int{43, 11, 59, 27}[c%4]))
		in.ChanY = append(in.ChanY, float64(20*(c/2+1)))
	}
	in.UnitX, in.UnitY = []float64{35}, []float64{100}
	for j := 0; j < NC; j++ {
		in.UnitChans = append(in.UnitChans, int32(j))
	}
	d := NC * P
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
	truth := make([]int, n)
	in.Unit = make([]int32, n)
	in.Features = make([]float32, n*d)
	for i := 0; i < n; i++ {
		c := rng.IntN(k)
		truth[i] = c
		for t := 0; t < d; t++ {
			in.Features[i*d+t] = float32(means[c][t] + rng.NormFloat64())
		}
	}
	return in, truth
}

// TestSmoke runs a small synthetic clustering.
func TestSmoke(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	in, truth := synth(rng, 3000, 4, 5, 3, 12)
	cl, err := NewClusterer(nil, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.Cluster(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("N=%d counts=%v groups=%+v", res.N, res.Counts, res.Groups)
	_ = truth
}
