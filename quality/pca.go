package quality

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// pcData holds what the PC metrics share: every unit's feature channels
// and main channel, and the spikes in time order.
type pcData struct {
	in     *Input
	nu     int
	chans  [][]int32 // each unit's feature channels, ascending
	main   []int32   // each unit's main channel
	spikes [][]int   // each unit's spikes, by time
	order  []int     // every reported spike, by time (ties by unit row)
	row    []int     // unit row of each spike in order
	at     [][]int   // each unit's positions in order, ascending
}

// pcPrep gathers the PC metrics' shared data, or nil without features.
func (in *Input) pcPrep(units []unit, tm *templateInfo) *pcData {
	if in.PCFeatures == nil {
		return nil
	}
	nf := in.NFeat
	pc := &pcData{in: in, nu: len(units), chans: make([][]int32, len(units)), main: make([]int32, len(units)), spikes: make([][]int, len(units))}
	// Each spike's unit row, −1 for spikes of units not reported.
	rowOf := make([]int32, len(in.SpikeTimes))
	for i := range rowOf {
		rowOf[i] = -1
	}
	for r, u := range units {
		pc.spikes[r] = u.idx
		for _, s := range u.idx {
			rowOf[s] = int32(r)
		}
		pc.main[r] = -1
		if tm != nil {
			pc.main[r] = int32(tm.main[r])
		}
		tr := int(in.modalTemplate(u))
		if tr < 0 || (tr+1)*nf > len(in.PCFeatureInd) {
			continue // a unit without spikes whose id has no row
		}
		row := in.PCFeatureInd[tr*nf : (tr+1)*nf]
		pc.chans[r] = distinct(row)
		if tm == nil {
			pc.main[r] = row[0]
		}
	}
	for _, s := range in.timeOrder() {
		if r := rowOf[s]; r >= 0 {
			pc.order = append(pc.order, s)
			pc.row = append(pc.row, int(r))
		}
	}
	// Ties in time go by unit row, as SpikeInterface's spike vector does.
	idx := make([]int, len(pc.order))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(in.SpikeTimes[pc.order[a]], in.SpikeTimes[pc.order[b]]), cmp.Compare(pc.row[a], pc.row[b]))
	})
	o, r := make([]int, len(idx)), make([]int, len(idx))
	for k, j := range idx {
		o[k], r[k] = pc.order[j], pc.row[j]
	}
	pc.order, pc.row = o, r
	pc.at = make([][]int, pc.nu)
	for q, u := range r {
		pc.at[u] = append(pc.at[u], q)
	}
	return pc
}

// modalTemplate returns the most frequent template among u's spikes (the
// lowest on a tie); the unit id when spikes carry no template.
func (in *Input) modalTemplate(u unit) int32 {
	if in.SpikeTemplates == nil || len(u.idx) == 0 {
		if len(u.idx) == 0 && in.SpikeTemplates != nil {
			return 0
		}
		return u.id
	}
	count := map[int32]int{}
	for _, s := range u.idx {
		count[in.SpikeTemplates[s]]++
	}
	best, bn := int32(0), -1
	for t, c := range count {
		if c > bn || (c == bn && t < best) {
			best, bn = t, c
		}
	}
	return best
}

// neighbourhood returns the features of unit r's neighbours' spikes on
// r's feature channels, [spikes][NPC·K] (PC-major), with each spike's
// unit row.
func (pc *pcData) neighbourhood(r int) (x [][]float64, labels []int) {
	in := pc.in
	chans := pc.chans[r]
	// The neighbours' positions in the time order, merged.
	var qs []int
	for o := range pc.nu {
		if _, ok := slices.BinarySearch(chans, pc.main[o]); ok || o == r {
			qs = append(qs, pc.at[o]...)
		}
	}
	slices.Sort(qs)
	k, np, nf := len(chans), in.NPC, in.NFeat
	n := len(qs)
	// One backing array for all rows: a neighbourhood holds up to a few
	// hundred thousand spikes.
	flat := make([]float64, n*np*k)
	x, labels = make([][]float64, 0, n), make([]int, 0, n)
	// Where each template's feature channels fall among r's, once per
	// template.
	posOf := map[int32][]int{}
	for _, q := range qs {
		s, o := pc.order[q], pc.row[q]
		tr := in.SpikeUnits[s]
		if in.SpikeTemplates != nil {
			tr = in.SpikeTemplates[s]
		}
		pos, ok := posOf[tr]
		if !ok {
			pos = make([]int, nf)
			for j, c := range in.PCFeatureInd[int(tr)*nf : (int(tr)+1)*nf] {
				p, ok := slices.BinarySearch(chans, c)
				pos[j] = -1
				if ok {
					pos[j] = p
				}
			}
			posOf[tr] = pos
		}
		v := flat[len(x)*np*k : (len(x)+1)*np*k : (len(x)+1)*np*k]
		f := in.PCFeatures[s*np*nf : (s+1)*np*nf]
		for p := range np {
			for j := range nf {
				if pos[j] >= 0 {
					v[p*k+pos[j]] = float64(f[p*nf+j])
				}
			}
		}
		x = append(x, v)
		labels = append(labels, o)
	}
	return x, labels
}

// unitMetrics computes unit r's PC metrics into cols.
func (pc *pcData) unitMetrics(r int, opt Options, cols *columns) {
	x, labels := pc.neighbourhood(r)
	if len(pc.spikes[r]) == 0 {
		return
	}
	iso, lr := mahalanobis(x, labels, r)
	cols.set("isolation_distance", r, iso)
	cols.set("l_ratio", r, lr)
	if pc.nu > 1 {
		cols.set("d_prime", r, dPrime(x, labels, r))
	}
	if !opt.SkipNN {
		hit, miss := nearestNeighbours(x, labels, r, opt.NNMaxSpikes, opt.NNNeighbors)
		cols.set("nn_hit_rate", r, hit)
		cols.set("nn_miss_rate", r, miss)
	}
	cols.set("silhouette", r, simplifiedSilhouette(x, labels, r))
}

// split returns the rows of x of unit r and of the other units.
func split(x [][]float64, labels []int, r int) (self, other [][]float64) {
	n := 0
	for _, l := range labels {
		if l == r {
			n++
		}
	}
	self, other = make([][]float64, 0, n), make([][]float64, 0, len(x)-n)
	for k, v := range x {
		if labels[k] == r {
			self = append(self, v)
		} else {
			other = append(other, v)
		}
	}
	return self, other
}

// centroid is the mean of the rows.
func centroid(x [][]float64) []float64 {
	c := make([]float64, len(x[0]))
	for _, v := range x {
		for j, e := range v {
			c[j] += e
		}
	}
	for j := range c {
		c[j] /= float64(len(x))
	}
	return c
}

// mahalanobis is SpikeInterface's isolation_distance and l_ratio: the
// squared Mahalanobis distances of the other spikes from the unit's
// centre under the unit's covariance.
func mahalanobis(x [][]float64, labels []int, r int) (iso, lratio float64) {
	self, other := split(x, labels, r)
	n := min(len(self), len(other))
	if n < 2 {
		return nan, nan
	}
	d := len(x[0])
	mu := centroid(self)
	acc := make([]float64, d*d)
	scatter(acc, self, mu)
	cov := mat.NewSymDense(d, nil)
	for a := range d {
		for b := a; b < d; b++ {
			cov.SetSym(a, b, acc[a*d+b]/float64(len(self)-1))
		}
	}
	var vi mat.Dense
	if err := vi.Inverse(cov); err != nil {
		if c, ok := err.(mat.Condition); !ok || math.IsInf(float64(c), 1) {
			return nan, nan
		}
	}
	d2 := quadForms(other, mu, &vi)
	// np.sort puts NaN last.
	slices.SortFunc(d2, func(a, b float64) int {
		switch an, bn := math.IsNaN(a), math.IsNaN(b); {
		case an && bn:
			return 0
		case an:
			return 1
		case bn:
			return -1
		}
		return cmp.Compare(a, b)
	})
	chi := distuv.ChiSquared{K: float64(d)}
	sum := 0.0
	for _, v := range d2 {
		if math.IsNaN(v) {
			sum = nan
			break
		}
		sum += 1 - chi.CDF(v)
	}
	return d2[n-1], sum / float64(len(self))
}

// dPrime is SpikeInterface's d_prime: the separation of the unit from
// the others along the Fisher discriminant, as scikit-learn's LDA (SVD
// solver, within-class scatter standardised per feature, directions of
// singular value below 1e-4 dropped) finds it; positive on the unit's side.
func dPrime(x [][]float64, labels []int, r int) float64 {
	self, other := split(x, labels, r)
	if len(self) == 0 || len(other) == 0 {
		return nan
	}
	d := len(x[0])
	m1, m0 := centroid(self), centroid(other)
	// Standard deviation of the class-centred data per feature.
	sd := make([]float64, d)
	for _, g := range []struct {
		rows [][]float64
		m    []float64
	}{{self, m1}, {other, m0}} {
		for _, v := range g.rows {
			for j, m := range g.m {
				e := v[j] - m
				sd[j] += e * e
			}
		}
	}
	ntot := float64(len(x))
	for j := range sd {
		sd[j] = math.Sqrt(sd[j] / ntot)
		if sd[j] == 0 {
			sd[j] = 1
		}
	}
	fac := 1 / (ntot - 2)
	acc := make([]float64, d*d)
	scatter(acc, self, m1)
	scatter(acc, other, m0)
	sw := mat.NewSymDense(d, nil)
	for a := range d {
		for b := a; b < d; b++ {
			sw.SetSym(a, b, acc[a*d+b]*fac/(sd[a]*sd[b]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sw, true) {
		return nan
	}
	vals := eig.Values(nil)
	var vec mat.Dense
	eig.VectorsTo(&vec)
	// w = D⁻¹ V Λ⁻¹ Vᵀ D⁻¹ (m1 − m0) over the kept directions.
	g := make([]float64, d)
	for j := range d {
		g[j] = (m1[j] - m0[j]) / sd[j]
	}
	w := make([]float64, d)
	for e, l := range vals {
		if math.Sqrt(max(l, 0)) <= 1e-4 {
			continue
		}
		p := 0.0
		for j := range d {
			p += vec.At(j, e) * g[j]
		}
		for j := range d {
			w[j] += vec.At(j, e) * p / l
		}
	}
	for j := range d {
		w[j] /= sd[j]
	}
	proj := func(g [][]float64) []float64 {
		out := make([]float64, len(g))
		for k, v := range g {
			s := 0.0
			for j := range d {
				s += v[j] * w[j]
			}
			out[k] = s
		}
		return out
	}
	p1, p0 := proj(self), proj(other)
	s1, s0 := std(p1), std(p0)
	return (mean(p1) - mean(p0)) / math.Sqrt((s1*s1+s0*s0)/2)
}

// simplifiedSilhouette is SpikeInterface's simplified silhouette: each
// spike's distance to its own centroid against that to the centroid of
// the nearest other unit (by mean distance).
func simplifiedSilhouette(x [][]float64, labels []int, r int) float64 {
	self, _ := split(x, labels, r)
	own := distances(centroid(self), self)
	// Every unit's centroid in one pass, summed in row order as centroid
	// sums.
	others := distinctInts(labels)
	d := len(x[0])
	sums := make([]float64, len(others)*d)
	counts := make([]int, len(others))
	for k, v := range x {
		i, _ := slices.BinarySearch(others, labels[k])
		counts[i]++
		floats.Add(sums[i*d:(i+1)*d], v)
	}
	var nearest []float64
	best := math.Inf(1)
	for i, o := range others {
		if o == r {
			continue
		}
		c := sums[i*d : (i+1)*d]
		for j := range c {
			c[j] /= float64(counts[i])
		}
		dd := distances(c, self)
		if m := mean(dd); m < best {
			best, nearest = m, dd
		}
	}
	if nearest == nil {
		return nan
	}
	s := make([]float64, len(self))
	for k := range s {
		s[k] = (nearest[k] - own[k]) / max(nearest[k], own[k])
	}
	return mean(s)
}

// scatter adds to acc, d×d row-major, the upper triangle of the sum of
// the outer products of the rows centred on m: row by row, so that each
// row and acc stay in cache (d is at most a few dozen).
func scatter(acc []float64, rows [][]float64, m []float64) {
	d := len(m)
	e := make([]float64, d)
	for _, v := range rows {
		for j := range d {
			e[j] = v[j] - m[j]
		}
		for a, ea := range e {
			floats.AddScaled(acc[a*d+a:a*d+d], ea, e[a:])
		}
	}
}

// quadForms returns (v − mu)ᵀ vi (v − mu) for each row v, by blocks of
// rows in one matrix product each, as scipy's cdist (square root) and
// SpikeInterface (square again) give it: NaN where the form is negative.
func quadForms(rows [][]float64, mu []float64, vi *mat.Dense) []float64 {
	const block = 1024
	d := len(mu)
	out := make([]float64, len(rows))
	diff := make([]float64, block*d)
	var t mat.Dense
	for lo := 0; lo < len(rows); lo += block {
		hi := min(lo+block, len(rows))
		for k, v := range rows[lo:hi] {
			e := diff[k*d : (k+1)*d]
			for j := range d {
				e[j] = v[j] - mu[j]
			}
		}
		dm := mat.NewDense(hi-lo, d, diff[:(hi-lo)*d])
		t.Reset()
		t.Mul(dm, vi)
		for k := range hi - lo {
			r := math.Sqrt(floats.Dot(t.RawRowView(k), diff[k*d:(k+1)*d]))
			out[lo+k] = r * r
		}
	}
	return out
}

// distances returns the Euclidean distances of the rows from c.
func distances(c []float64, x [][]float64) []float64 {
	out := make([]float64, len(x))
	for k, v := range x {
		s := 0.0
		for j, e := range v {
			d := e - c[j]
			s += d * d
		}
		out[k] = math.Sqrt(s)
	}
	return out
}

// distinctInts returns the sorted distinct values of v.
func distinctInts(v []int) []int {
	u := slices.Clone(v)
	slices.Sort(u)
	return slices.Compact(u)
}
