package preprocess

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/compute"
	"dspk/linalg"
)

// runWindows preprocesses the raw windows srcs through pp's window path
// (whitening w set once) and returns the results, each from a window
// whose working array was NaN-poisoned (on the host and the device) first.
func runWindows(t *testing.T, dev *compute.Device, pp *Preprocessor, w *linalg.Whitening, srcs [][]int16) [][]float32 {
	t.Helper()
	win, err := dev.NewWindow(pp.Channels(), pp.Len(), pp.FileChannels())
	if err != nil {
		t.Fatal(err)
	}
	defer win.Close()
	if err := pp.SetWhitening(w); err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	for _, src := range srcs {
		if x, err := win.Data(); err == nil {
			for i := range x {
				x[i] = float32(math.NaN())
			}
		}
		if m := win.DataMem(); m.Bytes > 0 {
			if err := dev.Do(func(c *compute.Ctx) error { return c.Memset8(m.Ptr, 0xff, m.Bytes) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := win.Load(src); err != nil {
			t.Fatal(err)
		}
		// A host round trip between windows must not change the
		// whitening the window path applies.
		if err := pp.Run(make([]float32, pp.Channels()*pp.Len()), src, nil); err != nil {
			t.Fatal(err)
		}
		if err := pp.Window(win); err != nil {
			t.Fatal(err)
		}
		x, err := win.Data()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, slices.Clone(x))
	}
	return out
}

// testWindows returns three random windows for p and a whitening.
func testWindows(p Params) ([][]int16, *linalg.Whitening) {
	rng := rand.New(rand.NewPCG(15, 1))
	var srcs [][]int16
	for range 3 {
		srcs = append(srcs, randWindow(rng, p.T(), p.NChanFile, false))
	}
	return srcs, randWhitening(rng, len(p.ChanMap), min(5, len(p.ChanMap)))
}

// TestPreprocessorCPU checks that the window path on the CPU gives the CPU
// back end's results bit for bit, with the whitening set once for several
// windows, and that New(nil, …) is the CPU.
func TestPreprocessorCPU(t *testing.T) {
	dev, _, err := compute.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	p := small([]int{4, 0, 2, 1, 6}, 7, 333, 20)
	srcs, w := testWindows(p)
	for _, d := range []*compute.Device{dev, nil} {
		pp, err := New(d, p)
		if err != nil {
			t.Fatal(err)
		}
		if d == nil {
			d = dev
		}
		got := runWindows(t, d, pp, w, srcs)
		ref, _ := newCPU(p)
		for i, src := range srcs {
			want := make([]float32, len(got[i]))
			ref.Run(want, src, w)
			if !slices.Equal(got[i], want) {
				t.Errorf("window %d differs from the CPU back end", i)
			}
		}
		if err := pp.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestPreprocessorWindowPanics checks the shape and device checks.
func TestPreprocessorWindowPanics(t *testing.T) {
	dev, _, _ := compute.Open("cpu")
	p := small([]int{0, 1}, 3, 100, 10)
	pp, err := New(dev, p)
	if err != nil {
		t.Fatal(err)
	}
	win, _ := dev.NewWindow(2, p.T()+1, 3)
	defer func() {
		if recover() == nil {
			t.Error("Window of the wrong length did not panic")
		}
	}()
	pp.Window(win)
}
