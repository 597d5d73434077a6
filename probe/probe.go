package probe

import (
	"fmt"
	"math"
	"sort"
)

// Probe is the geometry of the recorded sites that dspk uses, in the
// order the algorithms see them: entry i is the site read from file row
// ChanMap[i].
type Probe struct {
	// Name says where the geometry came from ("np1", a file name, ...).
	Name string
	// X and Y are the site centres in µm (x across the shank, y depth).
	X, Y []float64
	// Shank is the shank (group) of each site; 0 for single-shank probes.
	Shank []int
	// ChanMap holds the 0-based row of the binary file that each site is
	// stored in.
	ChanMap []int
	// NChanFile is the number of channels interleaved in the binary file,
	// counting channels that are not sites (a SpikeGLX sync word).
	NChanFile int
	// StatedChannels is the channel count the probe file itself states
	// (a Kilosort probe's n_chan), 0 if it states none. [Probe.ForFile]
	// refuses a file with fewer channels.
	StatedChannels int
}

// Len returns the number of sites used.
func (p *Probe) Len() int { return len(p.ChanMap) }

// Geometry limits of [Probe.Validate]: no coordinate may exceed
// MaxCoordUm in magnitude (10 cm, far beyond any probe: larger values are
// a unit mistake), and the median over sites of the distance to the
// nearest other site may not exceed MaxMedianSpacingUm (1 mm; Neuropixels
// sites are 15–32 µm apart, Utah arrays 400 µm).
const (
	MaxCoordUm         = 1e5
	MaxMedianSpacingUm = 1000
)

// Validate checks that the arrays agree in length, that every channel-map
// entry is a distinct row of a file with NChanFile channels, that the
// coordinates are finite and at most [MaxCoordUm] in magnitude, that no
// two sites share a position (which also refuses probes whose sites all
// coincide) and that the sites are not absurdly spaced (median
// nearest-neighbour distance at most [MaxMedianSpacingUm]).
func (p *Probe) Validate() error {
	n := len(p.ChanMap)
	if n == 0 {
		return fmt.Errorf("probe %s: no sites", p.Name)
	}
	if len(p.X) != n || len(p.Y) != n || len(p.Shank) != n {
		return fmt.Errorf("probe %s: %d channel-map entries but %d x, %d y and %d shank values",
			p.Name, n, len(p.X), len(p.Y), len(p.Shank))
	}
	seen := make(map[int]int, n)
	for i, r := range p.ChanMap {
		if r < 0 || r >= p.NChanFile {
			return fmt.Errorf("probe %s: site %d maps to file channel %d, outside 0..%d",
				p.Name, i, r, p.NChanFile-1)
		}
		if j, ok := seen[r]; ok {
			return fmt.Errorf("probe %s: sites %d and %d both map to file channel %d", p.Name, j, i, r)
		}
		seen[r] = i
		if math.IsNaN(p.X[i]) || math.IsInf(p.X[i], 0) || math.IsNaN(p.Y[i]) || math.IsInf(p.Y[i], 0) {
			return fmt.Errorf("probe %s: site %d has a non-finite position (%g, %g)", p.Name, i, p.X[i], p.Y[i])
		}
		if math.Abs(p.X[i]) > MaxCoordUm || math.Abs(p.Y[i]) > MaxCoordUm {
			return fmt.Errorf("probe %s: site %d at (%g, %g) µm is more than %g µm from the origin; are the units µm?",
				p.Name, i, p.X[i], p.Y[i], float64(MaxCoordUm))
		}
	}
	same := 1
	for i := 1; i < n && p.X[i] == p.X[0] && p.Y[i] == p.Y[0]; i++ {
		same++
	}
	if n > 1 && same == n {
		return fmt.Errorf("probe %s: all %d sites are at (%g, %g) µm", p.Name, n, p.X[0], p.Y[0])
	}
	at := make(map[[2]float64]int, n)
	for i := range n {
		k := [2]float64{p.X[i] + 0, p.Y[i] + 0} // +0 folds −0 into 0
		if j, ok := at[k]; ok {
			return fmt.Errorf("probe %s: sites %d and %d are both at (%g, %g) µm", p.Name, j, i, p.X[i], p.Y[i])
		}
		at[k] = i
	}
	if n > 1 {
		_, d2 := KNearest(p.X, p.Y, p.X, p.Y, 2) // the nearest is the site itself
		nn := make([]float64, n)
		for i := range nn {
			nn[i] = math.Sqrt(d2[i][1])
		}
		sort.Float64s(nn)
		if med := nn[n/2]; med > MaxMedianSpacingUm {
			return fmt.Errorf("probe %s: sites are a median %g µm from their nearest neighbour, more than %g µm; are the units µm?",
				p.Name, med, float64(MaxMedianSpacingUm))
		}
	}
	return nil
}
