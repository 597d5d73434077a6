package probe_test

import (
	"fmt"

	"dspk/probe"
)

func ExampleLoad() {
	p, err := probe.Load("np1")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Summary())
	// Output: 384 sites on 1 shank, x 11–59 µm, y 20–3840 µm, 385 channels in file
}

func ExampleNearest() {
	nn := probe.Nearest(probe.NP1(), 4)
	fmt.Println(nn[0], nn[383])
	// Output: [0 2 3 1] [383 380 381 382]
}

func ExampleParseKilosortJSON() {
	p, err := probe.ParseKilosortJSON([]byte(`{"chanMap": [0, 1], "xc": [0, 32], "yc": [0, 0], "kcoords": [0, 0], "n_chan": 3}`), "chanMap.json")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Summary())
	// Output: 2 sites on 1 shank, x 0–32 µm, y 0–0 µm, 3 channels in file
}
