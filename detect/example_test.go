package detect_test

import (
	"fmt"

	"dspk/detect"
	"dspk/probe"
)

// The template-centre grid of a Neuropixels 1.0 probe has Kilosort4's
// 1532 centres: 4 x positions × 383 depths. Centre 0 is (11, 20) µm; its
// nearest sites by squared distance are 1 (0), 3 (656), 0 (1024),
// 5 (1600), 4 (2624), 2 (2704), 7 (3856), 6 (5904), 9 (6400), 8 (7424).
func ExampleNewGrid() {
	g, err := detect.NewGrid(probe.NP1(), detect.DefaultParams())
	if err != nil {
		panic(err)
	}
	fmt.Println(g.F(), g.Xup, len(g.Yup), g.Yup[0], g.Yup[len(g.Yup)-1])
	fmt.Println("nearest channels of centre 0:", g.IC[:g.NC])
	// Output:
	// 1532 [11 27 43 59] 383 20 3840
	// nearest channels of centre 0: [1 3 0 5 4 2 7 6 9 8]
}
