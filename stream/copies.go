package stream

import "math"

// The sort keeps one spike where two templates matched it (curate's
// duplicate and coincident rules, docs/curate.md §9): two spikes of one
// unit within twice duplicate_spike_ms are one, kept on the stronger
// template; and of two templates that match the same spikes at a fixed
// lag (each on its part of a wide footprint), the weaker one's copies go.
// And of two spikes of different units within duplicate_spike_ms whose
// templates peak within the sort's double-count distance, the weaker
// template's goes (docs/curate.md §12; the sort compares its units'
// templates, the stream the learned ones). The stream applies all three
// as spikes arrive. The coincident pairs it learns
// as the sort finds them: a pair of templates whose best channels lie
// within 2·position_limit, sharing at least coincidentShared of the
// smaller one's spikes (at least coincidentMinCount) at the lag most of
// them share, within ± half the duplicate window. Until a pair has shown
// itself, its copies go out as spikes of the weaker template's unit.
const (
	coincidentShared   = 0.2
	coincidentMinCount = 10
)

// cand is a matched spike until it is given out or dropped.
type cand struct {
	t       int64
	k, u    int32 // template and unit
	q       float32
	dropped bool
	done    bool // given out or dropped
}

// pair is what the stream knows of two templates lo < hi: the lags
// t_hi − t_lo of their spikes within the window, and whether it is a
// coincident pair (weak, the weaker template, and lag = t_strong − t_weak).
type pair struct {
	hist   []int32
	active bool
	weak   int32
	lag    int64
}

// copies applies the duplicate and coincident rules to the matched spikes.
type copies struct {
	m      *Model
	best   []int     // best channel of each template
	multi  []bool    // the template's unit has other templates
	dbl    []bool    // a stronger template of another unit peaks within the double-count distance
	weakIn [][]int64 // per template: the lags of the pairs it is the weaker of, as keys
	n      []int     // spikes matched per template
	pairs  map[int64]*pair
	cands  []cand
	dup    int64 // duplicate_spike_ms in samples
	maxLag int64
	half   int64
	w      int64 // maxLag + half: the widest look either side
	np     int   // templates
}

func newCopies(m *Model, best []int) *copies {
	n := m.Templates.N
	c := &copies{m: m, best: best, multi: make([]bool, n), dbl: make([]bool, n), weakIn: make([][]int64, n), n: make([]int, n),
		pairs: map[int64]*pair{}, dup: m.DuplicateBins, maxLag: 2 * m.DuplicateBins, half: max(1, m.DuplicateBins/2), np: n}
	c.w = c.maxLag + c.half
	per := map[int32]int{}
	for _, u := range m.UnitOf {
		per[u]++
	}
	for k, u := range m.UnitOf {
		c.multi[k] = per[u] > 1 || len(m.Split[int32(k)]) > 0
	}
	for k := range n {
		for j := range n {
			if m.UnitOf[j] != m.UnitOf[k] && c.near(int32(k), int32(j)) && c.stronger(int32(j), int32(k)) {
				c.dbl[k] = true
				break
			}
		}
	}
	return c
}

func (c *copies) key(a, b int32) int64 {
	if a > b {
		a, b = b, a
	}
	return int64(a)*int64(c.np) + int64(b)
}

// add takes a block's spikes (in order of sample, after every spike
// already added) and learns the pairs from them.
func (c *copies) add(t int64, k, u int32, q float32) {
	for i := len(c.cands) - 1; i >= 0 && c.cands[i].t >= t-c.w; i-- {
		d := c.cands[i]
		if d.k == k {
			continue
		}
		key := c.key(k, d.k)
		p := c.pairs[key]
		if p == nil {
			p = &pair{hist: make([]int32, 2*c.w+1)}
			c.pairs[key] = p
		}
		lag := t - d.t // t_hi − t_lo
		if k < d.k {
			lag = -lag
		}
		p.hist[lag+c.w]++
		if !p.active {
			c.check(p, min(k, d.k), max(k, d.k))
		}
	}
	c.n[k]++
	c.cands = append(c.cands, cand{t: t, k: k, u: u, q: q})
}

// check makes p (of templates lo < hi) a coincident pair when it passes
// the rule.
func (c *copies) check(p *pair, lo, hi int32) {
	bl, bh := c.best[lo], c.best[hi]
	if math.Hypot(c.m.X[bl]-c.m.X[bh], c.m.Y[bl]-c.m.Y[bh]) > 2*c.m.PositionLimit {
		return
	}
	mode := -c.maxLag
	for L := -c.maxLag + 1; L <= c.maxLag; L++ {
		if e, el := p.hist[L+c.w], p.hist[mode+c.w]; e > el || e == el && abs(L) < abs(mode) {
			mode = L
		}
	}
	count := 0
	for L := mode - c.half; L <= mode+c.half; L++ {
		count += int(p.hist[L+c.w])
	}
	if count < coincidentMinCount || float64(count) < coincidentShared*float64(min(c.n[lo], c.n[hi])) {
		return
	}
	p.active = true
	p.weak, p.lag = hi, -mode // the lag is t_lo − t_hi from the weaker hi
	if c.m.Norm[lo] < c.m.Norm[hi] || c.m.Norm[lo] == c.m.Norm[hi] && lo > hi {
		p.weak, p.lag = lo, mode
	}
	c.weakIn[p.weak] = append(c.weakIn[p.weak], c.key(lo, hi))
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// ready gives out (out) or drops every candidate whose fate is known once
// all spikes with troughs before horizon are in; a spike that may be a
// copy waits until the spikes it may copy can no longer come.
func (c *copies) ready(horizon int64, out func(cand)) {
	for i := range c.cands {
		d := &c.cands[i]
		if d.done {
			continue
		}
		if (c.multi[d.k] || len(c.weakIn[d.k]) > 0) && d.t+c.w >= horizon || c.dbl[d.k] && d.t+c.dup >= horizon {
			continue
		}
		d.done = true
		if c.isCopy(i) {
			d.dropped = true
			continue
		}
		out(*d)
	}
	// Forget what no later spike can be compared with.
	k := 0
	for k < len(c.cands) && c.cands[k].done && c.cands[k].t < horizon-2*c.w {
		k++
	}
	c.cands = c.cands[k:]
}

// isCopy reports whether candidate i repeats a spike another template
// matched.
func (c *copies) isCopy(i int) bool {
	d := c.cands[i]
	u := d.u
	for j := i - 1; j >= 0 && c.cands[j].t >= d.t-c.w; j-- {
		if c.copyOf(d, u, c.cands[j]) {
			return true
		}
	}
	for j := i + 1; j < len(c.cands) && c.cands[j].t <= d.t+c.w; j++ {
		if c.copyOf(d, u, c.cands[j]) {
			return true
		}
	}
	return false
}

// copyOf reports whether d (of unit u) is a copy of e.
func (c *copies) copyOf(d cand, u int32, e cand) bool {
	if e.dropped {
		return false
	}
	dt := e.t - d.t
	if e.k == d.k {
		return dt < 0 && -dt <= c.dup // the later of two within the duplicate window
	}
	if e.u == u && abs(dt) <= 2*c.dup {
		ne, nd := c.m.Norm[e.k], c.m.Norm[d.k]
		return ne > nd || ne == nd && dt < 0
	}
	if e.u != u && abs(dt) <= c.dup && c.dbl[d.k] && c.near(d.k, e.k) && c.stronger(e.k, d.k) {
		return true // a double count of e's event
	}
	p := c.pairs[c.key(d.k, e.k)]
	return p != nil && p.active && p.weak == d.k && abs(dt-p.lag) <= c.half
}

// near reports whether templates a and b peak within the double-count
// distance (never when the sort did not apply the rule).
func (c *copies) near(a, b int32) bool {
	ba, bb := c.best[a], c.best[b]
	return c.m.DoubleCount > 0 && math.Hypot(c.m.X[ba]-c.m.X[bb], c.m.Y[ba]-c.m.Y[bb]) <= c.m.DoubleCount
}

// stronger reports whether template a's spike outlives b's double count:
// the larger norm, on a tie the higher unit (the sort drops the lower
// unit's).
func (c *copies) stronger(a, b int32) bool {
	na, nb := c.m.Norm[a], c.m.Norm[b]
	return na > nb || na == nb && c.m.UnitOf[a] > c.m.UnitOf[b]
}
