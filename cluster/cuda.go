package cluster

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"dspk/compute"
	"dspk/internal/par"
)

//go:embed kernels/cluster.cu
var gpuSource string

// cudaKMax is the most neighbours (cluster_neighbors) the CUDA kernels
// keep per spike (KMAX in kernels/cluster.cu).
const cudaKMax = 32

// meta fields of a device group (M_* in kernels/cluster.cu).
const (
	metaN = iota
	metaD
	metaS
	metaK
	metaSpk
	metaLand
	metaX
	metaIn
	metaLen
)

const tile = 128 // threads per block of the per-spike kernels

// cudaClusterer is the Clusterer's CUDA back end: the groups' features go
// to the device once, then the kNN search, every k-means++ round (norms,
// weights, candidate scores, pick, update) and every assignment round
// (label sizes, landmark step, spike step) run as one launch per step over
// all groups. The host keeps the candidate draws (PCG and Efraimidis–
// Spirakis keys, the CPU's sampler: it downloads the weights, n float64,
// and uploads 100 candidates per group each round), the graph's link
// lists (from the downloaded kNN table), the relabelling, the trees and
// the splits.
type cudaClusterer struct {
	dev   *compute.Device
	k     map[string]*compute.Kernel
	times stageTimes // of the last run, for benchmarks
	ops   devOps     // tests: emulated device operations instead of dev
}

// stageTimes are the wall times of the device stages of a run (each
// ended by a synchronisation).
type stageTimes struct {
	upload, knn, kmeans, assign time.Duration
	rounds                      int // k-means++ rounds run
}

func newCUDAClusterer(dev *compute.Device, prm *Params) (*cudaClusterer, error) {
	if prm.InitLabels > 8192 {
		return nil, fmt.Errorf("cluster: %d initial labels above the CUDA back end's 8192", prm.InitLabels)
	}
	if prm.ClusterNeighbors > cudaKMax {
		return nil, fmt.Errorf("cluster: cluster_neighbors %d above the CUDA back end's %d", prm.ClusterNeighbors, cudaKMax)
	}
	g := &cudaClusterer{dev: dev, k: map[string]*compute.Kernel{}}
	err := dev.Do(func(c *compute.Ctx) error {
		mod, err := c.Compile("cluster/kernels/cluster.cu", gpuSource, "--fmad=false", fmt.Sprintf("-DKMAX=%d", cudaKMax))
		if err != nil {
			return err
		}
		for _, name := range []string{"knn", "norms", "weights", "score", "pick", "update", "sizes", "landmarkStep", "spikeStep"} {
			if g.k[name], err = mod.Kernel(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// devGroup is a group clustered on the device.
type devGroup struct {
	w *groupWork
	// x holds the group's rows (the kernel tests set it); with in (the
	// clusterer's groups) they are built from the spikes' float32
	// features when needed, for the upload and for the splits, one group
	// per worker: the host never holds the float64 rows of all groups.
	x    []float64
	in   *Input
	n, d int
	land []int32
	g    *graph
	rng  *rand.Rand
	done bool // no spike can improve any more
}

// cluster clusters the groups (each with spikes): those below MinGroup on
// the host, the others on the device.
func (gc *cudaClusterer) cluster(work []*groupWork, in *Input, prm *Params) error {
	var dg []*devGroup
	var mu sync.Mutex
	parallel(work, prm, func(w *groupWork) {
		if len(w.spikes) < prm.MinGroup {
			x, n, d := w.features(in)
			w.labels, w.nclu = clusterGroup(x, n, d, prm)
			w.setMeans(x, d)
			return
		}
		w.ichan = unionChannels(in, w.units)
		mu.Lock()
		dg = append(dg, &devGroup{w: w, in: in, n: len(w.spikes), d: len(w.ichan) * in.P})
		mu.Unlock()
	})
	if prm.halted() {
		return errHalted // groups were skipped
	}
	if len(dg) == 0 {
		return nil
	}
	// Group order does not matter for the results; keep the input order
	// for reproducible device layouts.
	pos := map[*groupWork]int{}
	for i, w := range work {
		pos[w] = i
	}
	sortGroups(dg, pos)
	if err := gc.run(dg, prm); err != nil {
		return err
	}
	parallel(work, prm, func(w *groupWork) {
		for _, g := range dg {
			if g.w == w {
				x := g.x
				if x == nil {
					x = groupFeatures(in, w.spikes, w.ichan)
				}
				dl, K := relabel(g.g, w.labels, prm.InitLabels, prm.Lambda)
				w.labels, w.nclu = splitGroup(x, g.n, g.d, g.g, w.labels, dl, K, prm)
				w.setMeans(x, g.d)
				g.x = nil
			}
		}
	})
	if prm.halted() {
		return errHalted
	}
	return nil
}

func sortGroups(dg []*devGroup, pos map[*groupWork]int) {
	for i := 1; i < len(dg); i++ {
		for j := i; j > 0 && pos[dg[j-1].w] > pos[dg[j].w]; j-- {
			dg[j-1], dg[j] = dg[j], dg[j-1]
		}
	}
}

// run computes the graphs and the spike labels after the assignment
// rounds (w.labels, in [0, InitLabels)) of the device groups.
func (gc *cudaClusterer) run(dg []*devGroup, prm *Params) error {
	lay, err := newLayout(dg, prm)
	if err != nil {
		return err
	}
	if gc.ops != nil {
		return runOn(gc.ops, dg, lay, prm, &gc.times)
	}
	return gc.dev.Do(func(c *compute.Ctx) error {
		return runOn(&ctxOps{c: c, k: gc.k}, dg, lay, prm, &gc.times)
	})
}

// layout is the device groups laid end to end, as the kernels read them.
type layout struct {
	meta, land       []int32   // [G·metaLen], landmarks
	x                []float64 // the rows, nil where runOn builds them per group
	nX               int       // feature values of all groups
	nSpk, maxN, maxS int
}

// newLayout computes the groups' landmarks and lays them out.
func newLayout(dg []*devGroup, prm *Params) (*layout, error) {
	l := &layout{meta: make([]int32, len(dg)*metaLen)}
	nX := 0
	for i, g := range dg {
		g.land = landmarks(g.n, prm.ClusterDownsampling, prm.MaxClusterSubset)
		s := len(g.land)
		m := l.meta[i*metaLen : (i+1)*metaLen]
		m[metaN], m[metaD], m[metaS], m[metaK] = int32(g.n), int32(g.d), int32(s), int32(min(prm.ClusterNeighbors, s))
		m[metaSpk], m[metaLand], m[metaX] = int32(l.nSpk), int32(len(l.land)), int32(nX)
		l.land = append(l.land, g.land...)
		l.nSpk += g.n
		nX += g.n * g.d
		l.maxN, l.maxS = max(l.maxN, g.n), max(l.maxS, s)
	}
	if nX >= 1<<31 || l.nSpk*cudaKMax >= 1<<31 {
		return nil, fmt.Errorf("cluster: %d feature values of %d spikes on the device, above the kernels' 2³¹", nX, l.nSpk)
	}
	l.nX = nX
	// Groups with in (the clusterer's) build their rows group by group
	// as runOn uploads them: the host never holds the float64 rows of
	// all groups. Groups with rows (the kernel tests') move them into
	// one slice, as the kernels read it.
	for _, g := range dg {
		if g.in != nil {
			return l, nil
		}
	}
	l.x = make([]float64, 0, nX)
	for _, g := range dg {
		o := len(l.x)
		l.x = append(l.x, g.x...)
		g.x = l.x[o:len(l.x):len(l.x)]
	}
	return l, nil
}

// links lays out the graphs' degrees and incoming lists (setting the
// groups' metaIn) and the groups' λ/m.
func (l *layout) links(dg []*devGroup, lambda float64) (ki, ks []int32, lam []float64, inStart, inList []int32) {
	G := len(dg)
	ki = make([]int32, l.nSpk)
	ks = make([]int32, len(l.land))
	lam = make([]float64, G)
	inStart = make([]int32, len(l.land)+G)
	for i, g := range dg {
		m := l.meta[i*metaLen : (i+1)*metaLen]
		m[metaIn] = int32(len(inList))
		copy(ki[m[metaSpk]:], g.g.ki)
		copy(ks[m[metaLand]:], g.g.ks)
		copy(inStart[int(m[metaLand])+i:], g.g.inStart)
		inList = append(inList, g.g.inList...)
		if g.g.m > 0 {
			lam[i] = lambda / float64(g.g.m)
		}
	}
	return
}

// devOps are the device operations of runOn: a CUDA context (ctxOps) or,
// in tests, the kernels emulated on the CPU.
type devOps interface {
	alloc(bytes int) (compute.Mem, error)
	free(m compute.Mem) error
	memset32(p compute.Ptr, v uint32, n int) error
	upload(p compute.Ptr, v any) error   // []int32 or []float64
	download(p compute.Ptr, v any) error // []int32 or []float64
	launch(kernel string, grid, block compute.Dim3, shared int, args ...any) error
	sync() error
}

// ctxOps are devOps on a CUDA context with the compiled kernels.
type ctxOps struct {
	c *compute.Ctx
	k map[string]*compute.Kernel
}

func (o *ctxOps) alloc(bytes int) (compute.Mem, error) { return o.c.Alloc(bytes) }
func (o *ctxOps) free(m compute.Mem) error             { return o.c.Free(m) }
func (o *ctxOps) memset32(p compute.Ptr, v uint32, n int) error {
	return o.c.Memset32(p, v, n)
}
func (o *ctxOps) sync() error { return o.c.Sync() }
func (o *ctxOps) launch(kernel string, grid, block compute.Dim3, shared int, args ...any) error {
	return o.c.Launch(o.k[kernel], grid, block, shared, args...)
}

func (o *ctxOps) upload(p compute.Ptr, v any) error {
	switch x := v.(type) {
	case []int32:
		return compute.Upload(o.c, p, x)
	case []float64:
		return compute.Upload(o.c, p, x)
	}
	panic(fmt.Sprintf("cluster: upload of %T", v))
}

func (o *ctxOps) download(p compute.Ptr, v any) error {
	switch x := v.(type) {
	case []int32:
		return compute.Download(o.c, x, p)
	case []float64:
		return compute.Download(o.c, x, p)
	}
	panic(fmt.Sprintf("cluster: download into %T", v))
}

// scoreBlockCUDA is SCORE_BLOCK of kernels/cluster.cu: the threads of a
// score block and the spikes of a block sum, scoreBlock of the CPU.
const scoreBlockCUDA = scoreBlock

// sampleGroups draws each live group's candidates from its weights (the
// CPU's sampler and generator): cand[g·Q …], nq[g] (0 for a finished
// group, which draws nothing more, as the CPU loop stops).
func sampleGroups(dg []*devGroup, meta []int32, w []float64, Q int, cand, nq []int32, workers int) {
	if workers == 0 {
		workers = 64
	}
	par.Each(len(dg), workers, func(_, i int) {
		g := dg[i]
		if g.done {
			nq[i] = 0
			return
		}
		o := int(meta[i*metaLen+metaSpk])
		q := sampleWeighted(g.rng, w[o:o+g.n], Q, nil, nil)
		nq[i] = int32(len(q))
		if len(q) == 0 {
			g.done = true
		}
		copy(cand[i*Q:], q)
	})
}

// graphFromTable builds a group's graph from its kNN table (row stride
// ld, k entries per row).
func graphFromTable(n int, land []int32, k int, tab []int32, ld int) *graph {
	g := &graph{n: n, s: len(land), k: k, land: land, kn: make([]int32, n*k), selfOf: make([]int32, n)}
	for i := range g.selfOf {
		g.selfOf[i] = -1
	}
	for j, i := range land {
		g.selfOf[i] = int32(j)
	}
	for i := 0; i < n; i++ {
		copy(g.kn[i*k:(i+1)*k], tab[i*ld:i*ld+k])
	}
	g.links()
	return g
}
