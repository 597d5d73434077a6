package linalg

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"dspk/kilosort"
)

func TestLocalZCAGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const C, n = 40, 4000
	x, y := np1(C)
	X := gaussian(rng, expCov(x, y, 10, 40), C, n)
	cc := secondMomentOf(X, C, n)
	// One group: LocalZCA's result.
	one := make([]int, C)
	a, err := LocalZCA(cc, C, x, y, 8, kilosort.WhiteningEps)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LocalZCAGroups(cc, C, x, y, one, 8, kilosort.WhiteningEps)
	if err != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("one group differs: %v", err)
	}
	// Groups of 3, 5 and 32 channels (interleaved ids): each row uses its
	// group's channels only and equals LocalZCA of the group alone.
	group := make([]int, C)
	for c := range group {
		switch {
		case c < 3:
			group[c] = 7
		case c < 8:
			group[c] = 2
		default:
			group[c] = 4
		}
	}
	w, err := LocalZCAGroups(cc, C, x, y, group, 8, kilosort.WhiteningEps)
	if err != nil {
		t.Fatal(err)
	}
	if w.K != 8 {
		t.Fatalf("K = %d", w.K)
	}
	d := w.Dense()
	for _, g := range []int{7, 2, 4} {
		var m []int
		for c := range C {
			if group[c] == g {
				m = append(m, c)
			}
		}
		k := len(m)
		sub := make([]float64, k*k)
		sx, sy := make([]float64, k), make([]float64, k)
		for i, ci := range m {
			sx[i], sy[i] = x[ci], y[ci]
			for j, cj := range m {
				sub[i*k+j] = cc[ci*C+cj]
			}
		}
		ref, err := LocalZCA(sub, k, sx, sy, 8, kilosort.WhiteningEps)
		if err != nil {
			t.Fatal(err)
		}
		rd := ref.Dense()
		for i, ci := range m {
			for c := range C {
				want := 0.0
				if group[c] == g {
					for j, cj := range m {
						if cj == c {
							want = rd[i*k+j]
						}
					}
				}
				if got := d[ci*C+c]; math.Abs(got-want) > 1e-7*math.Max(1, math.Abs(want)) || math.IsNaN(got) {
					t.Fatalf("group %d: W[%d, %d] = %g, want %g", g, ci, c, got, want)
				}
			}
		}
	}
}
