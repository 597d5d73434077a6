package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"

	"dspk/compute"
	"dspk/detect"
	"dspk/internal/par"
	"dspk/kilosort"
)

// Input is what the clustering reads: the units (template centres in
// Kilosort4's mode 'spikes', learned templates in mode 'template') with
// their positions and channels, each spike's unit and its features.
type Input struct {
	// NC and P are the channels per unit and the features per channel
	// (nearest_chans 10, n_pcs 6).
	NC, P int
	// C is the number of channels of the probe; every channel index is
	// in [0, C).
	C int
	// ChanX and ChanY are the channel positions in µm: ChanX gives the x
	// grid of the groups, ChanY the default dmin.
	ChanX, ChanY []float64
	// UnitX and UnitY are the positions of the units in µm (Kilosort4's
	// xcup, ycup, or a learned template's best channel).
	UnitX, UnitY []float64
	// UnitChans holds the NC channels of each unit: UnitChans[u*NC+j].
	UnitChans []int32
	// Unit is each spike's unit. Spikes should come in time order, as in
	// Kilosort4: the kNN landmarks are every cluster_downsampling-th spike
	// of a group, so an order periodic with that stride would bias them.
	Unit []int32
	// Features holds each spike's features on its unit's channels
	// (Kilosort4's tF): Features[(i*NC+j)*P+p].
	Features []float32
}

// Result is the outcome of a clustering.
type Result struct {
	// Labels is each spike's cluster, 0…N−1, numbered by group (x outer,
	// y inner) and within a group by node of the merge tree.
	Labels []int32
	// N is the number of clusters.
	N int
	// Counts is the number of spikes of each cluster.
	Counts []int
	// Wall holds the clusters' mean features on the probe's channels,
	// zero where a cluster's group has no feature (Kilosort4's Wall):
	// Wall[(k*C+c)*P+p].
	Wall []float32
	// Groups describes the groups in the order they were numbered.
	Groups []Group
}

// Group describes one clustering group.
type Group struct {
	// X and Y are the grid point of the group in µm.
	X, Y float64
	// Units, Spikes and Channels are its units, spikes and feature
	// channels (the union of its units' channels; d = Channels·P).
	Units, Spikes, Channels int
	// First and Clusters are its first cluster label and its number of
	// clusters.
	First, Clusters int
}

// Clusterer clusters spikes into units by Kilosort4's graph clustering
// (see the package documentation). It is bound to a device: on a CUDA
// device the kNN search, the k-means++ rounds and the assignment rounds of
// all groups run there (cuda.go), the trees and splits on the host; on any
// other device all of it runs on the CPU, its groups on goroutines. Both
// give the same labels bit for bit.
type Clusterer struct {
	dev *compute.Device
	prm Params
	gpu *cudaClusterer // nil on the CPU
}

// NewClusterer returns a Clusterer for dev (nil means the CPU) with the
// settings prm, or an error naming the first setting out of range.
func NewClusterer(dev *compute.Device, prm Params) (*Clusterer, error) {
	if err := prm.Validate(); err != nil {
		return nil, err
	}
	cl := &Clusterer{dev: dev, prm: prm}
	if dev != nil && dev.Kind() == compute.CUDA {
		g, err := newCUDAClusterer(dev, &prm)
		if err != nil {
			return nil, err
		}
		cl.gpu = g
	}
	return cl, nil
}

// Backend names the back end that runs the clustering: "cpu" or "cuda".
func (c *Clusterer) Backend() string {
	if c.gpu != nil {
		return "cuda"
	}
	return "cpu"
}

// Close releases the Clusterer's resources.
func (c *Clusterer) Close() error { return nil }

// check validates the input against itself.
func (in *Input) check() error {
	if in.NC < 1 || in.P < 1 || in.C < 1 {
		return fmt.Errorf("cluster: %d channels per unit, %d features per channel, %d channels", in.NC, in.P, in.C)
	}
	if len(in.ChanX) != in.C || len(in.ChanY) != in.C {
		return fmt.Errorf("cluster: %d channel x and %d channel y positions for %d channels", len(in.ChanX), len(in.ChanY), in.C)
	}
	nu := len(in.UnitX)
	if len(in.UnitY) != nu || len(in.UnitChans) != nu*in.NC {
		return fmt.Errorf("cluster: %d unit x, %d unit y positions and %d unit channels for %d units of %d channels",
			nu, len(in.UnitY), len(in.UnitChans), nu, in.NC)
	}
	n := len(in.Unit)
	if n == 0 {
		return errors.New("cluster: no spikes to cluster")
	}
	if len(in.Features) != n*in.NC*in.P {
		return fmt.Errorf("cluster: %d feature values for %d spikes × %d channels × %d features", len(in.Features), n, in.NC, in.P)
	}
	for c := range in.ChanX {
		if !finite(in.ChanX[c]) || !finite(in.ChanY[c]) {
			return fmt.Errorf("cluster: channel %d position (%v, %v) is not finite", c, in.ChanX[c], in.ChanY[c])
		}
	}
	for u := 0; u < nu; u++ {
		if !finite(in.UnitX[u]) || !finite(in.UnitY[u]) {
			return fmt.Errorf("cluster: unit %d position (%v, %v) is not finite", u, in.UnitX[u], in.UnitY[u])
		}
		chans := in.UnitChans[u*in.NC : (u+1)*in.NC]
		for j, ch := range chans {
			if ch < 0 || int(ch) >= in.C {
				return fmt.Errorf("cluster: unit %d channel %d is %d, not in [0, %d)", u, j, ch, in.C)
			}
			for jj, other := range chans[:j] {
				if other == ch {
					return fmt.Errorf("cluster: unit %d lists channel %d twice (positions %d and %d)", u, ch, jj, j)
				}
			}
		}
	}
	for i, u := range in.Unit {
		if u < 0 || int(u) >= nu {
			return fmt.Errorf("cluster: spike %d has unit %d, not in [0, %d)", i, u, nu)
		}
	}
	for k, v := range in.Features {
		if !finite(float64(v)) {
			m := in.NC * in.P
			return fmt.Errorf("cluster: spike %d feature (%d, %d) is %v", k/m, k%m/in.P, k%in.P, v)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// groupWork is one group: its units and spikes (ascending) in, its labels
// and cluster means out.
type groupWork struct {
	x, y     float64
	units    []int32
	spikes   []int32
	ichan    []int32   // feature channels, ascending
	labels   []int32   // per spike of the group
	nclu     int       // clusters
	means    []float32 // [nclu·len(ichan)·P]
	clusters []int     // spikes per cluster
}

// Cluster clusters the spikes of in. Groups are clustered concurrently
// (Params.Workers at a time); the result does not depend on the number of
// workers or their scheduling.
func (c *Clusterer) Cluster(in *Input) (*Result, error) {
	return c.ClusterContext(context.Background(), in)
}

// ClusterContext is [Clusterer.Cluster] that stops once ctx is done: the
// groups not begun are skipped and those running stop at their next
// k-means++ round (on a GPU, at the next round of any stage), and it
// returns the context's cause.
func (c *Clusterer) ClusterContext(ctx context.Context, in *Input) (*Result, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	prm := c.prm
	prm.ctx = ctx
	r, err := c.cluster(in, prm)
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return r, err
}

// cluster is ClusterContext's work with the call's settings.
func (c *Clusterer) cluster(in *Input, prm Params) (*Result, error) {
	if prm.Dmin == 0 {
		prm.Dmin = MedianPitch(in.ChanY)
	}
	if len(in.UnitX) == 0 {
		return nil, errors.New("cluster: no units")
	}
	yc := YCenters(in.UnitY, prm.Dmin)
	xc := XCenters(in.ChanX, prm.XCenters, prm.XCenterGuesses, kilosort.XCentersSeed)
	gp := assignGroups(in.UnitX, in.UnitY, xc, yc)
	slot := make([]int, len(xc)*len(yc)) // grid point → work index + 1
	var work []*groupWork
	// Grid points in order (x outer, y inner) that hold units.
	for g := range slot {
		for u, p := range gp {
			if p != g {
				continue
			}
			if slot[g] == 0 {
				work = append(work, &groupWork{x: xc[g/len(yc)], y: yc[g%len(yc)]})
				slot[g] = len(work)
			}
			w := work[slot[g]-1]
			w.units = append(w.units, int32(u))
		}
	}
	for i, u := range in.Unit {
		w := work[slot[gp[u]]-1]
		w.spikes = append(w.spikes, int32(i))
	}
	var live []*groupWork
	for _, w := range work {
		if len(w.spikes) > 0 {
			live = append(live, w)
		}
	}
	if c.gpu != nil {
		if err := c.gpu.cluster(live, in, &prm); err != nil {
			return nil, err
		}
		return collect(work, in), nil
	}
	parallel(live, &prm, func(w *groupWork) { clusterWork(w, in, &prm) })
	if prm.halted() {
		return nil, errHalted
	}
	return collect(work, in), nil
}

// errHalted is the error of a clustering stopped by its context (which
// ClusterContext replaces by the context's cause).
var errHalted = errors.New("cluster: stopped")

// parallel calls f on every group, prm.Workers (0: GOMAXPROCS) at a
// time, the largest groups first so that no large group is left running
// alone at the end (each group's result is its own, so the order changes
// nothing else). Once prm is halted the groups not begun are skipped.
func parallel(work []*groupWork, prm *Params, f func(*groupWork)) {
	workers := prm.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	work = slices.Clone(work)
	slices.SortStableFunc(work, func(a, b *groupWork) int { return cmp.Compare(len(b.spikes), len(a.spikes)) })
	par.Each(len(work), workers, func(_, i int) {
		if !prm.halted() {
			f(work[i])
		}
	})
}

// clusterWork builds a group's features and clusters them.
func clusterWork(w *groupWork, in *Input, prm *Params) {
	x, n, d := w.features(in)
	w.labels, w.nclu = clusterGroup(x, n, d, prm)
	w.setMeans(x, d)
}

// features sets the group's channels and returns its Xd widened to
// float64, its spikes and its features per spike.
func (w *groupWork) features(in *Input) (x []float64, n, d int) {
	w.ichan = unionChannels(in, w.units)
	return groupFeatures(in, w.spikes, w.ichan), len(w.spikes), len(w.ichan) * in.P
}

// setMeans sets the clusters' sizes and mean features from the labels.
func (w *groupWork) setMeans(x []float64, d int) {
	sums := make([]float64, w.nclu*d)
	w.clusters = make([]int, w.nclu)
	for i, l := range w.labels {
		w.clusters[l]++
		row := sums[int(l)*d : int(l+1)*d]
		for t, v := range x[i*d : (i+1)*d] {
			row[t] += v
		}
	}
	w.means = make([]float32, len(sums))
	for k := 0; k < w.nclu; k++ {
		for t := 0; t < d; t++ {
			w.means[k*d+t] = float32(sums[k*d+t] / float64(w.clusters[k]))
		}
	}
}

// unionChannels returns the sorted union of the units' channel lists.
func unionChannels(in *Input, units []int32) []int32 {
	has := make([]bool, in.C)
	for _, u := range units {
		for _, ch := range in.UnitChans[int(u)*in.NC : int(u+1)*in.NC] {
			has[ch] = true
		}
	}
	var out []int32
	for ch, ok := range has {
		if ok {
			out = append(out, int32(ch))
		}
	}
	return out
}

// groupFeatures returns the group's Xd (kilosort4-sort.md §5.2) widened to
// float64: each spike's features written at its unit's channel positions
// in ichan, zeros elsewhere, channel-major ([n][len(ichan)][P]).
func groupFeatures(in *Input, spikes, ichan []int32) []float64 {
	x := make([]float64, len(spikes)*len(ichan)*in.P)
	groupFeaturesInto(x, in, spikes, ichan)
	return x
}

// groupFeaturesInto writes the group's Xd (as [groupFeatures]) into x,
// which holds len(spikes)·len(ichan)·P zeros.
func groupFeaturesInto(x []float64, in *Input, spikes, ichan []int32) {
	pos := make([]int, in.C)
	for j, ch := range ichan {
		pos[ch] = j
	}
	P, NC := in.P, in.NC
	d := len(ichan) * P
	for r, i := range spikes {
		u := int(in.Unit[i])
		row := x[r*d : (r+1)*d]
		for j, ch := range in.UnitChans[u*NC : (u+1)*NC] {
			src := in.Features[(int(i)*NC+j)*P : (int(i)*NC+j+1)*P]
			dst := row[pos[ch]*P : (pos[ch]+1)*P]
			for p, v := range src {
				dst[p] = float64(v)
			}
		}
	}
}

// clusterGroup clusters one group's n rows of x (d features): one cluster
// below MinGroup spikes, else kNN graph, k-means++ start, alternating
// assignment, merge tree and split decisions. It returns the labels and
// the number of clusters.
func clusterGroup(x []float64, n, d int, prm *Params) ([]int32, int) {
	if n < prm.MinGroup {
		return make([]int32, n), 1
	}
	land := landmarks(n, prm.ClusterDownsampling, prm.MaxClusterSubset)
	g := buildGraph(x, n, d, land, prm.ClusterNeighbors)
	c := kmeansPP(x, n, d, prm.InitLabels, prm.Candidates, initRNG(prm.ClusterInitSeed), prm.halted)
	if prm.halted() {
		return make([]int32, n), 1 // one cluster, discarded by ClusterContext
	}
	dl, K := assign(g, c, prm.InitLabels, prm.Rounds, prm.Lambda)
	return splitGroup(x, n, d, g, c, dl, K, prm)
}

// splitGroup builds the merge tree of a group from its graph g, spike
// labels c (0…K−1, relabelled) and landmark labels dl, decides the splits
// and returns the final labels (c, overwritten) and their number.
func splitGroup(x []float64, n, d int, g *graph, c, dl []int32, K int, prm *Params) ([]int32, int) {
	tree := makeTree(g, c, dl, K)
	sp := splitter{x: x, n: n, d: d, c: c, prm: prm}
	leaf, nf := finalLabels(tree, K, func(mg merge, leaves [][]int) bool { return sp.keep(mg, leaves, K) })
	for i, l := range c {
		c[i] = leaf[l]
	}
	return c, nf
}

// collect numbers the groups' clusters in group order and assembles the
// result.
func collect(work []*groupWork, in *Input) *Result {
	res := &Result{Labels: make([]int32, len(in.Unit))}
	for _, w := range work {
		if len(w.spikes) == 0 {
			continue
		}
		res.Groups = append(res.Groups, Group{X: w.x, Y: w.y, Units: len(w.units), Spikes: len(w.spikes),
			Channels: len(w.ichan), First: res.N, Clusters: w.nclu})
		for r, i := range w.spikes {
			res.Labels[i] = int32(res.N) + w.labels[r]
		}
		res.Counts = append(res.Counts, w.clusters...)
		res.N += w.nclu
	}
	C, P := in.C, in.P
	res.Wall = make([]float32, res.N*C*P)
	k0 := 0
	for _, w := range work {
		if len(w.spikes) == 0 {
			continue
		}
		d := len(w.ichan) * P
		for k := 0; k < w.nclu; k++ {
			for j, ch := range w.ichan {
				copy(res.Wall[((k0+k)*C+int(ch))*P:((k0+k)*C+int(ch)+1)*P], w.means[k*d+j*P:k*d+(j+1)*P])
			}
		}
		k0 += w.nclu
	}
	return res
}

// SpikesInput returns the Input of Kilosort4's first clustering (mode
// 'spikes'): the units are the detection grid's centres (positions X, Y,
// channels IC), each spike's unit its centre, its features those of
// detection, and the channel positions those of the grid. The Input
// shares the slices of g and s.
func SpikesInput(g *detect.Grid, s *detect.Spikes) (*Input, error) {
	if s.Len() > 0 && s.NC != g.NC {
		return nil, fmt.Errorf("cluster: spikes of %d channels for a grid of %d channels per centre", s.NC, g.NC)
	}
	for i, f := range s.Center {
		if f < 0 || int(f) >= g.F() {
			return nil, fmt.Errorf("cluster: spike %d has centre %d, not in [0, %d)", i, f, g.F())
		}
	}
	return &Input{NC: g.NC, P: s.P, C: len(g.ChanX), ChanX: g.ChanX, ChanY: g.ChanY,
		UnitX: g.X, UnitY: g.Y, UnitChans: g.IC, Unit: s.Center, Features: s.Features}, nil
}
