package curate

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// Spikes is the spike table of a sort: row i is a spike at sample Time[i]
// matched by learned template Template[i], in cluster Cluster[i], with
// features Features[i·NC·P : (i+1)·NC·P] (Kilosort4's tF [n, NC, P]:
// PC p on the r-th nearest channel of the template's best channel).
type Spikes struct {
	NC, P    int
	Time     []int64
	Template []int32
	Cluster  []int32
	// Amp is optional (nil, or one value per spike: the matching
	// amplitude); it is carried through reordering.
	Amp      []float32
	Features []float32
}

// Len returns the number of spikes.
func (s *Spikes) Len() int { return len(s.Time) }

// check panics if the slices disagree in length.
func (s *Spikes) check() {
	n := len(s.Time)
	if len(s.Template) != n || len(s.Cluster) != n || (s.Amp != nil && len(s.Amp) != n) ||
		s.NC < 1 || s.P < 1 || len(s.Features) != n*s.NC*s.P {
		panic(fmt.Sprintf("curate: spikes n=%d with %d templates, %d clusters, %d amplitudes, %d features (NC=%d P=%d)",
			n, len(s.Template), len(s.Cluster), len(s.Amp), len(s.Features), s.NC, s.P))
	}
}

// Permute reorders every row of s: row i becomes old row perm[i].
func (s *Spikes) Permute(perm []int) {
	s.check()
	if identity(perm, s.Len()) {
		return
	}
	m := s.NC * s.P
	t := make([]int64, len(perm))
	u := make([]int32, len(perm))
	c := make([]int32, len(perm))
	f := make([]float32, len(perm)*m)
	var a []float32
	if s.Amp != nil {
		a = make([]float32, len(perm))
	}
	// Rows are independent: blocks of them go to the cores (the copy of
	// the features, 240 bytes a spike, is most of the time).
	const block = 1 << 14
	parallelEach(context.Background(), (len(perm)+block-1)/block, func() func(b int) {
		return func(b int) {
			for i := b * block; i < min(len(perm), (b+1)*block); i++ {
				j := perm[i]
				t[i], u[i], c[i] = s.Time[j], s.Template[j], s.Cluster[j]
				if a != nil {
					a[i] = s.Amp[j]
				}
				copy(f[i*m:(i+1)*m], s.Features[j*m:(j+1)*m])
			}
		}
	})
	s.Time, s.Template, s.Cluster, s.Amp, s.Features = t, u, c, a, f
}

// identity reports whether perm is 0…n−1.
func identity(perm []int, n int) bool {
	if len(perm) != n {
		return false
	}
	for i, j := range perm {
		if i != j {
			return false
		}
	}
	return true
}

// Select keeps the rows where keep is true, in order.
func (s *Spikes) Select(keep []bool) {
	if len(keep) != s.Len() {
		panic("curate: Select mask length differs from the spike count")
	}
	var perm []int
	for i, k := range keep {
		if k {
			perm = append(perm, i)
		}
	}
	s.Permute(perm)
}

// SortByTime orders the spikes by (time, template, previous row), a
// stable order (Kilosort4 uses numpy's unstable argsort by time, so rows of
// equal time may come out in another order there). It returns the
// permutation: row i is the old row perm[i].
func (s *Spikes) SortByTime() []int {
	perm := make([]int, s.Len())
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		if s.Time[a] != s.Time[b] {
			if s.Time[a] < s.Time[b] {
				return -1
			}
			return 1
		}
		return int(s.Template[a]) - int(s.Template[b])
	})
	s.Permute(perm)
	return perm
}

// MergeResult is the outcome of [Merge].
type MergeResult struct {
	// Units are the surviving templates, renumbered 0…N−1 in the order of
	// their old labels.
	Units *Units
	// Old[k] is the input label of final unit k.
	Old []int
	// Merges lists the merges in the order they happened: Into absorbed
	// From (input labels), From's spikes moved by Shift samples.
	Merges []MergeStep
	// Copies marks the spikes (rows of the rewritten spikes) that the
	// coincident rule found to be a weaker unit's copies of another
	// unit's spikes, to be dropped (they carry the label of the unit they
	// copy); nil when it found none.
	Copies []bool
}

// MergeStep is one merge of [Merge].
type MergeStep struct {
	Into, From int
	// Shift is added to From's spike times (−δ of kilosort4-sort.md §7.2).
	Shift int
	// Similarity is the normalised cross-correlation that made From a
	// candidate.
	Similarity float64
	// SameWaveform marks a merge of the same-waveform rule (no
	// correlogram test); false for Kilosort4's correlogram merges.
	SameWaveform bool
	// Interleaved marks a merge of the interleaved rule ([Interleaved]).
	Interleaved bool
	// Coincident marks a merge of the coincident rule ([Coincidence]);
	// Similarity is then the fraction of coincident spikes.
	Coincident bool
}

// sameAmplitudeTol is the largest relative difference of two template
// norms, |2(‖a‖ − ‖b‖)/(‖a‖ + ‖b‖)|, that the same-waveform rule takes
// for one amplitude: half of the 0.2 of Kilosort4's merge of the first
// clustering's templates (kilosort4-sort.md §5.9).
const sameAmplitudeTol = 0.1

// sameAmplitude reports whether templates a and b have norms within
// sameAmplitudeTol of each other.
func sameAmplitude(a, b []float32) bool {
	na, nb := norm2(a), norm2(b)
	return na+nb > 0 && math.Abs(2*(na-nb)/(na+nb)) < sameAmplitudeTol
}

// Merge runs the merges of the final clustering's units u (labels
// s.Cluster in 0…u.N−1) and returns the surviving units. It rewrites s:
// merged spikes get their new label, shifted times and features, every
// label is renumbered 0…N−1, and the rows are sorted by
// [Spikes.SortByTime].
//
// First, with p.SameWaveform > 0, the same-waveform rule (dspk's; see
// docs/sort.md): every unit, by decreasing spike count (ties: higher label
// first), absorbs each unit whose template matches its own with
// similarity ≥ p.SameWaveform at the best lag and whose template norm is
// within 10 % of its own, whatever the correlograms say. Such pairs are
// one waveform that the final clustering cut in two (by the spikes'
// alignment, one sample apart): a few spikes of colliding neighbours
// matched into both halves spoil the correlogram test below, and nothing
// in the waveforms tells the halves apart.
//
// Then Kilosort4's correlogram merges (merging_function, mode 'ccg',
// kilosort4-sort.md §7.2). Bases are the clusters whose autocorrelogram
// passes [Refract] (judged once, on the units the first step leaves),
// taken by decreasing spike count (ties: higher label first). For a base
// k, every unit j is scored by the maximum over lags of the normalised
// cross-correlation with k; candidates with score ≥ p.RThresh are tried by
// decreasing score (ties: higher label first), and the first whose
// correlogram with k is cross-refractory ([Metrics.CrossRefractory],
// p.CCGThreshold) merges into k.
//
// Then, with p.Interleaved > 0, the interleaved merge (dspk's): every
// unit, by decreasing spike count, absorbs each unit whose template
// matches its own with similarity ≥ p.Interleaved and whose spike train
// alternates with its own ([Interleaved]): the pieces of one unit that
// moved along the probe.
//
// Last, with p.Coincident > 0 and the channels' positions ch (nil leaves
// the rule out), the coincident rule (dspk's): every unit, by decreasing
// template norm, finds the weaker units whose best channels lie within
// 2·p.PositionLimit µm of its own and that share at least
// [CoincidentShared] of the smaller unit's spikes with it at one lag
// ([Coincidence], at least 10 spikes): the parts of one wide footprint,
// each spike matched on both. The weaker unit's copies are marked in
// MergeResult.Copies, and a unit left with at most 1 − p.Coincident of
// its spikes joins the stronger one.
//
// A merge moves j's spikes by the lag difference (times and features, and
// its template, shifted through wPCA; for the coincident rule the lag of
// the coincidences), averages the templates weighted by spike count (the
// coincident rule keeps each channel's own template where one unit has
// none), and examines the base again. Shifted times may fall outside the
// recording, as in Kilosort4. A coincident join moves only the joining
// unit's spikes that are not copies.
func Merge(s *Spikes, u *Units, bs *Basis, ch *Channels, p Params) MergeResult {
	r, _ := merge(context.Background(), s, u, bs, ch, p)
	return r
}

// merge is [Merge], stopping with the context's cause once ctx is done
// (between the examinations of a base; s is then left part-way).
func merge(ctx context.Context, s *Spikes, u *Units, bs *Basis, ch *Channels, p Params) (MergeResult, error) {
	s.check()
	u.check()
	if u.P != bs.P || s.P != bs.P {
		panic("curate: spikes, units and basis differ in P")
	}
	g := newMerger(s, u, bs, p)
	g.loop.Stop = func() bool { return ctx.Err() != nil }
	good := g.good()
	bases := descending(g.n, func(k int) float64 { return float64(g.count[k]) })
	// One waveform cut in two: every unit, by decreasing spike count,
	// absorbs the units whose templates match its own (similarity ≥
	// p.SameWaveform) at the same amplitude, whatever their correlograms.
	if p.SameWaveform > 0 {
		g.same = true
		g.loop.Run(filter(bases, func(k int) bool { return g.count[k] > 0 }), p.SameWaveform, func(k, j int) bool {
			return g.count[j] > 0 && sameAmplitude(g.template(k), g.template(j))
		})
		g.same = false
		if len(g.steps) > 0 {
			// Kilosort4's merges then run on these units: the bases judged
			// on their trains, in the order of their counts now.
			good = g.good()
			bases = descending(g.n, func(k int) float64 { return float64(g.count[k]) })
		}
	}
	g.loop.Run(filter(bases, func(k int) bool { return good[k] }), p.RThresh, func(k, j int) bool {
		return PairMetrics(g.train(k), g.train(j)).CrossRefractory(p.CCGThreshold)
	})
	// Pieces of a drifting unit that take its spikes in turn, or hand it
	// over from one to the next.
	if p.Interleaved > 0 {
		g.interleaved = true
		span := g.span()
		alive := filter(descending(g.n, func(k int) float64 { return float64(g.count[k]) }), func(k int) bool { return g.count[k] > 0 })
		g.loop.Run(alive, p.Interleaved, func(k, j int) bool {
			a, b := g.train(k), g.train(j)
			if ok, _, _ := Interleaved(a, b, span); ok {
				return true
			}
			ok, _ := HandedOver(a, b, span)
			return ok
		})
		g.interleaved = false
	}
	// Two halves of one footprint that share their spikes.
	if p.Coincident > 0 && ch != nil {
		if len(ch.X) != u.C || len(ch.Y) != u.C {
			panic(fmt.Sprintf("curate: %d and %d channel positions for %d channels", len(ch.X), len(ch.Y), u.C))
		}
		g.ch, g.coincident = ch, true
		g.runCoincident()
		g.coincident = false
	}
	if ctx.Err() != nil {
		return MergeResult{}, context.Cause(ctx)
	}
	return g.result(), nil
}

// merger is the state of one [Merge]: the units' templates, members and
// counts as merges change them, and the scratch of the similarity scores.
type merger struct {
	s       *Spikes
	bs      *Basis
	p       Params
	n, c, m int     // units, channels, values of a template (C·P)
	members [][]int // each unit's spike rows
	count   []int   // each unit's spike count
	W       []float32
	// The templates normalised, their non-zero channels, and the units
	// on each channel (with repeats), for the similarity scores.
	w         [][]float64
	sup, site [][]int
	mark      []int
	M, tmp    []float64
	sim       []float64 // the similarities to the base last scored
	lag       []int     // and their lags
	shifts    map[int][]float64
	steps     []MergeStep
	same      bool // joins are the same-waveform rule's
	// joins are the interleaved merge's
	interleaved bool
	// The coincident rule's state: it joins, the channels' positions,
	// the spikes by time as it started (t0: each row's time then), the
	// most any spike has moved since, the rows dropped as copies of
	// another unit's spikes and their count.
	coincident bool
	ch         *Channels
	order      spikeOrder
	t0         []int64
	maxShift   int64
	dropped    []bool
	shared     int
	near32     []int32 // per unit: the call of near that last listed it
	stamp      int32
	loop       MergeLoop
}

// newMerger returns the merger of s's spikes into u's units.
func newMerger(s *Spikes, u *Units, bs *Basis, p Params) *merger {
	N, C, P := u.N, u.C, u.P
	g := &merger{s: s, bs: bs, p: p, n: N, c: C, m: C * P,
		members: make([][]int, N), count: make([]int, N), W: slices.Clone(u.W),
		mark: make([]int, N), M: make([]float64, P*P), tmp: make([]float64, P),
		sim: make([]float64, N), lag: make([]int, N), shifts: map[int][]float64{}}
	for i, c := range s.Cluster {
		if c < 0 || int(c) >= N {
			panic(fmt.Sprintf("curate: spike %d in cluster %d of %d", i, c, N))
		}
		g.members[c] = append(g.members[c], i)
	}
	for k := range N {
		g.count[k] = len(g.members[k])
	}
	g.w, g.sup = normalised(&Units{N: N, C: C, P: P, W: g.W})
	g.site = onSite(g.sup, C)
	g.loop = MergeLoop{Alive: make([]bool, N), Score: g.score, Join: g.join}
	for k := range g.loop.Alive {
		g.loop.Alive[k] = true
	}
	return g
}

// good returns which units' autocorrelograms pass [Refract] now.
func (g *merger) good() []bool {
	good, _ := Refract(g.s.Cluster, Seconds(g.s.Time, g.p.FS), g.p)
	return append(good, make([]bool, g.n-len(good))...)
}

// span returns the time in seconds from the first spike to the last.
func (g *merger) span() float64 { return span(g.s.Time, g.p.FS) }

// template returns unit k's template.
func (g *merger) template(k int) []float32 { return g.W[k*g.m : (k+1)*g.m] }

// train returns unit k's spike times in seconds.
func (g *merger) train(k int) []float64 {
	t := make([]float64, len(g.members[k]))
	for i, r := range g.members[k] {
		t[i] = float64(g.s.Time[r]) / g.p.FS
	}
	return t
}

// score returns the similarity of every unit to base k (0 for k itself).
func (g *merger) score(k int) []float64 {
	g.bs.scoreAll(g.w, g.sup, g.site, k, g.sim, g.lag, g.M, g.mark)
	g.sim[k] = 0
	return g.sim
}

// join merges j into k: j's spikes move by the lag difference (times and
// features, and its template, shifted through wPCA) and the templates are
// averaged weighted by spike count.
func (g *merger) join(k, j int) {
	s, m, P := g.s, g.m, g.bs.P
	W := g.W
	delta := g.lag[k] - g.lag[j]
	if delta != 0 {
		S, ok := g.shifts[delta]
		if !ok {
			S = g.bs.shiftMatrix(delta)
			g.shifts[delta] = S
		}
		fm := s.NC * s.P
		for _, r := range g.members[j] {
			s.Time[r] -= int64(delta)
			applyShift(s.Features[r*fm:(r+1)*fm], S, P, g.tmp)
		}
		applyShift(W[j*m:(j+1)*m], S, P, g.tmp)
	}
	nk, nj := float64(g.count[k]), float64(g.count[j])
	if g.coincident {
		unionTemplate(W[k*m:(k+1)*m], W[j*m:(j+1)*m], nk, nj, P)
		clear(W[j*m : (j+1)*m])
		for _, r := range g.members[j] {
			g.maxShift = max(g.maxShift, abs64(s.Time[r]-g.t0[r]))
		}
	} else {
		for i := range m {
			W[k*m+i] = float32((nk*float64(W[k*m+i]) + nj*float64(W[j*m+i])) / (nk + nj))
			W[j*m+i] = 0
		}
	}
	for _, r := range g.members[j] {
		s.Cluster[r] = int32(k)
	}
	g.members[k] = append(g.members[k], g.members[j]...)
	g.members[j] = nil
	g.count[k] += g.count[j]
	g.count[j] = 0
	g.w[k], g.sup[k] = normalise(W[k*m:(k+1)*m], g.c, P)
	g.w[j], g.sup[j] = normalise(W[j*m:(j+1)*m], g.c, P)
	for _, ch := range g.sup[k] {
		g.site[ch] = append(g.site[ch], k) // repeats are skipped by scoreAll
	}
	g.steps = append(g.steps, MergeStep{Into: k, From: j, Shift: -delta, Similarity: g.sim[j], SameWaveform: g.same, Interleaved: g.interleaved, Coincident: g.coincident})
}

// result renumbers the surviving units 0…N−1 in the order of their old
// labels, relabels and sorts the spikes, and returns the outcome.
func (g *merger) result() MergeResult {
	s := g.s
	newID := make([]int32, g.n)
	var old []int
	out := &Units{C: g.c, P: g.bs.P}
	for k := range g.n {
		if !g.loop.Alive[k] {
			newID[k] = -1
			continue
		}
		newID[k] = int32(len(old))
		old = append(old, k)
		out.W = append(out.W, g.template(k)...)
	}
	out.N = len(old)
	for i, c := range s.Cluster {
		s.Cluster[i] = newID[c]
	}
	perm := s.SortByTime()
	var copies []bool
	if g.shared > 0 {
		copies = make([]bool, len(perm))
		for i, r := range perm {
			copies[i] = g.dropped[r]
		}
	}
	return MergeResult{Units: out, Old: old, Merges: g.steps, Copies: copies}
}

// filter returns the members of ks for which keep holds, in order.
func filter(ks []int, keep func(k int) bool) []int {
	var out []int
	for _, k := range ks {
		if keep(k) {
			out = append(out, k)
		}
	}
	return out
}

// descending returns 0…n−1 ordered by decreasing key, ties by decreasing
// index: a stable ascending sort reversed, the order numpy's argsort
// reversed gives when its sort keeps ties in index order.
func descending(n int, key func(int) float64) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ka, kb := key(a), key(b)
		switch {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	slices.Reverse(idx)
	return idx
}
