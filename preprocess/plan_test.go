package preprocess

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"dspk/kilosort"
)

// TestPlan checks that a Preprocessor built from a plan preprocesses a
// window as New's does, that a plan builds one Preprocessor, and that
// Prepare refuses what New refuses without a device.
func TestPlan(t *testing.T) {
	ks := kilosort.Defaults()
	ks.BatchSize, ks.NT = 3001, 61
	p := Params{Settings: ks, ChanMap: []int{4, 0, 2, 1, 6}, NChanFile: 7, HighpassOrder: kilosort.HighpassOrder}
	rng := rand.New(rand.NewPCG(5, 6))
	src := make([]int16, p.T()*p.NChanFile)
	for i := range src {
		src[i] = int16(rng.IntN(2001) - 1000)
	}
	a, err := New(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Prepare(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pl.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	x, y := make([]float32, 5*p.T()), make([]float32, 5*p.T())
	if err := a.Run(x, src, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Run(y, src, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, y) {
		t.Error("the plan's Preprocessor differs from New's")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a second Plan.New did not panic")
			}
		}()
		pl.New(nil)
	}()
	bad := p
	bad.ChanMap = []int{0, 7}
	if _, err := Prepare(bad); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("Prepare of a channel map outside the file: %v", err)
	}
}
