package cluster_test

import (
	"fmt"
	"math/rand/v2"

	"dspk/cluster"
)

// Example clusters the spikes of one template centre whose features come
// from two well-separated clouds.
func Example() {
	rng := rand.New(rand.NewPCG(1, 1))
	var cloud []int
	in := &cluster.Input{NC: 2, P: 3, C: 4,
		ChanX: []float64{0, 32, 0, 32}, ChanY: []float64{20, 20, 40, 40},
		UnitX: []float64{16}, UnitY: []float64{30}, UnitChans: []int32{0, 1}}
	for i := 0; i < 2000; i++ {
		in.Unit = append(in.Unit, 0)
		far := rng.IntN(4) == 0 // a quarter of the spikes
		cloud = append(cloud, map[bool]int{false: 0, true: 1}[far])
		for t := 0; t < in.NC*in.P; t++ {
			v := rng.NormFloat64()
			if far && t == 0 {
				v += 20
			}
			in.Features = append(in.Features, float32(v))
		}
	}
	cl, err := cluster.NewClusterer(nil, cluster.DefaultParams())
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	res, err := cl.Cluster(in)
	if err != nil {
		panic(err)
	}
	// Spikes whose cluster differs from their cloud's (clusters in
	// order of the clouds' first spikes).
	first := map[int]int32{}
	wrong := 0
	for i, l := range res.Labels {
		if f, ok := first[cloud[i]]; !ok {
			first[cloud[i]] = l
		} else if f != l {
			wrong++
		}
	}
	fmt.Println(res.N, "clusters,", wrong, "spikes apart from their cloud")
	// Output: 2 clusters, 0 spikes apart from their cloud
}
