package probe

import (
	"fmt"
	"math"
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
}

// Len returns the number of sites used.
func (p *Probe) Len() int { return len(p.ChanMap) }

// Validate checks that the arrays agree in length, that every channel-map
// entry is a distinct row of a file with NChanFile channels and that the
// coordinates are finite.
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
	}
	return nil
}
