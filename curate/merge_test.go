package curate

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// orthoBasis returns p orthonormal random rows of length nt (Gram-Schmidt).
func orthoBasis(rng *rand.Rand, p, nt int) []float32 {
	rows := make([][]float64, p)
	for i := range rows {
		v := make([]float64, nt)
		for t := range v {
			v[t] = rng.NormFloat64()
		}
		for _, u := range rows[:i] {
			var d float64
			for t := range v {
				d += v[t] * u[t]
			}
			for t := range v {
				v[t] -= d * u[t]
			}
		}
		var n float64
		for _, x := range v {
			n += x * x
		}
		for t := range v {
			v[t] /= math.Sqrt(n)
		}
		rows[i] = v
	}
	out := make([]float32, p*nt)
	for i, r := range rows {
		for t, x := range r {
			out[i*nt+t] = float32(x)
		}
	}
	return out
}

// refShift delays the waveform of PC coefficients x (length P) by delta
// samples in the time domain (edges repeated) and projects it back.
func refShift(x []float32, wpca []float32, P, nt, delta int) []float32 {
	wave := make([]float64, nt)
	for t := range nt {
		for p := range P {
			wave[t] += float64(x[p]) * float64(wpca[p*nt+t])
		}
	}
	sh := make([]float64, nt)
	for t := range nt {
		src := t - delta
		if src < 0 {
			src = 0
		}
		if src > nt-1 {
			src = nt - 1
		}
		sh[t] = wave[src]
	}
	out := make([]float32, P)
	for p := range P {
		var s float64
		for t := range nt {
			s += sh[t] * float64(wpca[p*nt+t])
		}
		out[p] = float32(s)
	}
	return out
}

// refXcorr is the normalised cross-correlation in the time domain:
// Σ_c Σ_t a_c(t)·b_c(t + ℓ − nt) over ℓ = 0…2nt, with a and b divided by
// 10⁻⁶ plus their PC-space norm; it returns the maximum and its first lag.
func refXcorr(a, b []float32, wpca []float32, C, P, nt int) (float64, int) {
	dense := func(w []float32) [][]float64 {
		var n float64
		for _, v := range w {
			n += float64(v) * float64(v)
		}
		n = 1e-6 + math.Sqrt(n)
		out := make([][]float64, C)
		for c := range C {
			out[c] = make([]float64, nt)
			for t := range nt {
				for p := range P {
					out[c][t] += float64(w[c*P+p]) * float64(wpca[p*nt+t]) / n
				}
			}
		}
		return out
	}
	da, db := dense(a), dense(b)
	best, lag := math.Inf(-1), 0
	for l := 0; l <= 2*nt; l++ {
		var s float64
		for c := range C {
			for t := range nt {
				if u := t + l - nt; u >= 0 && u < nt {
					s += da[c][t] * db[c][u]
				}
			}
		}
		if s > best {
			best, lag = s, l
		}
	}
	return best, lag
}

// refMerge is a plain re-implementation of kilosort4-sort.md §7.2 in the
// time domain, with brute-force correlograms; it returns the final labels
// (renumbered), times, features and templates, rows sorted by (time,
// template, row).
func refMerge(s0 *Spikes, u0 *Units, wpca []float32, nt int, prm Params) (*Spikes, [][]float32) {
	N, C, P := u0.N, u0.C, u0.P
	s := &Spikes{NC: s0.NC, P: s0.P, Time: slices.Clone(s0.Time), Template: slices.Clone(s0.Template),
		Cluster: slices.Clone(s0.Cluster), Features: slices.Clone(s0.Features)}
	W := make([][]float32, N)
	for k := range W {
		W[k] = slices.Clone(u0.W[k*C*P : (k+1)*C*P])
	}
	train := func(k int) []float64 {
		var t []float64
		for i, c := range s.Cluster {
			if int(c) == k {
				t = append(t, float64(s.Time[i])/prm.FS)
			}
		}
		sort.Float64s(t)
		return t
	}
	count := func(k int) int { return len(train(k)) }
	dead := make([]bool, N)
	judge := func() (good []bool, bases []int) {
		good = make([]bool, N)
		cnt := make([]int, N)
		for k := range N {
			tr := train(k)
			cnt[k] = len(tr)
			if len(tr) > 10 && tr[len(tr)-1] > tr[0] {
				r12, q12, _, _, _ := refMetrics(refCCG(tr, tr), len(tr), len(tr), tr[len(tr)-1]-tr[0])
				good[k] = r12 < prm.ACGThreshold && q12 < 0.2
			}
			bases = append(bases, k)
		}
		// Bases: decreasing count, ties by higher label.
		sort.Slice(bases, func(a, b int) bool {
			if cnt[bases[a]] != cnt[bases[b]] {
				return cnt[bases[a]] > cnt[bases[b]]
			}
			return bases[a] > bases[b]
		})
		return good, bases
	}
	norm := func(w []float32) float64 {
		e := 0.0
		for _, v := range w {
			e += float64(v) * float64(v)
		}
		return math.Sqrt(e)
	}
	// examine merges into k the first candidate (by decreasing similarity
	// ≥ least, ties by higher label) that ok accepts, until none is.
	examine := func(k int, least float64, ok func(j int) bool) {
	again:
		cs := make([]float64, N)
		ls := make([]int, N)
		for j := range N {
			cs[j], ls[j] = refXcorr(W[k], W[j], wpca, C, P, nt)
		}
		lk := ls[k]
		cs[k] = 0
		cand := make([]int, N)
		for j := range cand {
			cand[j] = j
		}
		sort.Slice(cand, func(a, b int) bool {
			if cs[cand[a]] != cs[cand[b]] {
				return cs[cand[a]] > cs[cand[b]]
			}
			return cand[a] > cand[b]
		})
		for _, j := range cand {
			if cs[j] < least {
				break
			}
			if !ok(j) {
				continue
			}
			d := lk - ls[j]
			nk, nj := float64(count(k)), float64(count(j))
			m := s.NC * s.P
			for i, c := range s.Cluster {
				if int(c) != j {
					continue
				}
				s.Time[i] -= int64(d)
				for r := range s.NC {
					copy(s.Features[i*m+r*P:], refShift(s.Features[i*m+r*P:i*m+(r+1)*P], wpca, P, nt, d))
				}
				s.Cluster[i] = int32(k)
			}
			for c := range C {
				copy(W[j][c*P:], refShift(W[j][c*P:(c+1)*P], wpca, P, nt, d))
			}
			for x := range W[k] {
				W[k][x] = float32((nk*float64(W[k][x]) + nj*float64(W[j][x])) / (nk + nj))
				W[j][x] = 0
			}
			dead[j] = true
			goto again
		}
	}
	good, bases := judge()
	if prm.SameWaveform > 0 {
		for _, k := range bases {
			if !dead[k] && count(k) > 0 {
				examine(k, prm.SameWaveform, func(j int) bool {
					a, b := norm(W[k]), norm(W[j])
					return count(j) > 0 && math.Abs(2*(a-b)/(a+b)) < 0.1
				})
			}
		}
		good, bases = judge()
	}
	for _, k := range bases {
		if !good[k] || dead[k] {
			continue
		}
		examine(k, prm.RThresh, func(j int) bool {
			t1, t2 := train(k), train(j)
			T := math.Max(t1[len(t1)-1], t2[len(t2)-1]) - math.Min(t1[0], t2[0])
			r12, q12, _, _, _ := refMetrics(refCCG(t1, t2), len(t1), len(t2), T)
			return r12 < prm.CCGThreshold && q12 < 0.05
		})
	}
	if prm.Interleaved > 0 {
		lo, hi := slices.Min(s.Time), slices.Max(s.Time)
		span := float64(hi-lo) / prm.FS
		_, bases := judge()
		for _, k := range bases {
			if !dead[k] && count(k) > 0 {
				examine(k, prm.Interleaved, func(j int) bool { return refInterleaved(train(k), train(j), span) })
			}
		}
	}
	id := make([]int32, N)
	var Wout [][]float32
	for k := range N {
		if !dead[k] {
			id[k] = int32(len(Wout))
			Wout = append(Wout, W[k])
		}
	}
	for i := range s.Cluster {
		s.Cluster[i] = id[s.Cluster[i]]
	}
	perm := make([]int, s.Len())
	for i := range perm {
		perm[i] = i
	}
	sort.SliceStable(perm, func(a, b int) bool {
		pa, pb := perm[a], perm[b]
		if s.Time[pa] != s.Time[pb] {
			return s.Time[pa] < s.Time[pb]
		}
		return s.Template[pa] < s.Template[pb]
	})
	s.Permute(perm)
	return s, Wout
}

// mergeScene builds clusters of a few neurons: neuron n has a smooth
// waveform on a few channels and a refractory (or Poisson) train; its
// spikes are split over several clusters whose templates are the
// waveform delayed by a few samples (their spike times earlier by the
// same amount), and some neurons share a waveform with another.
type scene struct {
	s     *Spikes
	u     *Units
	wpca  []float32
	nt    int
	ch    *Channels
	truth []int64 // true time of each input row
	nrn   []int   // neuron of each input row
}

func mergeScene(rng *rand.Rand, neurons, C, P, nt, NC int, full bool) *scene {
	wpca := orthoBasis(rng, P, nt)
	type cl struct{ nrn, delay int }
	var cls []cl
	waves := make([][]float64, neurons) // [C*nt]
	for n := range neurons {
		if n > 0 && rng.IntN(3) == 0 {
			waves[n] = waves[n-1] // same waveform, different neuron
		} else {
			w := make([]float64, C*nt)
			c0 := rng.IntN(C)
			for c := range C {
				a := math.Exp(-float64((c-c0)*(c-c0)) / 2)
				for t := range nt {
					x := float64(t-nt/3) / 2
					w[c*nt+t] = -a * (math.Exp(-x*x) - 0.3*math.Exp(-(x-3)*(x-3)/4))
				}
			}
			waves[n] = w
		}
		k := 1 + rng.IntN(3)
		for range k {
			cls = append(cls, cl{n, rng.IntN(5) - 2})
		}
	}
	N := len(cls)
	u := &Units{N: N, C: C, P: P, W: make([]float32, N*C*P)}
	ch := &Channels{X: make([]float64, C), Y: make([]float64, C)}
	for c := range C {
		ch.X[c], ch.Y[c] = float64(16*(c%2)), float64(20*(c/2))
	}
	for k, c := range cls {
		for ci := range C {
			for p := range P {
				var s float64
				for t := range nt {
					src := min(max(t-c.delay, 0), nt-1)
					s += waves[c.nrn][ci*nt+src] * float64(wpca[p*nt+t])
				}
				u.W[(k*C+ci)*P+p] = float32(s)
			}
		}
		best, bv := 0, -1.0
		for ci := range C {
			var e float64
			for p := range P {
				e += float64(u.W[(k*C+ci)*P+p]) * float64(u.W[(k*C+ci)*P+p])
			}
			if e > bv {
				best, bv = ci, e
			}
		}
		// The NC channels nearest to the best one (by index distance, ties
		// lower first).
		order := make([]int32, C)
		for i := range order {
			order[i] = int32(i)
		}
		sort.SliceStable(order, func(a, b int) bool {
			da, db := abs(int(order[a])-best), abs(int(order[b])-best)
			return da < db
		})
		ch.Chans = append(ch.Chans, order[:NC])
	}
	sc := &scene{u: u, wpca: wpca, nt: nt, ch: ch, s: &Spikes{NC: NC, P: P}}
	for n := range neurons {
		dead := int64(90)
		if n%4 == 3 {
			dead = 0 // Poisson: not good, never a base
		}
		var mine []int
		for k, c := range cls {
			if c.nrn == n {
				mine = append(mine, k)
			}
		}
		for _, t := range refractoryTrain(rng, 8+8*rng.Float64(), 120, dead) {
			k := mine[rng.IntN(len(mine))]
			sc.truth = append(sc.truth, t)
			sc.nrn = append(sc.nrn, n)
			sc.s.Time = append(sc.s.Time, t-int64(cls[k].delay))
			sc.s.Template = append(sc.s.Template, int32(k))
			sc.s.Cluster = append(sc.s.Cluster, int32(k))
			for _, c := range ch.Chans[k] {
				for p := range P {
					sc.s.Features = append(sc.s.Features, u.W[(k*C+int(c))*P+p]+float32(0.05*rng.NormFloat64()))
				}
			}
		}
	}
	_ = full
	return sc
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestMergeMatchesReference(t *testing.T) {
	sameMerges := 0
	for run := range uint64(8) {
		seed := run % 4
		prm := DefaultParams()
		if run >= 4 {
			prm.SameWaveform = 0 // Kilosort4's merges alone
		}
		rng := rand.New(rand.NewPCG(seed, 11))
		P, nt := 5, 21
		if seed >= 2 {
			P, nt = 13, 15 // nearly complete basis: delayed copies keep their lag
		}
		sc := mergeScene(rng, 5+int(seed), 7, P, nt, 4, false)
		ref, refW := refMerge(sc.s, sc.u, sc.wpca, sc.nt, prm)
		s := &Spikes{NC: sc.s.NC, P: sc.s.P, Time: slices.Clone(sc.s.Time), Template: slices.Clone(sc.s.Template),
			Cluster: slices.Clone(sc.s.Cluster), Features: slices.Clone(sc.s.Features)}
		res := Merge(s, sc.u, NewBasis(sc.wpca, P, nt), nil, prm)
		if res.Units.N != len(refW) {
			t.Fatalf("seed %d (same-waveform %g): %d units, reference %d (merges %+v)", seed, prm.SameWaveform, res.Units.N, len(refW), res.Merges)
		}
		t.Logf("seed %d (same-waveform %g): %d clusters → %d units, merges %+v", seed, prm.SameWaveform, sc.u.N, res.Units.N, res.Merges)
		for _, m := range res.Merges {
			if m.SameWaveform {
				if prm.SameWaveform == 0 {
					t.Fatalf("seed %d: a same-waveform merge with the rule off: %+v", seed, m)
				}
				sameMerges++
			}
		}
		if len(res.Merges) == 0 {
			t.Fatalf("seed %d (same-waveform %g): no merges; the scene should have some", seed, prm.SameWaveform)
		}
		if !slices.Equal(s.Time, ref.Time) || !slices.Equal(s.Cluster, ref.Cluster) || !slices.Equal(s.Template, ref.Template) {
			t.Fatalf("seed %d (same-waveform %g): spikes differ from the reference", seed, prm.SameWaveform)
		}
		for i, v := range s.Features {
			if math.Abs(float64(v-ref.Features[i])) > 1e-5 {
				t.Fatalf("seed %d (same-waveform %g): feature %d: %g, reference %g", seed, prm.SameWaveform, i, v, ref.Features[i])
			}
		}
		m := sc.u.C * sc.u.P
		for k, w := range refW {
			for i, v := range w {
				if g := res.Units.W[k*m+i]; math.Abs(float64(g-v)) > 1e-5 {
					t.Fatalf("seed %d (same-waveform %g): unit %d value %d: %g, reference %g", seed, prm.SameWaveform, k, i, g, v)
				}
			}
		}
	}
	if sameMerges == 0 {
		t.Fatal("no same-waveform merge in any scene: the rule is untested")
	}
}

// TestMergeJoinsSplitNeuron: under Kilosort4's rule alone, a refractory
// neuron split over two clusters whose templates differ by a 2-sample
// delay merges into one cluster whose spike times are the true ones; a
// second neuron with the same waveform but an independent train stays
// apart (its correlogram is not refractory).
func TestMergeJoinsSplitNeuron(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	C, P, nt, NC := 4, 21, 21, 4
	wpca := orthoBasis(rng, P, nt) // complete basis: shifts are exact up to edges
	wave := func(c, t int) float64 {
		x := float64(t-7) / 2
		return -math.Exp(-float64(c*c)/3) * (math.Exp(-x*x) - 0.3*math.Exp(-(x-3)*(x-3)/4))
	}
	delays := []int{0, 2, 0}
	u := &Units{N: 3, C: C, P: P, W: make([]float32, 3*C*P)}
	for k, d := range delays {
		for c := range C {
			for p := range P {
				var s float64
				for tt := range nt {
					s += wave(c, min(max(tt-d, 0), nt-1)) * float64(wpca[p*nt+tt])
				}
				u.W[(k*C+c)*P+p] = float32(s)
			}
		}
	}
	s := &Spikes{NC: NC, P: P}
	var want []int64
	add := func(k int, t int64) {
		s.Time = append(s.Time, t-int64(delays[k]))
		s.Template = append(s.Template, int32(k))
		s.Cluster = append(s.Cluster, int32(k))
		s.Features = append(s.Features, u.W[k*C*P:(k+1)*C*P]...)
	}
	for _, t := range refractoryTrain(rng, 15, 200, 90) {
		k := 0
		if rng.IntN(5) < 2 {
			k = 1
		}
		add(k, t)
		want = append(want, t)
	}
	for _, t := range refractoryTrain(rng, 12, 200, 90) {
		add(2, t)
	}
	ch := &Channels{Chans: [][]int32{{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}}, X: make([]float64, C), Y: []float64{0, 20, 40, 60}}
	prm := DefaultParams()
	prm.SameWaveform = 0
	res := Merge(s, u, NewBasis(wpca, P, nt), nil, prm)
	if res.Units.N != 2 || len(res.Merges) != 1 || res.Merges[0] != (MergeStep{Into: 0, From: 1, Shift: 2, Similarity: res.Merges[0].Similarity}) {
		t.Fatalf("units %d, merges %+v", res.Units.N, res.Merges)
	}
	var got []int64
	for i, c := range s.Cluster {
		if c == 0 {
			got = append(got, s.Time[i])
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("merged cluster has %d spikes, want %d at the true times", len(got), len(want))
	}
	if !slices.IsSorted(s.Time) {
		t.Fatal("spikes not sorted by time")
	}
	// The shifted features of the merged spikes equal the base template on
	// the samples the 2-sample delay does not touch: check through the
	// merged template, which must be close to the base's.
	sim := SimilarTemplates(res.Units, NewBasis(wpca, P, nt))
	if sim[0] < 0.99 || sim[1*2+1] < 0.99 {
		t.Fatalf("similarity diagonal %v", sim)
	}
	_ = ch
}

func TestMergeSmallInputs(t *testing.T) {
	wpca := orthoBasis(rand.New(rand.NewPCG(1, 1)), 3, 7)
	bs := NewBasis(wpca, 3, 7)
	// No spikes, two identical units: nothing is good, and units without
	// spikes are no waveform: nothing merges.
	u := &Units{N: 2, C: 2, P: 3, W: []float32{1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0}}
	s := &Spikes{NC: 1, P: 3}
	if r := Merge(s, u, bs, nil, DefaultParams()); r.Units.N != 2 || len(r.Merges) != 0 {
		t.Fatalf("empty: %+v", r)
	}
	// One spike; then 12 spikes at one time (span 0): no crash; the two
	// identical units merge by the same-waveform rule alone.
	for _, n := range []int{1, 12} {
		for _, same := range []float64{0, 0.99} {
			s := &Spikes{NC: 1, P: 3, Time: make([]int64, n), Template: make([]int32, n), Cluster: make([]int32, n),
				Features: make([]float32, 3*n)}
			s.Cluster[0] = 1
			prm := DefaultParams()
			prm.SameWaveform = same
			want := 2
			if same > 0 && n > 1 {
				want = 1
			}
			if r := Merge(s, u, bs, nil, prm); r.Units.N != want {
				t.Fatalf("%d spikes, same-waveform %g: %d units, want %d (%+v)", n, same, r.Units.N, want, r.Merges)
			}
		}
	}
}

func TestSortByTimeStable(t *testing.T) {
	s := &Spikes{NC: 1, P: 1, Time: []int64{5, 3, 5, 5, 3}, Template: []int32{2, 1, 1, 2, 1},
		Cluster: []int32{0, 1, 2, 3, 4}, Amp: []float32{0, 1, 2, 3, 4}, Features: []float32{0, 1, 2, 3, 4}}
	s.SortByTime()
	if !slices.Equal(s.Cluster, []int32{1, 4, 2, 0, 3}) || !slices.Equal(s.Amp, []float32{1, 4, 2, 0, 3}) ||
		!slices.Equal(s.Features, []float32{1, 4, 2, 0, 3}) {
		t.Fatalf("order %v", s.Cluster)
	}
}

// TestMergeSameWaveform is the case the same-waveform rule is for: one
// refractory neuron cut into two clusters whose templates are one sample
// apart, each also holding a few spikes of a colliding neighbour 16–25
// samples from one of the neuron's (what matching does on a collision).
// Those cross pairs spoil the correlogram test, so Kilosort4's rule alone
// keeps the halves apart; the rule joins them at the neuron's true times.
// A unit of the same waveform at 1.5× the amplitude and a unit of another
// waveform stay apart either way.
func TestMergeSameWaveform(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	C, P, nt, NC := 4, 21, 21, 4
	wpca := orthoBasis(rng, P, nt)
	wave := func(c, t int) float64 {
		x := float64(t-7) / 2
		return -math.Exp(-float64(c*c)/3) * (math.Exp(-x*x) - 0.3*math.Exp(-(x-3)*(x-3)/4))
	}
	other := func(c, t int) float64 { return wave(3-c, t) }
	type unit struct {
		delay int
		gain  float64
		f     func(c, t int) float64
	}
	units := []unit{{0, 1, wave}, {1, 1, wave}, {0, 1.5, wave}, {0, 1, other}}
	u := &Units{N: len(units), C: C, P: P, W: make([]float32, len(units)*C*P)}
	for k, un := range units {
		for c := range C {
			for p := range P {
				var s float64
				for tt := range nt {
					s += un.gain * un.f(c, min(max(tt-un.delay, 0), nt-1)) * float64(wpca[p*nt+tt])
				}
				u.W[(k*C+c)*P+p] = float32(s)
			}
		}
	}
	build := func() (*Spikes, []int64) {
		rng := rand.New(rand.NewPCG(33, 34))
		s := &Spikes{NC: NC, P: P}
		add := func(k int, t int64) {
			s.Time = append(s.Time, t-int64(units[k].delay))
			s.Template = append(s.Template, int32(k))
			s.Cluster = append(s.Cluster, int32(k))
			s.Features = append(s.Features, u.W[k*C*P:(k+1)*C*P]...)
		}
		var want []int64
		for _, t := range refractoryTrain(rng, 12, 300, 60) {
			k := rng.IntN(2)
			add(k, t)
			want = append(want, t)
			if rng.IntN(60) == 0 { // a colliding neighbour's spike, matched into a half
				add(rng.IntN(2), t+16+int64(rng.IntN(10)))
			}
		}
		for _, k := range []int{2, 3} {
			for _, t := range refractoryTrain(rng, 10, 300, 60) {
				add(k, t)
			}
		}
		return s, want
	}
	s, _ := build()
	prm := DefaultParams()
	prm.SameWaveform = 0
	if m := PairMetrics(Seconds(timesOf(s, 0), prm.FS), Seconds(timesOf(s, 1), prm.FS)); m.CrossRefractory(prm.CCGThreshold) {
		t.Fatalf("the halves' correlogram passes (%+v): the scene does not test the rule", m)
	}
	if r := Merge(s, u, NewBasis(wpca, P, nt), nil, prm); r.Units.N != 4 {
		t.Fatalf("Kilosort4's rule alone: %d units, merges %+v", r.Units.N, r.Merges)
	}
	s, want := build()
	res := Merge(s, u, NewBasis(wpca, P, nt), nil, DefaultParams())
	m := res.Merges
	if res.Units.N != 3 || len(m) != 1 || !m[0].SameWaveform || m[0].Into+m[0].From != 1 ||
		m[0].Shift != units[m[0].From].delay-units[m[0].Into].delay {
		t.Fatalf("units %d, merges %+v", res.Units.N, m)
	}
	// The merged unit (label 0 after renumbering) holds every spike of
	// the neuron at its time in the base's alignment.
	got := map[int64]bool{}
	for i, c := range s.Cluster {
		if c == 0 {
			got[s.Time[i]] = true
		}
	}
	for _, tw := range want {
		if !got[tw-int64(units[m[0].Into].delay)] {
			t.Fatalf("the neuron's spike at %d is not in the merged unit at its true time", tw)
		}
	}
}

// timesOf returns the times of cluster k's spikes.
func timesOf(s *Spikes, k int32) []int64 {
	var t []int64
	for i, c := range s.Cluster {
		if c == k {
			t = append(t, s.Time[i])
		}
	}
	return t
}
