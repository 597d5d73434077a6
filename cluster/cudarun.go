package cluster

import (
	"time"

	"dspk/compute"
)

// runOn is run on the device operations o: the groups' rows and layout
// uploaded, their kNN graphs, the k-means++ seeding and the assignment
// rounds, each a stage of a devRun.
func runOn(o devOps, dg []*devGroup, lay *layout, prm *Params, times *stageTimes) (err error) {
	r := &devRun{o: o, dg: dg, lay: lay, prm: prm, times: times,
		G: len(dg), K: prm.InitLabels, Q: prm.Candidates,
		nblk:      (lay.maxN + scoreBlockCUDA - 1) / scoreBlockCUDA,
		spikeGrid: compute.Dim3{X: (lay.maxN + tile - 1) / tile, Y: len(dg)}}
	defer func() {
		if e := r.free(); e != nil && err == nil {
			err = e
		}
	}()
	for _, stage := range []func() error{r.upload, r.knn, r.kmeans, r.assign} {
		if err := stage(); err != nil {
			return err
		}
	}
	return nil
}

// devRun is one runOn: its device operations, groups and parameters, and
// the device buffers its stages share (freed by free).
type devRun struct {
	o     devOps
	dg    []*devGroup
	lay   *layout
	prm   *Params
	times *stageTimes

	mems []compute.Mem // every buffer allocated, for free
	err  error         // the first allocation error

	G, K, Q, nblk int
	spikeGrid     compute.Dim3 // a thread per spike of every group

	dX, dMeta, dLand, dKn compute.Ptr // rows, meta, landmarks, kNN table
	// k-means++: squared norms, distances to the centres, weights,
	// labels, candidates and their count, partial and total scores, the
	// best candidate of each group.
	dV, dE, dW, dC, dCand, dNq, dPart, dTot, dBest compute.Ptr
}

// alloc returns a device buffer of bytes (at least 8), or 0 once an
// allocation has failed (r.err).
func (r *devRun) alloc(bytes int) compute.Ptr {
	if r.err != nil {
		return 0
	}
	m, err := r.o.alloc(max(bytes, 8))
	if err != nil {
		r.err = err
		return 0
	}
	r.mems = append(r.mems, m)
	return m.Ptr
}

// free frees every buffer of r and returns the first error (or the
// failed allocation's).
func (r *devRun) free() error {
	err := r.err
	for _, m := range r.mems {
		if e := r.o.free(m); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// devWords is n 32-bit words of device memory from p.
type devWords struct {
	p compute.Ptr
	n int
}

// fill sets the words of each of ps to v.
func (r *devRun) fill(v uint32, ps ...devWords) error {
	for _, p := range ps {
		if err := r.o.memset32(p.p, v, p.n); err != nil {
			return err
		}
	}
	return nil
}

// upload allocates the buffers of the kNN and k-means++ stages, fills
// the outputs and scratch with NaN / −1 (so that anything a kernel fails
// to write shows) and uploads the rows, meta and landmarks.
func (r *devRun) upload() error {
	lay, G, Q, nSpk := r.lay, r.G, r.Q, r.lay.nSpk
	r.dX, r.dMeta, r.dLand = r.alloc(lay.nX*8), r.alloc(len(lay.meta)*4), r.alloc(len(lay.land)*4)
	r.dKn = r.alloc(nSpk * cudaKMax * 4)
	r.dV, r.dE, r.dW, r.dC = r.alloc(nSpk*8), r.alloc(nSpk*8), r.alloc(nSpk*8), r.alloc(nSpk*4)
	r.dCand, r.dNq = r.alloc(G*Q*4), r.alloc(G*4)
	r.dPart, r.dTot, r.dBest = r.alloc(G*r.nblk*Q*8), r.alloc(G*Q*8), r.alloc(G*4)
	if r.err != nil {
		return r.err
	}
	err := r.fill(0xffffffff, []devWords{{r.dKn, nSpk * cudaKMax}, {r.dV, 2 * nSpk}, {r.dW, 2 * nSpk}, {r.dPart, 2 * G * r.nblk * Q}, {r.dTot, 2 * G * Q}, {r.dBest, G}}...)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := r.uploadRows(); err != nil {
		return err
	}
	if err := r.o.upload(r.dMeta, lay.meta); err != nil {
		return err
	}
	if err := r.o.upload(r.dLand, lay.land); err != nil {
		return err
	}
	if err := r.o.sync(); err != nil {
		return err
	}
	r.times.upload = time.Since(t0)
	return nil
}

// uploadRows uploads the groups' float64 rows: the layout's, or one
// group's at a time, built from the float32 features into a reused
// buffer, to its place on the device.
func (r *devRun) uploadRows() error {
	if r.lay.x != nil {
		return r.o.upload(r.dX, r.lay.x)
	}
	var buf []float64
	for i, g := range r.dg {
		rows := g.x
		if g.in != nil {
			buf = growF(buf, g.n*g.d)
			clear(buf)
			groupFeaturesInto(buf, g.in, g.w.spikes, g.w.ichan)
			rows = buf
		}
		if err := r.o.upload(r.dX.Add(8*int(r.lay.meta[i*metaLen+metaX])), rows); err != nil {
			return err
		}
	}
	return nil
}

// knn computes the kNN table on the device and builds each group's graph
// from it.
func (r *devRun) knn() error {
	t1 := time.Now()
	if err := r.o.launch("knn", r.spikeGrid, compute.D1(tile), 0, r.dX, r.dMeta, r.dLand, r.dKn); err != nil {
		return err
	}
	kn := make([]int32, r.lay.nSpk*cudaKMax)
	if err := r.o.download(r.dKn, kn); err != nil {
		return err
	}
	r.times.knn = time.Since(t1)
	for i, g := range r.dg {
		m := r.lay.meta[i*metaLen:]
		g.g = graphFromTable(g.n, g.land, int(m[metaK]), kn[int(m[metaSpk])*cudaKMax:], cudaKMax)
	}
	return nil
}

// kmeans runs the k-means++ seeding: K rounds (fewer once every group is
// finished) of weights on the device, candidates drawn on the host, and
// their scores, pick and update on the device.
func (r *devRun) kmeans() error {
	o, prm, nSpk := r.o, r.prm, r.lay.nSpk
	G, K, Q, nblk := r.G, r.K, r.Q, r.nblk
	if err := o.launch("norms", r.spikeGrid, compute.D1(tile), 0, r.dX, r.dMeta, r.dV); err != nil {
		return err
	}
	if err := o.memset32(r.dE, 0, nSpk*2); err != nil {
		return err
	}
	if err := o.memset32(r.dC, 0, nSpk); err != nil {
		return err
	}
	w := make([]float64, nSpk)
	cand := make([]int32, G*Q)
	nq := make([]int32, G)
	for _, g := range r.dg {
		g.rng = initRNG(prm.ClusterInitSeed)
	}
	flat := compute.D1((nSpk + 255) / 256)
	t2 := time.Now()
	r.times.rounds = 0
	for j := 0; j < K; j++ {
		if prm.halted() {
			return errHalted
		}
		r.times.rounds = j + 1
		if err := o.launch("weights", flat, compute.D1(256), 0, r.dV, r.dE, r.dW, int32(nSpk)); err != nil {
			return err
		}
		if err := o.download(r.dW, w); err != nil {
			return err
		}
		live := false
		sampleGroups(r.dg, r.lay.meta, w, Q, cand, nq, prm.Workers)
		for _, v := range nq {
			live = live || v > 0
		}
		if !live {
			break
		}
		if err := o.upload(r.dCand, cand); err != nil {
			return err
		}
		if err := o.upload(r.dNq, nq); err != nil {
			return err
		}
		err := o.launch("score", compute.Dim3{X: nblk, Y: G}, compute.D1(scoreBlockCUDA), 0,
			r.dX, r.dMeta, r.dV, r.dE, r.dCand, r.dNq, int32(Q), int32(nblk), r.dPart)
		if err != nil {
			return err
		}
		err = o.launch("pick", compute.D1(G), compute.D1(128), 0, r.dMeta, r.dCand, r.dNq, int32(Q), int32(nblk), r.dPart, r.dTot, r.dBest)
		if err != nil {
			return err
		}
		if err := o.launch("update", r.spikeGrid, compute.D1(tile), 0, r.dX, r.dMeta, r.dV, r.dBest, int32(j), r.dE, r.dC); err != nil {
			return err
		}
	}
	if err := o.sync(); err != nil {
		return err
	}
	r.times.kmeans = time.Since(t2)
	return nil
}

// assign runs the assignment rounds on the device and sets each group's
// spike labels (w.labels).
func (r *devRun) assign() error {
	o, prm, lay := r.o, r.prm, r.lay
	G, K, nSpk, nLand := r.G, r.K, lay.nSpk, len(lay.land)
	t3 := time.Now()
	ki, ks, lam, inStart, inList := lay.links(r.dg, prm.Lambda)
	dKi, dKs, dLam := r.alloc(nSpk*4), r.alloc(nLand*4), r.alloc(G*8)
	dInStart, dInList := r.alloc(len(inStart)*4), r.alloc(len(inList)*4)
	dD, dNk, dOrder, dScratch := r.alloc(nLand*4), r.alloc(G*K*4), r.alloc(G*K*4), r.alloc(nLand*K*4)
	if r.err != nil {
		return r.err
	}
	err := r.fill(0xffffffff, []devWords{{dD, nLand}, {dNk, G * K}, {dOrder, G * K}, {dScratch, nLand * K}}...)
	if err != nil {
		return err
	}
	for _, u := range []struct {
		p compute.Ptr
		v []int32
	}{{r.dMeta, lay.meta}, {dKi, ki}, {dKs, ks}, {dInStart, inStart}, {dInList, inList}} {
		if err := o.upload(u.p, u.v); err != nil {
			return err
		}
	}
	if err := o.upload(dLam, lam); err != nil {
		return err
	}
	landGrid := compute.Dim3{X: (lay.maxS + tile - 1) / tile, Y: G}
	for range prm.Rounds {
		if prm.halted() {
			return errHalted
		}
		if err := o.launch("sizes", compute.D1(G), compute.D1(256), K*4, r.dMeta, r.dC, int32(1), int32(K), dNk, dOrder); err != nil {
			return err
		}
		err := o.launch("landmarkStep", landGrid, compute.D1(tile), 0, r.dMeta, dLam, dKs, dInStart, dInList, r.dC, dNk, int32(K), dScratch, dD)
		if err != nil {
			return err
		}
		if err := o.launch("sizes", compute.D1(G), compute.D1(256), K*4, r.dMeta, dD, int32(0), int32(K), dNk, dOrder); err != nil {
			return err
		}
		if err := o.launch("spikeStep", r.spikeGrid, compute.D1(tile), 0, r.dMeta, dLam, dKi, r.dKn, dD, dNk, dOrder, int32(K), r.dC); err != nil {
			return err
		}
	}
	labels := make([]int32, nSpk)
	if err := o.download(r.dC, labels); err != nil {
		return err
	}
	r.times.assign = time.Since(t3)
	for i, g := range r.dg {
		off := int(lay.meta[i*metaLen+metaSpk])
		g.w.labels = append([]int32(nil), labels[off:off+g.n]...)
	}
	return nil
}
