package match

import (
	"fmt"
	"math/bits"
	"runtime"

	"dspk/compute"
	"dspk/detect"
	"dspk/internal/par"
)

// chunkCols is the number of columns one worker filters and projects at a
// time: the PCA responses of every channel for these columns (C·P·chunkCols
// float32, 18.9 MB for NP1) stay in its buffer instead of the whole
// window's (554 MB).
const chunkCols = 2048

// Matcher peels whitened windows against a fixed set of learned templates.
// Build it with [NewMatcher]; it is not safe for concurrent use.
type Matcher struct {
	prm     Params
	n, c, p int
	nt      int
	tm      Templates
	chans   [][]int32   // support channels per template
	coef    [][]float32 // [support channel][P] per template
	proj    []projRows  // the rows and float64 coefficients of the projection per template
	nm      []float64   // ‖U_u‖²
	inv     []float64   // 1/‖U_u‖²
	best    []int32     // best channel per template
	icc     []int32     // [C][NearestChans]
	nbr     [][]int32   // templates sharing a channel with u
	nbrMask []uint64    // per template: the score groups holding its neighbours
	gsize   int         // templates per score group
	kc      [][]float32 // [neighbour][2nt−1] per template
	ut      [][]float32 // [support channel][nt] per template
	used    []bool      // channels some template uses
	bank    *detect.FilterBank
	workers int
	gpu     *cudaMatcher // the CUDA back end, nil on the CPU

	// per-window buffers, grown to the window's length
	b       []float32 // [N][T]
	s       []float64 // best score per column
	su      []int32   // its template
	sbar    []float64 // running maximum of s over ±nt
	xres    []float32 // the residual [C][T]
	feat    []float32 // the found spikes' features [found][NearestChans·P]
	found   []spike
	round   []spike
	sc      []float64   // running-maximum scratch
	spans   [][2]int    // column intervals to score
	changed [][2]int    // column intervals whose B the last round changed
	gs      [][]float64 // per template group: best score per column
	gsu     [][]int32   // and its template
	gspans  [][][2]int  // per template group: column intervals to rescore
	rounds  int
	// pscratch is each projection worker's correlator and filtered chunk,
	// kept from window to window.
	pscratch []projScratch
}

// projScratch is one projection worker's scratch.
type projScratch struct {
	cor *detect.Correlator
	bc  []float32
}

// spike is one detection of a round: column, template, coefficient and
// projection.
type spike struct {
	t    int
	u    int32
	a, q float64
}

// NewMatcher builds a matcher of the templates tm on dev (nil means the
// CPU; a CUDA device gets the CUDA back end, which holds the templates'
// tables in device memory until [Matcher.Close]) for a probe whose sites
// are at x, y µm. It copies tm.
func NewMatcher(dev *compute.Device, tm Templates, x, y []float64, prm Params) (*Matcher, error) {
	if dev != nil && dev.Kind() != compute.CPU && dev.Kind() != compute.CUDA {
		return nil, fmt.Errorf("match: no back end for device %v", dev)
	}
	if err := prm.Validate(); err != nil {
		return nil, err
	}
	if err := tm.check(prm.NT); err != nil {
		return nil, err
	}
	if err := checkGeometry(x, y, tm.C, prm.NearestChans); err != nil {
		return nil, err
	}
	tm.U = append([]float32(nil), tm.U...)
	tm.WPCA = append([]float32(nil), tm.WPCA...)
	m := &Matcher{prm: prm, n: tm.N, c: tm.C, p: tm.P, nt: prm.NT, tm: tm,
		workers: max(1, runtime.GOMAXPROCS(0))}
	m.chans, m.coef, m.nm, m.best = support(&tm)
	m.inv = make([]float64, len(m.nm))
	for u, v := range m.nm {
		m.inv[u] = 1 / v
	}
	m.proj = make([]projRows, tm.N)
	for u := range m.proj {
		m.proj[u] = newProjRows(m.chans[u], m.coef[u], tm.P)
	}
	m.icc = nearest(x, y, prm.NearestChans)
	m.nbr, m.kc = pairs(&tm, m.chans, basisLags(tm.WPCA, tm.P, prm.NT), prm.NT)
	m.ut = timeTemplates(&tm, m.chans, prm.NT)
	// At most 64 score groups (one bit each in nbrMask), of at least 32
	// templates.
	m.gsize = max(32, (tm.N+63)/64)
	m.nbrMask = make([]uint64, tm.N)
	for u, vs := range m.nbr {
		for _, v := range vs {
			m.nbrMask[u] |= 1 << (int(v) / m.gsize)
		}
	}
	m.used = make([]bool, tm.C)
	for _, cs := range m.chans {
		for _, c := range cs {
			m.used[c] = true
		}
	}
	m.bank = detect.NewFilterBank(tm.WPCA, tm.P, prm.NT)
	if dev != nil && dev.Kind() == compute.CUDA {
		g, err := newCUDAMatcher(dev, m)
		if err != nil {
			return nil, err
		}
		m.gpu = g
	}
	return m, nil
}

// PreferShortWindows makes the CPU back end filter windows by the PCA
// basis with short transforms ([detect.NewShortFilterBank]): a stream's
// windows of a few hundred columns cost a fifth as much, and a sort's
// windows of 60 000 columns more. Spikes can differ from the long
// transforms' where float64 rounding moves a score across the threshold.
// Call it before the first window.
func (m *Matcher) PreferShortWindows() {
	m.bank = detect.NewShortFilterBank(m.tm.WPCA, m.p, m.nt)
	m.pscratch = nil
}

// Params returns the matcher's settings.
func (m *Matcher) Params() Params { return m.prm }

// Templates returns the number of templates.
func (m *Matcher) Templates() int { return m.n }

// Channels returns the feature channels of template u (Kilosort4's
// iCC[:, iU_u]): the NearestChans channels nearest its best channel.
func (m *Matcher) Channels(u int) []int32 {
	b := int(m.best[u])
	nc := m.prm.NearestChans
	return m.icc[b*nc : (b+1)*nc]
}

// BestChannel returns template u's best channel (Kilosort4's iU).
func (m *Matcher) BestChannel(u int) int { return int(m.best[u]) }

// Rounds returns the matching rounds the last window took.
func (m *Matcher) Rounds() int { return m.rounds }

// Match peels one whitened window x ([C][T] row-major; column nt is file
// sample ownStart and the window owns columns [nt, nt+owned)) and appends
// its spikes to dst in order of column, then template. A spike's column is
// the centre of its template; its trough sample is ownStart + (t − nt) −
// (nt/2 − nt0min), and spikes whose trough would fall before sample 0 are
// dropped (as Kilosort4 drops them in its first batch). Match panics if
// len(x) is not a multiple of C or owned is not in [1, T−2nt], or if the
// CUDA back end fails (use [Matcher.MatchWindow] there, which returns
// errors); on a CUDA device it uploads x first.
func (m *Matcher) Match(dst *Spikes, x []float32, ownStart int64, owned int) {
	if err := m.MatchHost(dst, x, ownStart, owned); err != nil {
		panic(err)
	}
}

// MatchHost is [Matcher.Match] returning the CUDA back end's errors
// instead of panicking (a host window, as a stream's blocks are).
func (m *Matcher) MatchHost(dst *Spikes, x []float32, ownStart int64, owned int) error {
	C, nt := m.c, m.nt
	if len(x)%C != 0 {
		panic(fmt.Sprintf("match: window of %d values for %d channels", len(x), C))
	}
	T := len(x) / C
	if owned < 1 || owned > T-2*nt {
		panic(fmt.Sprintf("match: %d owned columns of a %d-column window with %d of context", owned, T, nt))
	}
	if m.gpu != nil {
		return m.matchDevice(dst, nil, x, T, ownStart, owned)
	}
	m.grow(T)
	m.project(x, T)
	m.peel(T, owned)
	m.residual(x, T)
	m.features(dst, T, ownStart)
	return nil
}

// grow sizes the per-window buffers for windows of T columns.
func (m *Matcher) grow(T int) {
	if len(m.s) == T {
		return
	}
	if cap(m.s) >= T && cap(m.b) >= m.n*T && cap(m.xres) >= m.c*T {
		// Shorter windows (a stream's blocks) reuse the buffers, cleared
		// as a fresh allocation would be.
		m.b, m.s, m.sbar, m.su, m.xres = m.b[:m.n*T], m.s[:T], m.sbar[:T], m.su[:T], m.xres[:m.c*T]
		clear(m.b)
		clear(m.s)
		clear(m.sbar)
		clear(m.su)
		clear(m.xres)
		for g := range m.gs {
			m.gs[g], m.gsu[g] = m.gs[g][:T], m.gsu[g][:T]
			clear(m.gs[g])
			clear(m.gsu[g])
		}
		return
	}
	m.b = make([]float32, m.n*T)
	m.s, m.sbar = make([]float64, T), make([]float64, T)
	m.su = make([]int32, T)
	m.xres = make([]float32, m.c*T)
	G := (m.n + m.gsize - 1) / m.gsize
	m.gs, m.gsu, m.gspans = make([][]float64, G), make([][]int32, G), make([][][2]int, G)
	for g := range G {
		m.gs[g], m.gsu[g] = make([]float64, T), make([]int32, T)
	}
}

// project sets B[u,t] = Σ_{c,p} U[u,c,p]·Bc[c,p,t], with Bc the window's
// channels filtered by the PCA basis, chunk by chunk over the columns.
func (m *Matcher) project(x []float32, T int) {
	C, P := m.c, m.p
	chunks := (T + chunkCols - 1) / chunkCols
	nw := min(m.workers, chunks)
	for len(m.pscratch) < max(1, nw) {
		m.pscratch = append(m.pscratch, projScratch{})
	}
	ws := m.pscratch
	par.Each(chunks, nw, func(g, ch int) {
		if ws[g].bc == nil {
			ws[g] = projScratch{m.bank.Correlator(), make([]float32, C*P*chunkCols)}
		}
		cor, bc := ws[g].cor, ws[g].bc
		e0 := ch * chunkCols
		w := min(chunkCols, T-e0)
		// Two used channels per transform.
		var pend = -1
		for c := range C {
			if !m.used[c] {
				continue
			}
			if pend < 0 {
				pend = c
				continue
			}
			cor.Correlate(bc[pend*P*w:(pend+1)*P*w], x[pend*T:(pend+1)*T], bc[c*P*w:(c+1)*P*w], x[c*T:(c+1)*T], e0, w)
			pend = -1
		}
		if pend >= 0 {
			cor.Correlate(bc[pend*P*w:(pend+1)*P*w], x[pend*T:(pend+1)*T], nil, nil, e0, w)
		}
		for u := range m.n {
			project(m.b[u*T+e0:u*T+e0+w], bc[:C*P*w], m.proj[u], w)
		}
	})
}

// score recomputes the best score s(t) = max_u max(B[u,t],0)²/‖U_u‖² and
// its first maximiser: over every column in [nt, T−nt) when round is nil,
// else over the columns within nt−1 of a spike of round (the columns whose
// B that round's subtractions changed; those outside [nt, T−nt) score 0).
//
// The templates go in groups of m.gsize consecutive indices, each keeping
// its own best score and first maximiser per column (gs, gsu): a spike of
// template u changes B only for u's neighbours (nbr), so only the groups
// holding one of them (nbrMask) are rescored on its columns, and a
// column's s and su are then the groups' in group order with a strict
// comparison: the maximum, ties to the lowest template, as a scan of every
// template gives.
func (m *Matcher) score(T int, round []spike) {
	nt, G := m.nt, len(m.gs)
	// Each group's column intervals to rescore, and their union.
	for g := range G {
		m.gspans[g] = m.gspans[g][:0]
	}
	m.spans, m.changed = m.spans[:0], m.changed[:0]
	if round == nil {
		clear(m.s)
		clear(m.su)
		for g := range G {
			m.gspans[g] = append(m.gspans[g], [2]int{nt, T - nt})
		}
		m.spans = append(m.spans, [2]int{nt, T - nt})
	} else {
		for _, sp := range round {
			lo, hi := sp.t-(nt-1), sp.t+nt
			m.changed = addSpan(m.changed, lo, hi)
			for t := lo; t < hi; t++ {
				if t < nt || t >= T-nt {
					m.s[t], m.su[t] = 0, 0
				}
			}
			lo, hi = max(lo, nt), min(hi, T-nt)
			if lo >= hi {
				continue
			}
			m.spans = addSpan(m.spans, lo, hi)
			for mask := m.nbrMask[sp.u]; mask != 0; mask &= mask - 1 {
				g := bits.TrailingZeros64(mask)
				m.gspans[g] = addSpan(m.gspans[g], lo, hi)
			}
		}
	}
	work := 0
	for g := range G {
		for _, sp := range m.gspans[g] {
			work += (sp[1] - sp[0]) * m.gsize
		}
	}
	nw := min(m.workers, G)
	if nw <= 1 || work < scoreMinWork {
		for g := range G {
			m.scoreGroup(T, g)
		}
	} else {
		par.Each(G, nw, func(_, g int) { m.scoreGroup(T, g) })
	}
	// Group by group over blocks of columns, so that each group's scores
	// are read in order and the block's s and su stay in cache; each span
	// split between workers.
	cols := 0
	for _, sp := range m.spans {
		cols += sp[1] - sp[0]
	}
	m.split(cols*G, func(w, nw int) {
		for _, sp := range m.spans {
			n := sp[1] - sp[0]
			a, b := sp[0]+w*n/nw, sp[0]+(w+1)*n/nw
			clear(m.s[a:b])
			clear(m.su[a:b])
			for lo := a; lo < b; lo += scoreCols {
				hi := min(lo+scoreCols, b)
				s, su := m.s[lo:hi], m.su[lo:hi]
				for g := range G {
					gs, gsu := m.gs[g][lo:hi], m.gsu[g][lo:hi]
					for i, v := range gs {
						if v > s[i] {
							s[i], su[i] = v, gsu[i]
						}
					}
				}
			}
		}
	})
}

// addSpan adds [lo, hi) to spans, which are sorted and disjoint with lo
// not below the last one's start (spikes come in column order): it
// extends the last interval where they overlap or touch.
func addSpan(spans [][2]int, lo, hi int) [][2]int {
	if n := len(spans); n > 0 && lo <= spans[n-1][1] {
		spans[n-1][1] = max(spans[n-1][1], hi)
		return spans
	}
	return append(spans, [2]int{lo, hi})
}

// Work below which score runs on one goroutine (template-columns).
const scoreMinWork = 1 << 20

// scoreGroup rescores group g's templates over its intervals into gs[g]
// and gsu[g]: where max(B[u,t],0)²/‖U_u‖² beats the group's best so far,
// it and u replace them (the first maximiser keeps a tie). The columns go
// in blocks of scoreCols, every template over one block before the next,
// so that block's scores stay in the first-level cache while the rows of
// B stream past; each column still sees the templates in order.
func (m *Matcher) scoreGroup(T, g int) {
	u0, u1 := g*m.gsize, min(m.n, (g+1)*m.gsize)
	s, su := m.gs[g], m.gsu[g]
	for _, sp := range m.gspans[g] {
		clear(s[sp[0]:sp[1]])
		clear(su[sp[0]:sp[1]])
		for lo := sp[0]; lo < sp[1]; lo += scoreCols {
			hi := min(lo+scoreCols, sp[1])
			for u := u0; u < u1; u++ {
				scoreRow(m.b[u*T:(u+1)*T], s, su, lo, hi, m.inv[u], int32(u))
			}
		}
	}
}

// scoreCols is the column block of scoreGroup: its scores (12 bytes a
// column) fit the first-level cache with room for the rows.
const scoreCols = 1024

// runningMax sets sbar[t] = max of s over |t'−t| ≤ nt (within the window).
func (m *Matcher) runningMax(T int) { m.runningMaxRange(T, 0, T) }

// runningMaxRange sets sbar[t] for t in [lo, hi) to the max of s over
// |t'−t| ≤ nt within the window. Scores are never NaN nor −0 (they start
// at +0 and only grow through ordered comparisons), so a plain comparison
// is the maximum.
func (m *Matcher) runningMaxRange(T, lo, hi int) {
	nt := m.nt
	// Block maxima from the left and right (van Herk / Gil–Werman) over
	// blocks of 2nt+1 columns from base: max over [t−nt, t+nt] =
	// max(right[t−nt], left[t+nt]) where left/right are prefix/suffix
	// maxima within blocks.
	w := 2*nt + 1
	base, end := max(0, lo-nt), min(T, hi+nt)
	left, right := m.scratch(T)
	for b0 := base; b0 < end; b0 += w {
		b1 := min(end, b0+w)
		v := m.s[b0]
		left[b0] = v
		for t := b0 + 1; t < b1; t++ {
			if x := m.s[t]; x > v {
				v = x
			}
			left[t] = v
		}
		v = m.s[b1-1]
		right[b1-1] = v
		for t := b1 - 2; t >= b0; t-- {
			if x := m.s[t]; x > v {
				v = x
			}
			right[t] = v
		}
	}
	for t := lo; t < hi; t++ {
		l, h := max(0, t-nt), min(T-1, t+nt)
		if (l-base)/w == (h-base)/w {
			// The range lies inside one block: scan it.
			v := m.s[l]
			for i := l + 1; i <= h; i++ {
				if x := m.s[i]; x > v {
					v = x
				}
			}
			m.sbar[t] = v
			continue
		}
		v := right[l]
		if x := left[h]; x > v {
			v = x
		}
		m.sbar[t] = v
	}
}

// scratch returns two float64 buffers of T values.
func (m *Matcher) scratch(T int) (a, b []float64) {
	if cap(m.sc) < 2*T {
		m.sc = make([]float64, 2*T)
	}
	return m.sc[:T], m.sc[T : 2*T]
}
