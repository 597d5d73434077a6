package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"dspk/internal/par"
)

// kmeansBlock is the number of points one task handles in KMeans. Sums
// are kept per block and added in block order, so results do not depend
// on the number of goroutines.
const kmeansBlock = 4096

// KMeans defaults, those of sklearn.cluster.KMeans.
const (
	// DefaultKMeansInit is the number of independent k-means++ runs.
	DefaultKMeansInit = 10
	// DefaultKMeansMaxIter bounds the Lloyd iterations of one run.
	DefaultKMeansMaxIter = 300
	// DefaultKMeansTol is the convergence tolerance, relative to the
	// mean per-feature variance of the data.
	DefaultKMeansTol = 1e-4
)

// KMeansOptions configures [KMeans]. Zero values select the defaults.
type KMeansOptions struct {
	// NInit is the number of k-means++ initialisations; the run with the
	// lowest inertia wins (the first one on ties). 0 means
	// DefaultKMeansInit.
	NInit int
	// MaxIter bounds the Lloyd iterations of each run; 0 means
	// DefaultKMeansMaxIter.
	MaxIter int
	// Tol stops a run when the summed squared movement of the centres is
	// at most Tol times the mean per-feature variance of x; 0 means
	// DefaultKMeansTol.
	Tol float64
	// Seed seeds the random generator (PCG) that picks the initial
	// centres; the same seed gives the same result.
	Seed uint64
}

// KMeansResult is the outcome of [KMeans].
type KMeansResult struct {
	// Centers holds the k cluster centres, k×d row-major.
	Centers []float64
	// Labels holds the cluster of each point.
	Labels []int32
	// Inertia is the sum of squared distances of the points to their
	// centres.
	Inertia float64
	// Iter is the number of Lloyd iterations of the returned run.
	Iter int
	// Run is the index (0-based) of the returned run among the NInit.
	Run int
}

// KMeans clusters the n points of dimension d stored row-major in x into
// k clusters the way sklearn.cluster.KMeans (algorithm "lloyd") does:
//
//   - each run starts from greedy k-means++ seeding (the first centre a
//     uniformly chosen point, then for each further centre 2+⌊ln k⌋
//     candidates drawn with probability proportional to the squared
//     distance to the nearest chosen centre, keeping the candidate that
//     lowers the total potential most);
//   - Lloyd iterations (assign every point to its nearest centre, the
//     first on ties; move every centre to the mean of its points) until
//     the labels stop changing, or the centres move by at most
//     Tol·mean_j var(x[:, j]) in summed squares, or MaxIter;
//   - a cluster that becomes empty takes the point farthest from its
//     centre (sklearn's relocation rule);
//   - after a run that stopped on tolerance the labels are recomputed
//     against the final centres; the run of lowest inertia wins.
//
// All arithmetic is float64. Points are processed in parallel in fixed
// blocks whose partial sums are added in block order, so the result is
// the same for any GOMAXPROCS. The random stream is math/rand/v2's PCG
// seeded with (Seed, 0x6b6d65616e73), so it is not numpy's.
//
// KMeans panics if len(x) != n·d or d < 1 or k < 1; it returns an error
// if there are fewer points than clusters.
func KMeans(x []float32, n, d, k int, opt KMeansOptions) (KMeansResult, error) {
	if d < 1 || n < 0 || len(x) != n*d {
		panic(fmt.Sprintf("linalg: KMeans of %d values as %d×%d", len(x), n, d))
	}
	if k < 1 {
		panic(fmt.Sprintf("linalg: KMeans into %d clusters", k))
	}
	if n < k {
		return KMeansResult{}, fmt.Errorf("linalg: k-means needs at least as many points as clusters, got %d points for %d clusters", n, k)
	}
	if opt.NInit <= 0 {
		opt.NInit = DefaultKMeansInit
	}
	if opt.MaxIter <= 0 {
		opt.MaxIter = DefaultKMeansMaxIter
	}
	if opt.Tol <= 0 {
		opt.Tol = DefaultKMeansTol
	}
	tol := opt.Tol * (&kmWork{x: x, n: n, d: d}).meanVariance()
	// The runs are independent but for the random stream they share, and
	// a run draws the same number of values whatever the data (one IntN,
	// then Float64s: kmDraws), so the stream is drawn first, run by run in
	// the order a sequential loop would draw it, and the runs then go
	// concurrently, each with its own scratch: every run's result, and so
	// the winner, is what the sequential loop gives. Points are split
	// into few blocks when n is small (templates are learned from a few
	// thousand clips), so the runs are what keeps the cores busy.
	rng := rand.New(rand.NewPCG(opt.Seed, 0x6b6d65616e73))
	draws := make([]kmDraws, opt.NInit)
	trials := kmTrials(k)
	for run := range draws {
		draws[run].first = rng.IntN(n)
		draws[run].u = make([]float64, (k-1)*trials)
		for i := range draws[run].u {
			draws[run].u[i] = rng.Float64()
		}
	}
	results := make([]KMeansResult, opt.NInit)
	par.Each(opt.NInit, par.Workers(opt.NInit), func(_, run int) {
		w := newKMWork(x, n, d, k)
		centers := w.seedPlusPlus(&draws[run])
		labels, iter := w.lloyd(centers, opt.MaxIter, tol)
		results[run] = KMeansResult{Centers: centers, Labels: labels, Inertia: w.inertia(centers, labels), Iter: iter, Run: run}
	})
	best := results[0]
	for _, r := range results[1:] {
		if r.Inertia < best.Inertia {
			best = r
		}
	}
	return best, nil
}

// kmDraws is one run's share of the random stream: the index of the
// first centre, then the uniform draws of the seeding's trials in the
// order they are used.
type kmDraws struct {
	first int
	u     []float64
}

// next returns the next uniform draw.
func (r *kmDraws) next() float64 {
	v := r.u[0]
	r.u = r.u[1:]
	return v
}

// kmTrials is the number of candidates greedy k-means++ draws for each
// centre after the first (sklearn's 2 + ⌊ln k⌋).
func kmTrials(k int) int { return 2 + int(math.Log(float64(k))) }

// kmWork holds the data and scratch of one KMeans call.
type kmWork struct {
	x       []float32
	n, d, k int
	nb      int
	dist    []float64 // squared distance of each point to its centre (for relocation)
	upper   []float64 // Hamerly upper bound: distance to the assigned centre
	lower   []float64 // Hamerly lower bound: distance to the second nearest centre
	half    []float64 // half the distance of each centre to its nearest other centre
	parts   []kmPart
}

// kmPart is the contribution of one block of points.
type kmPart struct {
	sums    []float64 // k×d
	counts  []float64 // k
	changed int
	pot     float64
}

func newKMWork(x []float32, n, d, k int) *kmWork {
	w := &kmWork{x: x, n: n, d: d, k: k, nb: (n + kmeansBlock - 1) / kmeansBlock}
	w.dist = make([]float64, n)
	w.upper = make([]float64, n)
	w.lower = make([]float64, n)
	w.half = make([]float64, k)
	w.parts = make([]kmPart, w.nb)
	for b := range w.parts {
		w.parts[b] = kmPart{sums: make([]float64, k*d), counts: make([]float64, k)}
	}
	return w
}

// blocks runs fn for every block index on up to GOMAXPROCS goroutines;
// row is a per-goroutine scratch of length d.
func (w *kmWork) blocks(fn func(b int, row []float64)) {
	nw := par.Workers(w.nb)
	rows := make([][]float64, nw)
	par.Each(w.nb, nw, func(g, b int) {
		if rows[g] == nil {
			rows[g] = make([]float64, w.d)
		}
		fn(b, rows[g])
	})
}

// meanVariance returns the mean over features of the population variance.
func (w *kmWork) meanVariance() float64 {
	n, d := w.n, w.d
	mean := make([]float64, d)
	for i := range n {
		for j, v := range w.x[i*d : (i+1)*d] {
			mean[j] += float64(v)
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	var s float64
	for i := range n {
		for j, v := range w.x[i*d : (i+1)*d] {
			e := float64(v) - mean[j]
			s += e * e
		}
	}
	return s / float64(n*d)
}

// point converts point i to float64 in row.
func (w *kmWork) point(i int, row []float64) {
	for j, v := range w.x[i*w.d : (i+1)*w.d] {
		row[j] = float64(v)
	}
}

// sqDist is the squared distance of row to c, computed directly (four
// partial sums, added pairwise).
func sqDist(row, c []float64) float64 {
	c = c[:len(row)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+3 < len(row); j += 4 {
		e0, e1, e2, e3 := row[j]-c[j], row[j+1]-c[j+1], row[j+2]-c[j+2], row[j+3]-c[j+3]
		s0 += e0 * e0
		s1 += e1 * e1
		s2 += e2 * e2
		s3 += e3 * e3
	}
	for ; j < len(row); j++ {
		e := row[j] - c[j]
		s0 += e * e
	}
	return (s0 + s1) + (s2 + s3)
}

// sqDist32 is sqDist for a float32 point: sqDist32Go, or the same
// operations in vector registers (kmeans_amd64.s).
func sqDist32(x []float32, c []float64) float64 {
	if useSqDist && len(x) > 0 {
		c = c[:len(x)]
		return sqDist32AVX2(&x[0], &c[0], len(x))
	}
	return sqDist32Go(x, c)
}

// sqDist32Go is sqDist32 in Go: four partial sums, each of the rounded
// squares of the rounded differences in order, added pairwise.
func sqDist32Go(x []float32, c []float64) float64 {
	c = c[:len(x)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+3 < len(x); j += 4 {
		e0, e1 := float64(x[j])-c[j], float64(x[j+1])-c[j+1]
		e2, e3 := float64(x[j+2])-c[j+2], float64(x[j+3])-c[j+3]
		s0 += e0 * e0
		s1 += e1 * e1
		s2 += e2 * e2
		s3 += e3 * e3
	}
	for ; j < len(x); j++ {
		e := float64(x[j]) - c[j]
		s0 += e * e
	}
	return (s0 + s1) + (s2 + s3)
}

// seedPlusPlus picks k initial centres by greedy k-means++.
func (w *kmWork) seedPlusPlus(rng *kmDraws) []float64 {
	n, d, k := w.n, w.d, w.k
	centers := make([]float64, k*d)
	first := rng.first
	w.point(first, centers[:d])
	closest := make([]float64, n)
	w.blocks(func(b int, row []float64) {
		var pot float64
		for i := b * kmeansBlock; i < min((b+1)*kmeansBlock, n); i++ {
			closest[i] = sqDist32(w.x[i*d:(i+1)*d], centers[:d])
			pot += closest[i]
		}
		w.parts[b].pot = pot
	})
	pot := w.sumPot()
	trials := kmTrials(k)
	cum := make([]float64, n)
	cand := make([]float64, d)
	bestDist := make([]float64, n)
	candDist := make([]float64, n)
	for c := 1; c < k; c++ {
		var s float64
		for i, v := range closest {
			s += v
			cum[i] = s
		}
		bestID, bestPot := -1, 0.0
		for range trials {
			r := rng.next() * pot
			id := sort.SearchFloat64s(cum, r) // first i with cum[i] >= r
			id = min(id, n-1)
			w.point(id, cand)
			w.blocks(func(b int, row []float64) {
				var p float64
				for i := b * kmeansBlock; i < min((b+1)*kmeansBlock, n); i++ {
					dd := min(closest[i], sqDist32(w.x[i*d:(i+1)*d], cand))
					candDist[i] = dd
					p += dd
				}
				w.parts[b].pot = p
			})
			p := w.sumPot()
			if bestID < 0 || p < bestPot {
				bestID, bestPot = id, p
				copy(bestDist, candDist)
			}
		}
		w.point(bestID, centers[c*d:(c+1)*d])
		copy(closest, bestDist)
		pot = bestPot
	}
	return centers
}

func (w *kmWork) sumPot() float64 {
	var p float64
	for b := range w.parts {
		p += w.parts[b].pot
	}
	return p
}

// boundSlack is the relative margin by which a Hamerly bound must beat
// the competing bound before a point's distances are skipped, so that
// rounding in the bounds never changes an assignment the plain algorithm
// would make (only exact near-ties within this margin could differ).
const boundSlack = 1e-9

// assign labels every point with its nearest centre (first on ties,
// squared distances computed directly) and returns how many labels
// changed. With full unset it uses Hamerly's bounds (upper: distance to
// the assigned centre; lower: to the second nearest) to skip points whose
// nearest centre cannot have changed; the caller keeps the bounds valid
// through [kmWork.moveBounds]. Labels are identical to a full scan except
// for ties within boundSlack.
func (w *kmWork) assign(centers []float64, labels []int32, full bool) int {
	n, d, k := w.n, w.d, w.k
	half := w.half
	for j := range k {
		half[j] = math.Inf(1)
		for m := range k {
			if m != j {
				half[j] = min(half[j], 0.5*math.Sqrt(sqDist(centers[j*d:(j+1)*d], centers[m*d:(m+1)*d])))
			}
		}
	}
	w.blocks(func(b int, row []float64) {
		p := &w.parts[b]
		p.changed = 0
		for i := b * kmeansBlock; i < min((b+1)*kmeansBlock, n); i++ {
			a := int(labels[i])
			xi := w.x[i*d : (i+1)*d]
			if !full && a >= 0 {
				m := max(half[a], w.lower[i]) * (1 - boundSlack)
				if w.upper[i] < m {
					continue
				}
				w.upper[i] = math.Sqrt(sqDist32(xi, centers[a*d:(a+1)*d]))
				if w.upper[i] < m {
					continue
				}
			}
			best, bd, sd := 0, math.Inf(1), math.Inf(1)
			for j := range k {
				dd := sqDist32(xi, centers[j*d:(j+1)*d])
				if dd < bd {
					best, bd, sd = j, dd, bd
				} else if dd < sd {
					sd = dd
				}
			}
			w.upper[i] = math.Sqrt(bd)
			w.lower[i] = math.Sqrt(sd)
			if a != best {
				p.changed++
				labels[i] = int32(best)
			}
		}
	})
	changed := 0
	for b := range w.parts {
		changed += w.parts[b].changed
	}
	return changed
}

// moveBounds updates the Hamerly bounds after centre j moved by move[j].
func (w *kmWork) moveBounds(labels []int32, move []float64) {
	// Largest and second largest movement, to loosen lower bounds by the
	// largest movement of any other centre.
	m1, m2, j1 := 0.0, 0.0, -1
	for j, v := range move {
		if v > m1 {
			m1, m2, j1 = v, m1, j
		} else if v > m2 {
			m2 = v
		}
	}
	w.blocks(func(b int, _ []float64) {
		for i := b * kmeansBlock; i < min((b+1)*kmeansBlock, w.n); i++ {
			a := int(labels[i])
			w.upper[i] += move[a]
			if a == j1 {
				w.lower[i] -= m2
			} else {
				w.lower[i] -= m1
			}
		}
	})
}

// accumulate sums the points of every cluster (per block, added in block
// order) into sums and counts.
func (w *kmWork) accumulate(labels []int32, sums, counts []float64) {
	n, d := w.n, w.d
	w.blocks(func(b int, row []float64) {
		p := &w.parts[b]
		clear(p.sums)
		clear(p.counts)
		for i := b * kmeansBlock; i < min((b+1)*kmeansBlock, n); i++ {
			l := int(labels[i])
			s := p.sums[l*d : (l+1)*d]
			for t, v := range w.x[i*d : (i+1)*d] {
				s[t] += float64(v)
			}
			p.counts[l]++
		}
	})
	clear(sums)
	clear(counts)
	for b := range w.parts {
		p := &w.parts[b]
		for t, v := range p.sums {
			sums[t] += v
		}
		for j, v := range p.counts {
			counts[j] += v
		}
	}
}

// lloyd runs Lloyd iterations from centers (updated in place) and returns
// the final labels and the number of iterations.
func (w *kmWork) lloyd(centers []float64, maxIter int, tol float64) ([]int32, int) {
	n, d, k := w.n, w.d, w.k
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = -1
	}
	sums := make([]float64, k*d)
	counts := make([]float64, k)
	move := make([]float64, k)
	strict := false
	iter := 0
	for iter < maxIter {
		changed := w.assign(centers, labels, iter == 0)
		iter++
		w.accumulate(labels, sums, counts)
		if slices.Contains(counts, 0) {
			w.exactDist(centers, labels)
			w.relocateEmpty(labels, sums, counts)
		}
		var shift float64
		for j := range k {
			c := centers[j*d : (j+1)*d]
			s := sums[j*d : (j+1)*d]
			move[j] = 0
			if counts[j] == 0 {
				continue
			}
			var m float64
			for t := range c {
				v := s[t] / counts[j]
				e := v - c[t]
				m += e * e
				c[t] = v
			}
			move[j] = math.Sqrt(m)
			shift += m
		}
		w.moveBounds(labels, move)
		if changed == 0 {
			strict = true
			break
		}
		if shift <= tol {
			break
		}
	}
	if !strict {
		w.assign(centers, labels, false)
	}
	return labels, iter
}

// exactDist stores in w.dist the squared distance of every point to its
// assigned centre.
func (w *kmWork) exactDist(centers []float64, labels []int32) {
	d := w.d
	w.blocks(func(b int, row []float64) {
		for i := b * kmeansBlock; i < min((b+1)*kmeansBlock, w.n); i++ {
			l := int(labels[i])
			w.dist[i] = sqDist32(w.x[i*d:(i+1)*d], centers[l*d:(l+1)*d])
		}
	})
}

// relocateEmpty gives every empty cluster the point farthest from its
// centre (largest first, lower index on ties), moving that point's
// contribution out of its own cluster's sum, as sklearn does.
func (w *kmWork) relocateEmpty(labels []int32, sums, counts []float64) {
	d := w.d
	var empty []int
	for j, c := range counts {
		if c == 0 {
			empty = append(empty, j)
		}
	}
	if len(empty) == 0 {
		return
	}
	idx := make([]int, w.n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return w.dist[idx[a]] > w.dist[idx[b]] })
	row := make([]float64, d)
	for e, j := range empty {
		if e >= len(idx) {
			break
		}
		far := idx[e]
		w.point(far, row)
		old := int(labels[far])
		for t, v := range row {
			sums[old*d+t] -= v
			sums[j*d+t] = v
		}
		counts[old]--
		counts[j] = 1
	}
}

// inertia is Σ‖x_i − c_{label i}‖², computed directly and summed per
// block in block order.
func (w *kmWork) inertia(centers []float64, labels []int32) float64 {
	n, d := w.n, w.d
	w.blocks(func(b int, row []float64) {
		var s float64
		for i := b * kmeansBlock; i < min((b+1)*kmeansBlock, n); i++ {
			l := int(labels[i])
			s += sqDist32(w.x[i*d:(i+1)*d], centers[l*d:(l+1)*d])
		}
		w.parts[b].pot = s
	})
	return w.sumPot()
}
