package detect

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"dspk/probe"
)

// maxCandidates bounds the template-centre grid before the distance
// filter, so that a nonsense geometry (µm given in m, a stray site far
// away) fails with an error instead of exhausting memory.
const maxCandidates = 4 << 20

// Grid is Kilosort4's template-centre grid with its nearest channels,
// nearest centres and spatial weights (kilosort4.md §7–§8).
type Grid struct {
	// ChanX and ChanY are the channel positions in µm (the probe's X, Y).
	ChanX, ChanY []float64
	// Dmin and Dminx are the vertical and horizontal steps ×2 in µm
	// actually used.
	Dmin, Dminx float64
	// Xup and Yup are the distinct x and y values of the candidate
	// centres, ascending.
	Xup, Yup []float64
	// Candidates is len(Xup)·len(Yup), the centres before the distance
	// filter (the number Kilosort4 logs as "universal templates").
	Candidates int
	// Index holds, for each kept centre, its position f' = ix·len(Yup)+iy
	// in the candidate grid (flattened x-major).
	Index []int
	// X and Y are the kept centres in µm (Kilosort4's xcup, ycup).
	X, Y []float64
	// NC, NC2 and S are the nearest channels per centre, the nearest
	// centres per centre and the number of footprint sizes.
	NC, NC2, S int
	// IC holds the NC nearest channels of centre f, nearest first (ties
	// by channel index): IC[f*NC+j].
	IC []int32
	// DS holds the matching squared distances in µm²: DS[f*NC+j].
	DS []float64
	// IC2 holds the NC2 nearest kept centres of centre f, f itself first
	// (ties by centre index): IC2[f*NC2+j].
	IC2 []int32
	// Group holds each kept centre's group (the probe's Shank of its
	// nearest channel) when the grid was built with prm.Groups; nil
	// otherwise.
	Group []int
	// Sigma holds the footprint sizes σ_s in µm.
	Sigma []float64
	// Weights holds w_s(j, f) = exp(−DS[f*NC+j]/σ_s²) normalised to unit
	// L2 norm over j, as float32: Weights[(f*S+s)*NC+j].
	Weights []float32
}

// F returns the number of kept centres.
func (g *Grid) F() int { return len(g.X) }

// C returns the number of channels.
func (g *Grid) C() int { return len(g.ChanX) }

// NewGrid builds the template-centre grid of the probe:
//
//   - dmin = prm.Dmin, or the median of the differences of the distinct
//     channel depths (1 if all depths are equal); dminx = prm.Dminx;
//   - per shank, yup = arange(ymin, ymax+0.01, dmin/2) and
//     xup = linspace(xmin, xmax, round((xmax−xmin)/(dminx/2))+1)
//     (round half to even, as numpy); the union over shanks of each, and
//     every (x, y) pair of the two, flattened x-major;
//   - centres whose nearest channel is farther than MaxChannelDistance
//     dropped;
//   - per kept centre, the NearestChans nearest channels and
//     NearestTemplates nearest kept centres, and the weights of
//     kilosort4.md §8.
//
// With prm.Groups the tables stay within groups (see [Grid.Group]).
//
// It returns an error if the probe is invalid or the grid would be
// absurdly large.
func NewGrid(p *probe.Probe, prm Params) (*Grid, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("detect: %w", err)
	}
	if err := prm.Validate(); err != nil {
		return nil, err
	}
	nch := p.Len()
	g := &Grid{ChanX: slices.Clone(p.X), ChanY: slices.Clone(p.Y), Dminx: prm.Dminx}
	g.Dmin = prm.Dmin
	if g.Dmin == 0 {
		g.Dmin = medianStep(p.Y)
	}
	if err := g.centres(p, nch); err != nil {
		return nil, err
	}
	g.Candidates = len(g.Xup) * len(g.Yup)
	if g.Candidates > maxCandidates {
		return nil, fmt.Errorf("detect: probe %s gives %d template centres (%d x by %d y values), more than %d",
			p.Name, g.Candidates, len(g.Xup), len(g.Yup), maxCandidates)
	}

	g.NC = min(prm.NearestChans, nch)
	g.S = prm.TemplateSizes
	maxD2 := prm.MaxChannelDistance * prm.MaxChannelDistance
	cx := make([]float64, 0, g.Candidates)
	cy := make([]float64, 0, g.Candidates)
	for _, x := range g.Xup {
		for _, y := range g.Yup {
			cx = append(cx, x)
			cy = append(cy, y)
		}
	}
	tables := g.tables
	if prm.Groups {
		tables = g.groupTables
	}
	if err := tables(p, prm, cx, cy, maxD2); err != nil {
		return nil, err
	}
	g.weights(prm)
	return g, nil
}

// centres sets the candidate centres' x and y values (Xup, Yup): on each
// shank of p's nch channels, a Dminx/2 by Dmin/2 lattice over the
// shank's extent.
func (g *Grid) centres(p *probe.Probe, nch int) error {
	shanks := slices.Clone(p.Shank)
	slices.Sort(shanks)
	shanks = slices.Compact(shanks)
	var xs, ys []float64
	for _, sh := range shanks {
		xmin, xmax := math.Inf(1), math.Inf(-1)
		ymin, ymax := math.Inf(1), math.Inf(-1)
		for i := range nch {
			if p.Shank[i] != sh {
				continue
			}
			xmin, xmax = min(xmin, p.X[i]), max(xmax, p.X[i])
			ymin, ymax = min(ymin, p.Y[i]), max(ymax, p.Y[i])
		}
		ystep := g.Dmin / 2
		ny := math.Ceil((ymax + 0.01 - ymin) / ystep)
		nx := math.RoundToEven((xmax-xmin)/(g.Dminx/2)) + 1
		if !(ny*nx <= maxCandidates) {
			return fmt.Errorf("detect: probe %s shank %d spans %g×%g µm; with steps %g and %g µm that is more than %d template centres",
				p.Name, sh, xmax-xmin, ymax-ymin, g.Dminx/2, ystep, maxCandidates)
		}
		for i := range int(ny) {
			ys = append(ys, ymin+float64(i)*ystep)
		}
		xs = append(xs, linspace(xmin, xmax, int(nx))...)
	}
	slices.Sort(xs)
	slices.Sort(ys)
	g.Xup, g.Yup = slices.Compact(xs), slices.Compact(ys)
	return nil
}

// tables keeps the candidate centres (cx, cy) within √maxD2 of a channel
// and sets their nearest channels and distances and their nearest kept
// centres.
func (g *Grid) tables(p *probe.Probe, prm Params, cx, cy []float64, maxD2 float64) error {
	near, d2 := probe.KNearest(p.X, p.Y, cx, cy, g.NC)
	for f := range cx {
		if d2[f][0] > maxD2 {
			continue
		}
		g.Index = append(g.Index, f)
		g.X = append(g.X, cx[f])
		g.Y = append(g.Y, cy[f])
		for j := range g.NC {
			g.IC = append(g.IC, int32(near[f][j]))
			g.DS = append(g.DS, d2[f][j])
		}
	}
	f := len(g.X)
	if f == 0 {
		return fmt.Errorf("detect: probe %s: no template centre lies within %g µm of a channel", p.Name, prm.MaxChannelDistance)
	}
	g.NC2 = min(prm.NearestTemplates, f)
	near2, _ := probe.KNearest(g.X, g.Y, g.X, g.Y, g.NC2)
	g.IC2 = make([]int32, 0, f*g.NC2)
	for a := range f {
		for j := range g.NC2 {
			g.IC2 = append(g.IC2, int32(near2[a][j]))
		}
	}
	return nil
}

// weights sets the kept centres' spatial weights for each template size:
// exp(−d²/σ²) over the centre's nearest channels, normalised.
func (g *Grid) weights(prm Params) {
	f := len(g.X)
	g.Sigma = make([]float64, g.S)
	for s := range g.S {
		g.Sigma[s] = prm.MinTemplateSize * float64(s+1)
	}
	g.Weights = make([]float32, f*g.S*g.NC)
	w := make([]float64, g.NC)
	for c := range f {
		for s, sig := range g.Sigma {
			var norm float64
			for j := range g.NC {
				w[j] = math.Exp(-g.DS[c*g.NC+j] / (sig * sig))
				norm += w[j] * w[j]
			}
			norm = math.Sqrt(norm)
			out := g.Weights[(c*g.S+s)*g.NC : (c*g.S+s+1)*g.NC]
			for j := range g.NC {
				out[j] = float32(w[j] / norm)
			}
		}
	}
}

// medianStep is numpy's median(diff(unique(y))), or 1 if all y are equal.
func medianStep(y []float64) float64 {
	u := slices.Clone(y)
	slices.Sort(u)
	u = slices.Compact(u)
	if len(u) < 2 {
		return 1
	}
	d := make([]float64, len(u)-1)
	for i := range d {
		d[i] = u[i+1] - u[i]
	}
	sort.Float64s(d)
	m := len(d) / 2
	if len(d)%2 == 1 {
		return d[m]
	}
	return (d[m-1] + d[m]) / 2
}

// linspace is numpy's linspace(a, b, n) with endpoint: a + i·(b−a)/(n−1),
// the last value exactly b; a alone for n = 1.
func linspace(a, b float64, n int) []float64 {
	if n == 1 {
		return []float64{a}
	}
	out := make([]float64, n)
	step := (b - a) / float64(n-1)
	for i := range out {
		out[i] = float64(i)*step + a
	}
	out[n-1] = b
	return out
}

// groupTables fills the kept centres and the IC, DS and IC2 tables of a
// grouped grid from the candidates (cx, cy). A centre belongs to the
// group of its nearest channel (kept if that channel is within the
// maximum distance, as without groups); its NC channels are the nearest
// of its own group, NC being NearestChans clipped to the smallest group;
// its NC2 centres are the nearest of its own group, NC2 being
// NearestTemplates clipped to the largest group's centres, a smaller
// group's rows padded with the centre itself (which never suppresses a
// detection). Grouping is thus a change of the neighbour tables only:
// detections on different groups never suppress each other, and a
// template's response only sums channels of one group.
func (g *Grid) groupTables(p *probe.Probe, prm Params, cx, cy []float64, maxD2 float64) error {
	members := map[int][]int{}
	for i, s := range p.Shank {
		members[s] = append(members[s], i)
	}
	smallest := p.Len()
	for _, m := range members {
		smallest = min(smallest, len(m))
	}
	g.NC = min(prm.NearestChans, smallest)
	near, d2 := probe.KNearest(p.X, p.Y, cx, cy, 1)
	// Per group, the channels' coordinates for the within-group search.
	type sub struct{ x, y []float64 }
	subs := map[int]*sub{}
	for s, m := range members {
		q := &sub{}
		for _, i := range m {
			q.x, q.y = append(q.x, p.X[i]), append(q.y, p.Y[i])
		}
		subs[s] = q
	}
	for f := range cx {
		if d2[f][0] > maxD2 {
			continue
		}
		s := p.Shank[near[f][0]]
		q := subs[s]
		idx, dd := probe.KNearest(q.x, q.y, cx[f:f+1], cy[f:f+1], g.NC)
		g.Index = append(g.Index, f)
		g.X = append(g.X, cx[f])
		g.Y = append(g.Y, cy[f])
		g.Group = append(g.Group, s)
		for j := range g.NC {
			g.IC = append(g.IC, int32(members[s][idx[0][j]]))
			g.DS = append(g.DS, dd[0][j])
		}
	}
	F := len(g.X)
	if F == 0 {
		return fmt.Errorf("detect: probe %s: no template centre lies within %g µm of a channel", p.Name, prm.MaxChannelDistance)
	}
	centres := map[int][]int{}
	for f, s := range g.Group {
		centres[s] = append(centres[s], f)
	}
	largest := 0
	for _, c := range centres {
		largest = max(largest, len(c))
	}
	g.NC2 = min(prm.NearestTemplates, largest)
	g.IC2 = make([]int32, F*g.NC2)
	for _, c := range centres {
		xs, ys := make([]float64, len(c)), make([]float64, len(c))
		for k, f := range c {
			xs[k], ys[k] = g.X[f], g.Y[f]
		}
		near2 := probe.Nearest(&probe.Probe{X: xs, Y: ys, ChanMap: make([]int, len(c))}, g.NC2)
		for k, f := range c {
			row := g.IC2[f*g.NC2 : (f+1)*g.NC2]
			for j := range row {
				row[j] = int32(f)
				if j < len(near2[k]) {
					row[j] = int32(c[near2[k][j]])
				}
			}
		}
	}
	return nil
}
