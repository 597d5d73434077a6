package detect

import (
	"math"
	"reflect"
	"testing"

	"dspk/probe"
)

// stereoProbe returns n stereotrodes 250 µm apart (wires 20 µm apart at
// one depth), one group each; the last group has a third wire, so groups
// differ in size.
func stereoProbe(n int) *probe.Probe {
	p := &probe.Probe{Name: "stereo"}
	add := func(x float64, g int) {
		p.ChanMap = append(p.ChanMap, len(p.ChanMap))
		p.X, p.Y, p.Shank = append(p.X, x), append(p.Y, 0), append(p.Shank, g)
	}
	for g := range n {
		add(250*float64(g), g)
		add(250*float64(g)+20, g)
	}
	add(250*float64(n-1)+10, n-1)
	p.NChanFile = len(p.ChanMap)
	return p
}

func TestGridGroups(t *testing.T) {
	t.Parallel()
	p := stereoProbe(6)
	prm := DefaultParams()
	plain, err := NewGrid(p, prm)
	if err != nil {
		t.Fatal(err)
	}
	prm.Groups = true
	g, err := NewGrid(p, prm)
	if err != nil {
		t.Fatal(err)
	}
	if g.F() != plain.F() || !reflect.DeepEqual(g.X, plain.X) || !reflect.DeepEqual(g.Index, plain.Index) {
		t.Fatalf("groups changed the centres: %d vs %d", g.F(), plain.F())
	}
	// Kilosort4's rule: every centre suppresses every other (F < 100).
	if plain.NC2 != plain.F() {
		t.Fatalf("plain NC2 %d, F %d", plain.NC2, plain.F())
	}
	if g.NC != 2 || len(g.Group) != g.F() {
		t.Fatalf("NC %d (want the smallest group, 2), %d group ids", g.NC, len(g.Group))
	}
	for f := range g.F() {
		// A centre's group is its nearest channel's.
		best, bg := math.Inf(1), -1
		for i := range p.Len() {
			if d := math.Hypot(g.X[f]-p.X[i], g.Y[f]-p.Y[i]); d < best {
				best, bg = d, p.Shank[i]
			}
		}
		if g.Group[f] != bg {
			t.Errorf("centre %d in group %d, nearest channel's %d", f, g.Group[f], bg)
		}
		for j := range g.NC {
			if c := g.IC[f*g.NC+j]; p.Shank[c] != g.Group[f] {
				t.Errorf("centre %d (group %d) uses channel %d of group %d", f, g.Group[f], c, p.Shank[c])
			}
		}
		row := g.IC2[f*g.NC2 : (f+1)*g.NC2]
		if int(row[0]) != f {
			t.Errorf("centre %d: IC2 starts with %d", f, row[0])
		}
		n := 0
		for _, h := range row {
			if g.Group[h] != g.Group[f] {
				t.Errorf("centre %d (group %d) is suppressed by centre %d of group %d", f, g.Group[f], h, g.Group[h])
			}
			if int(h) != f {
				n++
			}
		}
		// Every other centre of the group is a neighbour.
		want := 0
		for h := range g.F() {
			if h != f && g.Group[h] == g.Group[f] {
				want++
			}
		}
		if n != min(want, g.NC2-1) {
			t.Errorf("centre %d: %d same-group neighbours, want %d", f, n, want)
		}
	}
	// One group: the grouped grid is Kilosort4's.
	one := twoColumnProbe(40)
	prm.Groups = false
	a, _ := NewGrid(one, prm)
	prm.Groups = true
	b, _ := NewGrid(one, prm)
	b.Group = nil
	if !reflect.DeepEqual(a, b) {
		t.Error("a one-group grid differs from Kilosort4's")
	}
}
