package match

import (
	"math"
	"slices"
	"sort"

	"dspk/internal/par"
)

// peel runs the matching rounds on B: each round finds the columns in
// [nt, nt+owned) whose best score is the largest within ±nt and above
// Th_learned², reads their coefficients, then subtracts every one of them
// from B through the templates' cross-correlations. The spikes of all
// rounds are left in m.found.
func (m *Matcher) peel(T, owned int) {
	nt := m.nt
	L := 2*nt - 1
	th2 := m.prm.ThLearned * m.prm.ThLearned
	m.found = m.found[:0]
	m.score(T, nil)
	m.rounds = 0
	m.runningMax(T)
	for m.rounds < m.prm.MaxPeels {
		m.round = m.round[:0]
		for t := nt; t < nt+owned; t++ {
			sb := m.sbar[t]
			if sb > th2 && math.Abs(sb-m.s[t]) < 1e-9 {
				u := m.su[t]
				bv := float64(m.b[int(u)*T+t])
				m.round = append(m.round, spike{t: t, u: u, a: bv / m.nm[u], q: bv / math.Sqrt(m.nm[u])})
			}
		}
		if len(m.round) == 0 {
			break
		}
		m.rounds++
		work := 0
		for _, sp := range m.round {
			work += len(m.nbr[sp.u]) * L
		}
		// The subtractions, the templates' rows split between workers:
		// each row still takes its spikes in order.
		m.split(work, func(w, nw int) {
			v0, v1 := int32(w*m.n/nw), int32((w+1)*m.n/nw)
			for _, sp := range m.round {
				a := float32(sp.a)
				for i, v := range m.nbr[sp.u] {
					if v < v0 || v >= v1 {
						continue
					}
					k := m.kc[sp.u][i*L : (i+1)*L]
					subScaled(m.b[int(v)*T+sp.t-(nt-1):int(v)*T+sp.t+nt], k, a)
				}
			}
		})
		m.found = append(m.found, m.round...)
		m.score(T, m.round)
		// s changed only in the round's columns: the running maximum only
		// within nt of them.
		for _, sp := range m.changed {
			m.runningMaxRange(T, max(0, sp[0]-nt), min(T, sp[1]+nt))
		}
	}
	sort.SliceStable(m.found, func(i, j int) bool {
		a, b := m.found[i], m.found[j]
		if a.t != b.t {
			return a.t < b.t
		}
		return a.u < b.u
	})
}

// residual sets xres = x minus every found spike's fitted template
// a·ũ_u on the template's channels, columns t−nt/2 … t+nt/2.
// The channels are split between workers; each channel still takes its
// spikes in order.
func (m *Matcher) residual(x []float32, T int) {
	nt, h := m.nt, m.nt/2
	copy(m.xres, x)
	work := 0
	for _, sp := range m.found {
		work += len(m.chans[sp.u]) * nt
	}
	m.split(work, func(w, nw int) {
		c0, c1 := int32(w*m.c/nw), int32((w+1)*m.c/nw)
		for _, sp := range m.found {
			a := float32(sp.a)
			for i, c := range m.chans[sp.u] {
				if c < c0 || c >= c1 {
					continue
				}
				subScaled(m.xres[int(c)*T+sp.t-h:int(c)*T+sp.t-h+nt], m.ut[sp.u][i*nt:(i+1)*nt], a)
			}
		}
	})
}

// features appends the found spikes to dst with their features: the PCA
// projection of the residual at the spike on its template's feature
// channels, plus the spike's own fitted template there.
//
// The features are computed first, the spikes split between workers.
func (m *Matcher) features(dst *Spikes, T int, ownStart int64) {
	nt, h, P, C := m.nt, m.nt/2, m.p, m.c
	nf := m.prm.NearestChans * P
	if need := len(m.found) * nf; cap(m.feat) < need {
		m.feat = make([]float32, need)
	}
	m.feat = m.feat[:len(m.found)*nf]
	m.split(len(m.found)*nf*nt, func(w, nw int) {
		for i := w * len(m.found) / nw; i < (w+1)*len(m.found)/nw; i++ {
			sp := m.found[i]
			f := m.feat[i*nf : i*nf]
			for _, c := range m.Channels(int(sp.u)) {
				seg := m.xres[int(c)*T+sp.t-h : int(c)*T+sp.t-h+nt]
				for p := range P {
					var s float64
					w := m.tm.WPCA[p*nt : (p+1)*nt]
					for j, v := range seg {
						s += float64(v) * float64(w[j])
					}
					s += sp.a * float64(m.tm.U[(int(sp.u)*C+int(c))*P+p])
					f = append(f, float32(s))
				}
			}
		}
	})
	m.appendFound(dst, ownStart, func(f []float32, i int, _ spike) []float32 {
		return append(f, m.feat[i*nf:(i+1)*nf]...)
	})
}

// split runs f(w, nw) for w < nw on nw goroutines (this one among them),
// nw up to the matcher's workers when work (in multiply-adds) is worth
// it, else f(0, 1) here.
func (m *Matcher) split(work int, f func(w, nw int)) {
	nw := m.workers
	if nw <= 1 || work < splitMinWork {
		f(0, 1)
		return
	}
	par.Run(nw, func(w int) { f(w, nw) })
}

// splitMinWork is the work below which split does not start goroutines.
const splitMinWork = 1 << 16

// appendFound appends the spikes of m.found to dst, dropping those whose
// trough falls before sample 0; feat appends the features of spike i of
// m.found (NearestChans × P of them) to f. Both back ends append their
// spikes here.
func (m *Matcher) appendFound(dst *Spikes, ownStart int64, feat func(f []float32, i int, sp spike) []float32) {
	nt, h, P := m.nt, m.nt/2, m.p
	nc := m.prm.NearestChans
	if dst.Len() == 0 {
		dst.NC, dst.P = nc, P
	} else if dst.NC != nc || dst.P != P {
		panic("match: appending spikes with different channels or features per spike")
	}
	shift := int64(h - m.prm.NT0Min)
	dst.Features = slices.Grow(dst.Features, len(m.found)*nc*P)
	for i, sp := range m.found {
		trough := ownStart + int64(sp.t-nt) - shift
		if trough < 0 {
			continue
		}
		dst.Sample = append(dst.Sample, trough)
		dst.Template = append(dst.Template, sp.u)
		dst.Amplitude = append(dst.Amplitude, float32(sp.q))
		dst.Coef = append(dst.Coef, float32(sp.a))
		dst.Features = feat(dst.Features, i, sp)
	}
}

// subScaledGo sets row[d] −= a·k[d] for d < len(k), in float32 (the
// product rounded, then subtracted): the subtraction of a found spike
// from B that the kernels reproduce bit for bit.
func subScaledGo(row, k []float32, a float32) {
	row = row[:len(k)]
	for d, kv := range k {
		row[d] -= a * kv
	}
}
