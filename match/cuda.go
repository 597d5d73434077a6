package match

import (
	_ "embed"
	"fmt"

	"dspk/compute"
)

//go:embed kernels/match.cu
var gpuSource string

// Limits of the kernels' shared-memory tiles (kernels/match.cu).
const (
	gpuThreads = 256  // FILTER_THREADS: block size of the column kernels
	gpuMaxNT   = 255  // MAX_NT
	gpuMaxPNT  = 2048 // MAX_PNT: P·nt
	gpuMaxSeg  = 8192 // MAX_SEG: nearest_chans·nt
	gpuChunk   = 4096 // columns filtered and projected per pass (C·P·4096 float32 stay in L2)
	gpuBlocks  = 512  // blocks of the update, rank and features kernels
)

// Indices of the device state (ST_ in kernels/match.cu).
const (
	stStop   = 0
	stOver   = 1
	stRounds = 2
	stN      = 3
	stLen    = 8
)

// cudaMatcher is the Matcher's CUDA back end: the templates' tables on the
// device, and per window the projection (filter and project kernels per
// chunk of columns), the peeling rounds, the sort of the spikes and their
// features, all on the device; only the spikes come back.
type cudaMatcher struct {
	dev                                                 *compute.Device
	filter, project, score, runmax, peakCount           *compute.Kernel
	peakWrite, update, rank, features                   *compute.Kernel
	wpca, used, inv, nm, nbrOff, nbr, nbrIdx, kcOff, kc compute.Mem
	chanIdx, utOff, ut, icc, best, u                    compute.Mem
	supOff, sup, coef                                   compute.Mem
	T, cap                                              int
	x, bc, b, s, sbar, su, stamp, cnt, st, roundStart   compute.Mem
	ft, fu, fa, fq, gt, gu, ga, gq, feat                compute.Mem
	hostT                                               []int32
	hostU                                               []int32
	hostA, hostQ                                        []float64
	hostF                                               []float32
	hostSt                                              []int32
}

// newCUDAMatcher uploads m's tables to dev and compiles the kernels.
func newCUDAMatcher(dev *compute.Device, m *Matcher) (*cudaMatcher, error) {
	nt, P := m.nt, m.p
	nc := m.prm.NearestChans
	switch {
	case nt > gpuMaxNT:
		return nil, fmt.Errorf("match: the CUDA back end takes templates of at most %d samples, not nt = %d", gpuMaxNT, nt)
	case P*nt > gpuMaxPNT:
		return nil, fmt.Errorf("match: the CUDA back end takes at most %d basis values (P·nt), not %d·%d", gpuMaxPNT, P, nt)
	case nc*nt > gpuMaxSeg:
		return nil, fmt.Errorf("match: the CUDA back end takes at most %d feature samples (nearest_chans·nt), not %d·%d", gpuMaxSeg, nc, nt)
	}
	g := &cudaMatcher{dev: dev}
	t := buildTables(m)
	err := dev.Do(func(c *compute.Ctx) error {
		mod, err := c.Compile("match/kernels/match.cu", gpuSource, "--fmad=false")
		if err != nil {
			return err
		}
		for _, k := range []struct {
			p    **compute.Kernel
			name string
		}{{&g.filter, "filter"}, {&g.project, "project"}, {&g.score, "score"}, {&g.runmax, "runmax"}, {&g.peakCount, "peakCount"},
			{&g.peakWrite, "peakWrite"}, {&g.update, "update"}, {&g.rank, "rank"}, {&g.features, "features"}} {
			if *k.p, err = mod.Kernel(k.name); err != nil {
				return err
			}
		}
		up := func(dst *compute.Mem, bytes int, f func(compute.Ptr) error) {
			if err != nil {
				return
			}
			if *dst, err = c.Alloc(max(bytes, 8)); err == nil && bytes > 0 {
				err = f(dst.Ptr)
			}
		}
		f32 := func(dst *compute.Mem, v []float32) {
			up(dst, 4*len(v), func(p compute.Ptr) error { return compute.Upload(c, p, v) })
		}
		f64 := func(dst *compute.Mem, v []float64) {
			up(dst, 8*len(v), func(p compute.Ptr) error { return compute.Upload(c, p, v) })
		}
		i32 := func(dst *compute.Mem, v []int32) {
			up(dst, 4*len(v), func(p compute.Ptr) error { return compute.Upload(c, p, v) })
		}
		i64 := func(dst *compute.Mem, v []int64) {
			up(dst, 8*len(v), func(p compute.Ptr) error { return compute.Upload(c, p, v) })
		}
		f32(&g.wpca, m.tm.WPCA)
		i32(&g.used, t.used)
		f64(&g.inv, t.inv)
		f64(&g.nm, m.nm)
		i32(&g.nbrOff, t.nbrOff)
		i32(&g.nbr, t.nbr)
		i32(&g.nbrIdx, t.nbrIdx)
		i64(&g.kcOff, t.kcOff)
		f32(&g.kc, t.kc)
		i32(&g.chanIdx, t.chanIdx)
		i64(&g.utOff, t.utOff)
		f32(&g.ut, t.ut)
		i32(&g.icc, m.icc)
		i32(&g.best, m.best)
		f32(&g.u, m.tm.U)
		i32(&g.supOff, t.supOff)
		i32(&g.sup, t.sup)
		f32(&g.coef, t.coef)
		return err
	})
	if err != nil {
		g.close()
		return nil, err
	}
	return g, nil
}

// tables are the matcher's per-template tables flattened for the device.
type tables struct {
	used        []int32   // [C] 1 if some template uses the channel
	inv         []float64 // 1/‖U_u‖²
	nbrOff, nbr []int32   // neighbours of u: nbr[nbrOff[u]:nbrOff[u+1]]
	nbrIdx      []int32   // [N][N]: index of v among u's neighbours, or −1
	kcOff       []int64   // start of kc[u] in kc
	kc          []float32 // the cross-correlations, as m.kc
	chanIdx     []int32   // [N][C]: index of c among u's channels, or −1
	utOff       []int64   // start of ut[u] in ut
	ut          []float32 // the time templates, as m.ut
	supOff, sup []int32   // support channels of u: sup[supOff[u]:supOff[u+1]]
	coef        []float32 // their coefficients [support channel][P], as m.coef
}

// buildTables flattens m's tables (the ones the CPU back end uses, so both
// back ends subtract the same float32 values).
func buildTables(m *Matcher) tables {
	N, C := m.n, m.c
	var t tables
	t.used = make([]int32, C)
	for c, u := range m.used {
		if u {
			t.used[c] = 1
		}
	}
	t.inv = make([]float64, N)
	t.nbrOff = make([]int32, N+1)
	t.nbrIdx = make([]int32, N*N)
	t.chanIdx = make([]int32, N*C)
	t.kcOff, t.utOff = make([]int64, N), make([]int64, N)
	t.supOff = make([]int32, N+1)
	for i := range t.nbrIdx {
		t.nbrIdx[i] = -1
	}
	for i := range t.chanIdx {
		t.chanIdx[i] = -1
	}
	for u := range N {
		t.inv[u] = 1 / m.nm[u]
		t.nbrOff[u+1] = t.nbrOff[u] + int32(len(m.nbr[u]))
		t.nbr = append(t.nbr, m.nbr[u]...)
		for i, v := range m.nbr[u] {
			t.nbrIdx[u*N+int(v)] = int32(i)
		}
		t.kcOff[u] = int64(len(t.kc))
		t.kc = append(t.kc, m.kc[u]...)
		for i, c := range m.chans[u] {
			t.chanIdx[u*C+int(c)] = int32(i)
		}
		t.utOff[u] = int64(len(t.ut))
		t.ut = append(t.ut, m.ut[u]...)
		t.supOff[u+1] = t.supOff[u] + int32(len(m.chans[u]))
		t.sup = append(t.sup, m.chans[u]...)
		t.coef = append(t.coef, m.coef[u]...)
	}
	return t
}

// grow sizes the per-window device buffers for windows of T columns.
func (g *cudaMatcher) grow(c *compute.Ctx, m *Matcher, T int) error {
	if g.T == T {
		return nil
	}
	if err := g.freeWindow(c); err != nil {
		return err
	}
	g.T, g.cap = 0, T
	N, P, C, nc := m.n, m.p, m.c, m.prm.NearestChans
	var err error
	alloc := func(dst *compute.Mem, bytes int) {
		if err == nil {
			*dst, err = c.Alloc(max(bytes, 8))
		}
	}
	alloc(&g.bc, C*P*min(T, gpuChunk)*4)
	alloc(&g.b, N*T*4)
	alloc(&g.s, T*8)
	alloc(&g.sbar, T*8)
	alloc(&g.su, T*4)
	alloc(&g.stamp, T*4)
	alloc(&g.cnt, (T/gpuThreads+1)*4)
	alloc(&g.st, stLen*4)
	alloc(&g.roundStart, (m.prm.MaxPeels+1)*4)
	for _, p := range []*compute.Mem{&g.ft, &g.fu, &g.gt, &g.gu} {
		alloc(p, g.cap*4)
	}
	for _, p := range []*compute.Mem{&g.fa, &g.fq, &g.ga, &g.gq} {
		alloc(p, g.cap*8)
	}
	alloc(&g.feat, g.cap*nc*P*4)
	if err != nil {
		return err
	}
	if err := c.Memset32(g.stamp.Ptr, 0, T); err != nil {
		return err
	}
	g.T = T
	return nil
}

// run matches the window at x ([C][T] float32 on the device) and appends
// its spikes to m.found (column, template, coefficient, projection) and
// their features to g.hostF.
func (g *cudaMatcher) run(c *compute.Ctx, m *Matcher, x compute.Ptr, T, owned int) error {
	if err := c.Memset32(g.st.Ptr, 0, stLen); err != nil {
		return err
	}
	if err := g.projectWindow(c, m, x, T); err != nil {
		return err
	}
	if err := g.peel(c, m, T, owned); err != nil {
		return err
	}
	return g.collect(c, m, x, T)
}

// projectWindow projects the window at x on the templates (B).
func (g *cudaMatcher) projectWindow(c *compute.Ctx, m *Matcher, x compute.Ptr, T int) error {
	N, C, P, nt := m.n, m.c, m.p, m.nt
	// Projection: B[:, e0:e0+w] = U [N, C·P] · Bc [C·P, w], chunk by chunk,
	// over each template's support channels only.
	for e0 := 0; e0 < T; e0 += gpuChunk {
		w := min(gpuChunk, T-e0)
		err := c.Launch(g.filter, compute.Dim3{X: (w + gpuThreads - 1) / gpuThreads, Y: C, Z: 1}, compute.D1(gpuThreads), 0,
			x, int32(T), g.wpca, int32(P), int32(nt), g.used, int32(e0), int32(w), g.bc)
		if err != nil {
			return err
		}
		err = c.Launch(g.project, compute.Dim3{X: (w + gpuThreads - 1) / gpuThreads, Y: N, Z: 1}, compute.D1(gpuThreads), 0,
			g.bc, int32(w), int32(e0), int32(T), int32(P), g.supOff, g.sup, g.coef, g.b)
		if err != nil {
			return err
		}
	}
	return nil
}

// peel runs the rounds of matching and subtraction on B, up to
// MaxPeels, stopping once a round finds nothing.
func (g *cudaMatcher) peel(c *compute.Ctx, m *Matcher, T, owned int) error {
	N, nt := m.n, m.nt
	if cap(g.hostSt) < stLen {
		g.hostSt = make([]int32, stLen)
	}
	th2 := m.prm.ThLearned * m.prm.ThLearned
	colBlocks := (T + gpuThreads - 1) / gpuThreads
	ownBlocks := (owned + gpuThreads - 1) / gpuThreads
	for r := range m.prm.MaxPeels {
		all := int32(0)
		if r == 0 {
			all = 1
		}
		if err := c.Launch(g.score, compute.D1(colBlocks), compute.D1(gpuThreads), 0,
			g.b, int32(N), int32(T), int32(nt), g.inv, g.stamp, int32(r), all, g.s, g.su, g.st); err != nil {
			return err
		}
		if err := c.Launch(g.runmax, compute.D1(colBlocks), compute.D1(gpuThreads), 0,
			g.s, int32(T), int32(nt), g.sbar, g.st); err != nil {
			return err
		}
		if err := c.Launch(g.peakCount, compute.D1(ownBlocks), compute.D1(gpuThreads), 0,
			g.s, g.sbar, int32(nt), int32(owned), th2, g.cnt, g.st); err != nil {
			return err
		}
		if err := c.Launch(g.peakWrite, compute.D1(ownBlocks), compute.D1(gpuThreads), 0,
			g.s, g.sbar, g.su, g.b, int32(T), int32(nt), int32(owned), th2, g.nm, g.cnt, int32(r), int32(g.cap),
			g.ft, g.fu, g.fa, g.fq, g.roundStart, g.st); err != nil {
			return err
		}
		if err := c.Launch(g.update, compute.D1(gpuBlocks), compute.D1(gpuThreads), 0,
			g.b, int32(N), int32(T), int32(nt), g.ft, g.fu, g.fa, g.nbrOff, g.nbr, g.nbrIdx, g.kcOff, g.kc,
			g.stamp, int32(r), g.st); err != nil {
			return err
		}
		// After rounds 4, 8, 16, …: read the state (32 bytes) and stop
		// launching once a round found nothing, so a window of k rounds
		// costs at most about 2k rounds of launches.
		if n := r + 1; n >= 4 && n&(n-1) == 0 && n < m.prm.MaxPeels {
			if err := compute.Download(c, g.hostSt, g.st.Ptr); err != nil {
				return err
			}
			if g.hostSt[stStop] != 0 {
				break
			}
		}
	}
	return nil
}

// collect ranks the spikes found, computes their features from the
// window at x, and brings them back to m.found and g.hostF.
func (g *cudaMatcher) collect(c *compute.Ctx, m *Matcher, x compute.Ptr, T int) error {
	C, P, nt := m.c, m.p, m.nt
	nc := m.prm.NearestChans
	if err := c.Launch(g.rank, compute.D1(gpuBlocks), compute.D1(gpuThreads), 0,
		g.ft, g.fu, g.fa, g.fq, g.roundStart, g.st, g.gt, g.gu, g.ga, g.gq); err != nil {
		return err
	}
	if err := c.Launch(g.features, compute.D1(gpuBlocks), compute.D1(gpuThreads), 0,
		x, int32(T), int32(C), int32(P), int32(nt), int32(nc), g.gt, g.gu, g.ga, g.st, g.chanIdx, g.utOff, g.ut,
		g.icc, g.best, g.wpca, g.u, g.feat); err != nil {
		return err
	}
	// The spikes come back: their number, then the arrays.
	if err := compute.Download(c, g.hostSt, g.st.Ptr); err != nil {
		return err
	}
	if g.hostSt[stOver] != 0 {
		return fmt.Errorf("match: more than %d spikes in a window of %d columns", g.cap, T)
	}
	n := int(g.hostSt[stN])
	m.rounds = int(g.hostSt[stRounds])
	g.hostT, g.hostU = grow(g.hostT, n), grow(g.hostU, n)
	g.hostA, g.hostQ = grow(g.hostA, n), grow(g.hostQ, n)
	g.hostF = grow(g.hostF, n*nc*P)
	if n > 0 {
		for _, d := range []error{
			compute.Download(c, g.hostT, g.gt.Ptr), compute.Download(c, g.hostU, g.gu.Ptr),
			compute.Download(c, g.hostA, g.ga.Ptr), compute.Download(c, g.hostQ, g.gq.Ptr),
			compute.Download(c, g.hostF, g.feat.Ptr),
		} {
			if d != nil {
				return d
			}
		}
	}
	m.found = m.found[:0]
	for i := range n {
		m.found = append(m.found, spike{t: int(g.hostT[i]), u: g.hostU[i], a: g.hostA[i], q: g.hostQ[i]})
	}
	return nil
}

// grow returns s resized to n values.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// freeWindow frees the per-window buffers.
func (g *cudaMatcher) freeWindow(c *compute.Ctx) error {
	var first error
	for _, p := range []*compute.Mem{&g.x, &g.bc, &g.b, &g.s, &g.sbar, &g.su, &g.stamp, &g.cnt, &g.st, &g.roundStart,
		&g.ft, &g.fu, &g.fa, &g.fq, &g.gt, &g.gu, &g.ga, &g.gq, &g.feat} {
		if p.Ptr != 0 {
			if err := c.Free(*p); err != nil && first == nil {
				first = err
			}
		}
		*p = compute.Mem{}
	}
	g.T = 0
	return first
}

// close frees everything g holds on the device.
func (g *cudaMatcher) close() error {
	return g.dev.Do(func(c *compute.Ctx) error {
		first := g.freeWindow(c)
		for _, p := range []*compute.Mem{&g.wpca, &g.used, &g.inv, &g.nm, &g.nbrOff, &g.nbr, &g.nbrIdx, &g.kcOff,
			&g.kc, &g.chanIdx, &g.utOff, &g.ut, &g.icc, &g.best, &g.u, &g.supOff, &g.sup, &g.coef} {
			if p.Ptr != 0 {
				if err := c.Free(*p); err != nil && first == nil {
					first = err
				}
			}
			*p = compute.Mem{}
		}
		return first
	})
}
