package probe

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Clone returns a deep copy of p.
func (p *Probe) Clone() *Probe {
	return &Probe{
		Name:      p.Name,
		X:         slices.Clone(p.X),
		Y:         slices.Clone(p.Y),
		Shank:     slices.Clone(p.Shank),
		ChanMap:   slices.Clone(p.ChanMap),
		NChanFile: p.NChanFile,

		StatedChannels: p.StatedChannels,
	}
}

// ForFile returns a copy of p for a binary file with nChan interleaved
// channels. It is an error if p is invalid or if a site is stored in a row
// the file does not have (the file has fewer channels than the probe
// needs), or if p states more channels (StatedChannels) than the file
// has; file names the file in the error. A probe stating fewer is used
// (its sites are all in the file): a 384-channel map on a 385-channel
// SpikeGLX file with its sync row is common.
func (p *Probe) ForFile(nChan int, file string) (*Probe, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if nChan < 1 {
		return nil, fmt.Errorf("probe %s: %s has %d channels", p.Name, file, nChan)
	}
	if p.StatedChannels > nChan {
		return nil, fmt.Errorf("probe %s states n_chan = %d but %s has %d channels per sample: the probe file was made for another file layout; "+
			"fix or remove its n_chan", p.Name, p.StatedChannels, file, nChan)
	}
	if p.Len() > nChan {
		return nil, fmt.Errorf("probe %s has %d sites but %s has only %d channels", p.Name, p.Len(), file, nChan)
	}
	for i, r := range p.ChanMap {
		if r >= nChan {
			return nil, fmt.Errorf("probe %s: site %d is stored in channel %d but %s has only %d channels (0..%d)",
				p.Name, i, r, file, nChan, nChan-1)
		}
	}
	q := p.Clone()
	q.NChanFile = nChan
	return q, nil
}

// Summary describes p in one line, e.g.
// "384 sites on 1 shank, x 11–59 µm, y 20–3840 µm, 385 channels in file".
func (p *Probe) Summary() string {
	n := p.Len()
	shanks := map[int]bool{}
	for _, s := range p.Shank {
		shanks[s] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s on %d %s", n, plural(n, "site", "sites"), len(shanks), plural(len(shanks), "shank", "shanks"))
	if len(p.X) > 0 && len(p.Y) > 0 {
		fmt.Fprintf(&b, ", x %g–%g µm, y %g–%g µm", slices.Min(p.X), slices.Max(p.X), slices.Min(p.Y), slices.Max(p.Y))
	}
	fmt.Fprintf(&b, ", %d %s in file", p.NChanFile, plural(p.NChanFile, "channel", "channels"))
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Nearest returns, for each site of p, the k sites nearest to it by
// Euclidean distance in (x, y), the site itself first, then the others by
// increasing squared distance and, for equal distances, increasing index.
// k is clipped to p.Len(); Nearest panics if k < 1.
func Nearest(p *Probe, k int) [][]int {
	if k < 1 {
		panic("probe: Nearest with k < 1")
	}
	n := p.Len()
	if len(p.X) != n || len(p.Y) != n {
		panic("probe: Nearest of a probe with mismatched X, Y and ChanMap lengths")
	}
	idx, _ := kNearest(p.X, p.Y, p.X, p.Y, k, true)
	return idx
}

// KNearest returns, for each query point (qx[q], qy[q]), the indices of the
// k points (px[i], py[i]) nearest to it and their squared distances,
// ordered by increasing squared distance and, for equal distances,
// increasing index (a stable argsort of the squared distance, as Kilosort
// computes nearest channels and template centres). k is clipped to
// len(px). KNearest panics if k < 1 or the coordinate slices differ in
// length.
func KNearest(px, py, qx, qy []float64, k int) (idx [][]int, d2 [][]float64) {
	if k < 1 {
		panic("probe: KNearest with k < 1")
	}
	if len(px) != len(py) || len(qx) != len(qy) {
		panic("probe: KNearest coordinate lengths differ")
	}
	return kNearest(px, py, qx, qy, k, false)
}

// cand is a candidate neighbour: squared distance, then rank (0 for the
// query's own index when self is set), then index.
type cand struct {
	d2   float64
	self bool
	i    int
}

func (a cand) less(b cand) bool {
	if a.d2 != b.d2 {
		return a.d2 < b.d2
	}
	if a.self != b.self {
		return a.self
	}
	return a.i < b.i
}

// siftDown restores the max-heap order (worst candidate at the root) of
// h below position i.
func siftDown(h []cand, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		w := l
		if r := l + 1; r < len(h) && h[l].less(h[r]) {
			w = r
		}
		if !h[i].less(h[w]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// siftUp moves h[i] up to its place in the max-heap.
func siftUp(h []cand, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[p].less(h[i]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// kNearest keeps the k best candidates of each query in a bounded max-heap
// (O(n log k) per query). With self set, query q is point q and wins ties
// at its own distance.
func kNearest(px, py, qx, qy []float64, k int, self bool) ([][]int, [][]float64) {
	n, m := len(px), len(qx)
	k = min(k, n)
	idx := make([][]int, m)
	d2 := make([][]float64, m)
	if k == 0 {
		for q := range m {
			idx[q], d2[q] = []int{}, []float64{}
		}
		return idx, d2
	}
	flatI := make([]int, m*k)
	flatD := make([]float64, m*k)
	h := make([]cand, 0, k)
	for q := range m {
		h = h[:0]
		for i := range n {
			dx, dy := px[i]-qx[q], py[i]-qy[q]
			c := cand{dx*dx + dy*dy, self && i == q, i}
			if math.IsNaN(c.d2) {
				c.d2 = math.Inf(1) // NaN positions sort last
			}
			if len(h) < k {
				h = append(h, c)
				siftUp(h, len(h)-1)
			} else if c.less(h[0]) {
				h[0] = c
				siftDown(h, 0)
			}
		}
		row, drow := flatI[q*k:(q+1)*k:(q+1)*k], flatD[q*k:(q+1)*k:(q+1)*k]
		// Pop the worst first, filling the row from its end.
		for j := k - 1; j >= 0; j-- {
			row[j], drow[j] = h[0].i, h[0].d2
			h[0] = h[j]
			h = h[:j]
			siftDown(h, 0)
		}
		idx[q], d2[q] = row, drow
	}
	return idx, d2
}
