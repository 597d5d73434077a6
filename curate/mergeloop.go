package curate

import "slices"

// A MergeLoop is the greedy merge loop of Kilosort4's template merges,
// shared by the merge of the first clustering's templates
// (postprocess_templates, in package cluster) and the final merges of
// [Merge]: each base, in a given order, absorbs its most similar
// candidate that passes a test, and is examined again after every merge
// (its template changed) until no candidate passes.
type MergeLoop struct {
	// Alive[j] is false for a unit merged into another; Run clears it as
	// it merges.
	Alive []bool
	// Score returns the similarity of every unit to base k (len(Alive)
	// values; those of k and of units no longer alive are not read).
	Score func(k int) []float64
	// Join merges unit j into base k.
	Join func(k, j int)
	// Stop, if not nil, ends the loop once it reports true; it is asked
	// before every examination of a base.
	Stop func() bool
}

// Run examines the bases in order, skipping those no longer alive. An
// examination of base k scores every unit against it and tries the
// candidates (the units alive but k) by decreasing similarity, ties
// higher index first (the order a stable ascending sort reversed gives),
// down to least: the first for which accept(k, j) holds is joined into k
// and k is examined again; the examination that joins none ends k's turn.
func (l *MergeLoop) Run(bases []int, least float64, accept func(k, j int) bool) {
	n := len(l.Alive)
	cand := make([]int, 0, n)
	for _, k := range bases {
		if !l.Alive[k] {
			continue
		}
		for l.Stop == nil || !l.Stop() {
			sim := l.Score(k)
			cand = cand[:0]
			for j := range n {
				if j != k && l.Alive[j] {
					cand = append(cand, j)
				}
			}
			slices.SortStableFunc(cand, func(a, b int) int {
				switch {
				case sim[a] > sim[b]:
					return -1
				case sim[a] < sim[b]:
					return 1
				}
				return b - a
			})
			merged := false
			for _, j := range cand {
				if !(sim[j] >= least) {
					break
				}
				if accept(k, j) {
					l.Join(k, j)
					l.Alive[j] = false
					merged = true
					break
				}
			}
			if !merged {
				break
			}
		}
	}
}
