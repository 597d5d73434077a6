package probe

import (
	"fmt"
	"sort"
	"strings"
)

// NP1 returns Kilosort's default Neuropixels 1.0 layout: 384 sites on one
// shank, site i stored in file row i of a 385-channel SpikeGLX file (row 384
// is the sync word), at
//
//	x = [43, 11, 59, 27][i mod 4] µm,  y = 20·(⌊i/2⌋ + 1) µm.
//
// Rows of two sites are 20 µm apart and alternate x ∈ {43, 11} and {59, 27}.
// The layout is the mirror image in x of probeinterface's NP1000 bank 0
// (x = 59 − x_PI, y = y_PI + 20). Kilosort's own default channel map also
// drops site 191 (the 3B reference); NP1 keeps it, which gives the same
// template-centre grid.
func NP1() *Probe {
	const n = 384
	xs := [4]float64{43, 11, 59, 27}
	p := newProbe("np1", n, n+1)
	for i := range n {
		p.X[i] = xs[i%4]
		p.Y[i] = float64(20 * (i/2 + 1))
	}
	return p
}

// NP2 returns the single-shank Neuropixels 2.0 layout of probeinterface's
// NP2000 bank 0: electrodes e0…e383 on file rows 0…383 of a 385-channel
// SpikeGLX file, at
//
//	x = [0, 32][i mod 2] µm,  y = 15·⌊i/2⌋ µm.
func NP2() *Probe {
	const n = 384
	p := newProbe("np2", n, n+1)
	for i := range n {
		p.X[i] = float64(32 * (i % 2))
		p.Y[i] = float64(15 * (i / 2))
	}
	return p
}

// newProbe allocates a single-shank probe of n sites with the identity
// channel map.
func newProbe(name string, n, nChanFile int) *Probe {
	p := &Probe{
		Name:      name,
		X:         make([]float64, n),
		Y:         make([]float64, n),
		Shank:     make([]int, n),
		ChanMap:   make([]int, n),
		NChanFile: nChanFile,
	}
	for i := range p.ChanMap {
		p.ChanMap[i] = i
	}
	return p
}

var presets = map[string]func() *Probe{
	"np1": NP1,
	"np2": NP2,
}

// PresetNames returns the names [Preset] accepts, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for k := range presets {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Preset returns a fresh copy of the named built-in layout: "np1" ([NP1]) or
// "np2" ([NP2]). Names are case-insensitive.
func Preset(name string) (*Probe, error) {
	f, ok := presets[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return nil, fmt.Errorf("probe: unknown preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	return f(), nil
}
