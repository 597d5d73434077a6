package preprocess_test

import (
	"fmt"

	"dspk/compute"
	"dspk/preprocess"
)

func ExampleLowerMedian() {
	// torch.median semantics: the lower of the two middle values.
	fmt.Println(preprocess.LowerMedian([]float32{4, 1, 3, 2}))
	fmt.Println(preprocess.LowerMedian([]float32{5, 1, 3}))
	// Output:
	// 2
	// 3
}

func ExampleNew() {
	p := preprocess.DefaultParams()
	p.NChanFile = 385 // Neuropixels 1.0 SpikeGLX file: 384 sites and a sync channel
	p.ChanMap = make([]int, 384)
	for i := range p.ChanMap {
		p.ChanMap[i] = i
	}
	dev, _, err := compute.Open("cpu") // or "auto", "cuda:0"
	if err != nil {
		fmt.Println(err)
		return
	}
	pp, err := preprocess.New(dev, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pp.Close()
	fmt.Println("channels", pp.Channels(), "samples", pp.Len())
	fmt.Println("periodic context", pp.Filter().Context())
	// A pass sets its whitening once, pp.SetWhitening(w), and runs each
	// window where it lives: win.Load(batch.Data); pp.Window(win), with
	// win from dev.NewWindow(384, 60122, 385).
	// Output:
	// channels 384 samples 60122
	// periodic context 1012
}

func ExampleButterHighpass() {
	// Kilosort4's filter: third order, 300 Hz, 30 kHz.
	b, a := preprocess.ButterHighpass(3, 300, 30000)
	fmt.Printf("b = %.8f\na = %.8f\n", b, a)
	// Output:
	// b = [0.93909165 -2.81727496 2.81727496 -0.93909165]
	// a = [1.00000000 -2.87435689 2.75648320 -0.88189313]
}
