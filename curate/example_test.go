package curate_test

import (
	"fmt"

	"dspk/curate"
)

// A unit firing every 10 ms with a few spikes 0.5 ms apart is judged on
// its autocorrelogram; a unit of 5 spikes is too small to judge.
func ExampleRefract() {
	var times []int64
	var labels []int32
	for i := range int64(3000) {
		times = append(times, i*300) // every 10 ms at 30 kHz
		labels = append(labels, 0)
		if i%500 == 0 {
			times = append(times, i*300+15) // a violation 0.5 ms later
			labels = append(labels, 0)
		}
	}
	for i := range int64(5) {
		times = append(times, i*1000)
		labels = append(labels, 1)
	}
	p := curate.DefaultParams()
	good, contam := curate.Refract(labels, curate.Seconds(times, p.FS), p)
	fmt.Println(good, contam[1])
	// Output: [true false] 0
}

func ExampleTables() {
	t := curate.Tables([]bool{true, false}, []float64{3.14159, 0}, []float64{21.5, 7.25})
	fmt.Print(string(t["cluster_ContamPct.tsv"]))
	// Output:
	// cluster_id	ContamPct
	// 0	3.1
	// 1	0.0
}
