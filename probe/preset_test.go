package probe

import (
	"strings"
	"testing"
)

func TestNP1(t *testing.T) {
	p := NP1()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Len() != 384 || p.NChanFile != 385 {
		t.Fatalf("NP1: %d sites, %d file channels; want 384, 385", p.Len(), p.NChanFile)
	}
	// Corners listed in kilosort4.md §14.
	for _, c := range []struct {
		i    int
		x, y float64
	}{{0, 43, 20}, {1, 11, 20}, {2, 59, 40}, {3, 27, 40}, {382, 59, 3840}, {383, 27, 3840}} {
		if p.X[c.i] != c.x || p.Y[c.i] != c.y {
			t.Errorf("NP1 site %d at (%g, %g); want (%g, %g)", c.i, p.X[c.i], p.Y[c.i], c.x, c.y)
		}
	}
	for i := range p.Len() {
		if p.ChanMap[i] != i || p.Shank[i] != 0 {
			t.Errorf("NP1 site %d: row %d shank %d", i, p.ChanMap[i], p.Shank[i])
		}
	}
	// 192 rows 20 µm apart, two sites per row.
	rows := map[float64]int{}
	for _, y := range p.Y {
		rows[y]++
	}
	if len(rows) != 192 {
		t.Errorf("NP1 has %d distinct depths; want 192", len(rows))
	}
	for y, n := range rows {
		if n != 2 {
			t.Errorf("NP1 depth %g has %d sites", y, n)
		}
	}
}

func TestNP2(t *testing.T) {
	p := NP2()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Len() != 384 || p.NChanFile != 385 {
		t.Fatalf("NP2: %d sites, %d file channels", p.Len(), p.NChanFile)
	}
	for _, c := range []struct {
		i    int
		x, y float64
	}{{0, 0, 0}, {1, 32, 0}, {2, 0, 15}, {383, 32, 2865}} {
		if p.X[c.i] != c.x || p.Y[c.i] != c.y {
			t.Errorf("NP2 site %d at (%g, %g); want (%g, %g)", c.i, p.X[c.i], p.Y[c.i], c.x, c.y)
		}
	}
}

func TestPreset(t *testing.T) {
	for _, name := range []string{"np1", "NP1", " np2 "} {
		p, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.ToLower(strings.TrimSpace(name)); p.Name != want {
			t.Errorf("Preset(%q).Name = %q", name, p.Name)
		}
	}
	// Each call returns a fresh copy.
	a, _ := Preset("np1")
	a.X[0] = -1
	if b, _ := Preset("np1"); b.X[0] != 43 {
		t.Error("Preset returned shared storage")
	}
	if _, err := Preset("np3"); err == nil || !strings.Contains(err.Error(), "np3") {
		t.Errorf("Preset(np3) error = %v", err)
	}
}
