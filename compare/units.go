package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Sorting is a set of spikes with unit labels.
type Sorting struct {
	Times  []int64
	Labels []int32
	// Units lists the unit ids (ascending, distinct); nil means the
	// distinct labels. Units without spikes count as units (a ground truth
	// may have silent units).
	Units []int32
}

// unitIDs returns the sorting's unit ids and each spike's unit index.
func (s Sorting) unitIDs() (ids []int32, idx []int, err error) {
	if len(s.Labels) != len(s.Times) {
		return nil, nil, fmt.Errorf("compare: %d spike times with %d unit labels", len(s.Times), len(s.Labels))
	}
	ids = s.Units
	if ids == nil {
		ids = slices.Clone(s.Labels)
		slices.Sort(ids)
		ids = slices.Compact(ids)
	} else if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		return nil, nil, fmt.Errorf("compare: unit ids not ascending and distinct")
	}
	idx = make([]int, len(s.Labels))
	for i, l := range s.Labels {
		k, ok := slices.BinarySearch(ids, l)
		if !ok {
			return nil, nil, fmt.Errorf("compare: spike %d has unit %d, which is not in the unit list", i, l)
		}
		idx[i] = k
	}
	return ids, idx, nil
}

// UnitOptions are the scores of SpikeInterface's GroundTruthComparison
// (its defaults from [DefaultUnitOptions]).
type UnitOptions struct {
	// Delta is the largest |t_truth − t_sorted| in samples of a matching
	// spike pair: int(0.4 ms·fs) = 12 at 30 kHz (delta_time).
	Delta int64
	// MatchScore is the least agreement of a matched pair (0.5).
	MatchScore float64
	// ChanceScore is the least agreement of a "best match" (0.1).
	ChanceScore float64
	// WellDetected is the least agreement of a well-detected unit (0.8).
	WellDetected float64
	// Redundant is the least agreement of a redundant unit (0.2).
	Redundant float64
	// Overmerged: a sorted unit with agreement above this with two or more
	// truth units is over-merged (0.2).
	Overmerged float64
}

// DefaultUnitOptions returns SpikeInterface's defaults at sample rate fs:
// delta_time 0.4 ms (int(0.4/1000·fs) samples), match_score 0.5,
// chance_score 0.1, well_detected_score 0.8, redundant_score and
// overmerged_score 0.2.
func DefaultUnitOptions(fs float64) UnitOptions {
	return UnitOptions{Delta: int64(0.4 / 1000 * fs), MatchScore: 0.5, ChanceScore: 0.1, WellDetected: 0.8,
		Redundant: 0.2, Overmerged: 0.2}
}

// TruthUnitScore is the score of one truth unit.
type TruthUnitScore struct {
	// Unit is the truth unit's id and Spikes its spike count.
	Unit   int32 `json:"unit"`
	Spikes int   `json:"spikes"`
	// Matched is the sorted unit assigned one-to-one (−1: none), Found its
	// spike count and TP the matching spike pairs.
	Matched int32 `json:"matched"`
	Found   int   `json:"found"`
	TP      int64 `json:"tp"`
	// Accuracy = TP/(Spikes + Found − TP), Recall = TP/Spikes, Precision =
	// TP/Found of the assigned unit (0 without one).
	Accuracy  float64 `json:"accuracy"`
	Recall    float64 `json:"recall"`
	Precision float64 `json:"precision"`
	// Best is the sorted unit of highest agreement (−1 below the chance
	// score), whether assigned or not, and BestAccuracy that agreement.
	Best         int32   `json:"best"`
	BestAccuracy float64 `json:"best_accuracy"`
}

// UnitReport is a unit-level comparison of a sorting with ground truth,
// as SpikeInterface's GroundTruthComparison (match_mode "hungarian",
// exhaustive_gt) counts it.
type UnitReport struct {
	Options UnitOptions `json:"options"`
	// NTruth and NSorted are the numbers of units.
	NTruth  int `json:"n_truth_units"`
	NSorted int `json:"n_sorted_units"`
	// WellDetected counts assigned sorted units with agreement ≥
	// Options.WellDetected.
	WellDetected int `json:"well_detected"`
	// Redundant counts unassigned sorted units whose best truth unit (≥
	// chance) prefers another sorted unit, with agreement ≥
	// Options.Redundant (over-split pieces).
	Redundant int `json:"redundant"`
	// Overmerged counts sorted units with agreement above
	// Options.Overmerged with two or more truth units.
	Overmerged int `json:"overmerged"`
	// FalsePositive counts unassigned sorted units with no truth unit at
	// chance level or their best one below Options.Redundant.
	FalsePositive int `json:"false_positive"`
	// Bad counts unassigned sorted units.
	Bad int `json:"bad"`
	// MeanAccuracy, MeanRecall and MeanPrecision average the truth units'
	// scores (SpikeInterface's "pooled_with_average").
	MeanAccuracy  float64 `json:"mean_accuracy"`
	MeanRecall    float64 `json:"mean_recall"`
	MeanPrecision float64 `json:"mean_precision"`
	// Truth has one row per truth unit, by id.
	Truth []TruthUnitScore `json:"truth_units"`
	// SortedIDs are the sorted units' ids; Agreement[a][b] the agreement
	// of truth unit a with sorted unit b (indices into Truth and
	// SortedIDs), Matches the spike pairs behind it.
	SortedIDs []int32     `json:"-"`
	Agreement [][]float64 `json:"-"`
	Matches   [][]int64   `json:"-"`
}

// MatchUnits compares sorting sorted with ground truth truth unit by unit.
//
// For each truth unit a and sorted unit b the matching spikes are a
// maximum one-to-one matching of pairs within Delta samples (per pair of
// units: a sorted spike can match one spike of a but also spikes of other
// truth units); the agreement is m/(n_a + n_b − m). Truth and sorted units
// are then assigned one-to-one by the Hungarian method on the agreements
// below MatchScore set to 0, and pairs of agreement ≥ MatchScore kept, as
// SpikeInterface does. SpikeInterface counts matches with a greedy scan
// that can, in bursts closer than Delta, count a spike twice and is then
// clipped; when a truth unit's spikes are more than 2·Delta apart the
// windows are disjoint and both give the same counts. Ties between equally good assignments may be broken
// differently from scipy's linear_sum_assignment.
func MatchUnits(truth, sorted Sorting, opt UnitOptions) (*UnitReport, error) {
	if opt.Delta < 0 {
		return nil, fmt.Errorf("compare: largest lag %d samples must be at least 0", opt.Delta)
	}
	tid, tidx, err := truth.unitIDs()
	if err != nil {
		return nil, fmt.Errorf("truth: %w", err)
	}
	sid, sidx, err := sorted.unitIDs()
	if err != nil {
		return nil, fmt.Errorf("sorting: %w", err)
	}
	U1, U2 := len(tid), len(sid)
	n1 := make([]int, U1)
	for _, a := range tidx {
		n1[a]++
	}
	n2 := make([]int, U2)
	for _, b := range sidx {
		n2[b]++
	}
	M := matchCounts(truth.Times, tidx, U1, sorted.Times, sidx, U2, opt.Delta)
	A := make([][]float64, U1)
	for a := range A {
		A[a] = make([]float64, U2)
		for b := range A[a] {
			if d := int64(n1[a]+n2[b]) - M[a][b]; d > 0 {
				A[a][b] = float64(M[a][b]) / float64(d)
			}
		}
	}
	r := &UnitReport{Options: opt, NTruth: U1, NSorted: U2, SortedIDs: sid, Agreement: A, Matches: M}
	h12 := hungarianMatch(A, opt.MatchScore)
	h21 := make([]int, U2)
	for b := range h21 {
		h21[b] = -1
	}
	for a, b := range h12 {
		if b >= 0 {
			h21[b] = a
		}
	}
	best12, best21 := bestMatch(A, U1, U2, opt.ChanceScore)
	for a := range U1 {
		row := TruthUnitScore{Unit: tid[a], Spikes: n1[a], Matched: -1, Best: -1}
		if b := best12[a]; b >= 0 {
			row.Best, row.BestAccuracy = sid[b], A[a][b]
		}
		if b := h12[a]; b >= 0 {
			row.Matched, row.Found, row.TP = sid[b], n2[b], M[a][b]
			if tp := float64(M[a][b]); tp > 0 && n1[a] > 0 {
				row.Accuracy = tp / float64(int64(n1[a]+n2[b])-M[a][b])
				row.Recall = tp / float64(n1[a])
				row.Precision = tp / float64(n2[b])
			}
		}
		r.Truth = append(r.Truth, row)
		r.MeanAccuracy += row.Accuracy
		r.MeanRecall += row.Recall
		r.MeanPrecision += row.Precision
	}
	if U1 > 0 {
		r.MeanAccuracy /= float64(U1)
		r.MeanRecall /= float64(U1)
		r.MeanPrecision /= float64(U1)
	}
	for b := range U2 {
		if a := h21[b]; a >= 0 {
			if A[a][b] >= opt.WellDetected {
				r.WellDetected++
			}
		} else {
			r.Bad++
			a := best21[b]
			switch {
			case a < 0 || A[a][b] < opt.Redundant:
				r.FalsePositive++
			case best12[a] != b:
				r.Redundant++
			}
		}
		above := 0
		for a := range U1 {
			if A[a][b] > opt.Overmerged {
				above++
			}
		}
		if above > 1 {
			r.Overmerged++
		}
	}
	return r, nil
}

// matchCounts returns M[a][b], the size of a maximum one-to-one matching
// between the spikes of truth unit a and sorted unit b within delta
// samples. Scanning truth spikes in time order, each takes the earliest
// spike of b in its window after the last one b gave to a: with windows of
// equal width this greedy matching is maximum, and per (a, b) only the
// last matched sorted spike needs remembering.
func matchCounts(t1 []int64, u1 []int, U1 int, t2 []int64, u2 []int, U2 int, delta int64) [][]int64 {
	o1, o2 := timeOrder(t1), timeOrder(t2)
	M := make([][]int64, U1)
	last := make([][]int, U1)
	for a := range M {
		M[a] = make([]int64, U2)
		last[a] = make([]int, U2)
		for b := range last[a] {
			last[a][b] = -1
		}
	}
	stamp := make([]int, U2)
	for b := range stamp {
		stamp[b] = -1
	}
	lo := 0
	for n, i := range o1 {
		t, a := t1[i], u1[i]
		for lo < len(o2) && t2[o2[lo]] < t-delta {
			lo++
		}
		for r := lo; r < len(o2) && t2[o2[r]] <= t+delta; r++ {
			b := u2[o2[r]]
			if stamp[b] == n || r <= last[a][b] {
				continue
			}
			stamp[b] = n
			last[a][b] = r
			M[a][b]++
		}
	}
	return M
}

// timeOrder returns the indices of x sorted by value, ties by index.
func timeOrder(x []int64) []int {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	if slices.IsSorted(x) {
		return idx
	}
	slices.SortFunc(idx, func(a, b int) int {
		if x[a] != x[b] {
			if x[a] < x[b] {
				return -1
			}
			return 1
		}
		return a - b
	})
	return idx
}

// bestMatch returns, for each truth unit, the first sorted unit of
// highest agreement and for each sorted unit the first truth unit of
// highest agreement, −1 where that agreement is below min.
func bestMatch(A [][]float64, U1, U2 int, min float64) (b12, b21 []int) {
	b12 = make([]int, U1)
	for a := range U1 {
		b12[a] = -1
		best := -1
		for b := range U2 {
			if best < 0 || A[a][b] > A[a][best] {
				best = b
			}
		}
		if best >= 0 && A[a][best] >= min {
			b12[a] = best
		}
	}
	b21 = make([]int, U2)
	for b := range U2 {
		b21[b] = -1
		best := -1
		for a := range U1 {
			if best < 0 || A[a][b] > A[best][b] {
				best = a
			}
		}
		if best >= 0 && A[best][b] >= min {
			b21[b] = best
		}
	}
	return b12, b21
}

// hungarianMatch returns for each row the column assigned by a maximum
// weight assignment of A with entries below min set to 0, keeping only
// pairs of A ≥ min (−1 otherwise). Rows and columns without an entry ≥ min
// take no part, which leaves the kept pairs unchanged.
func hungarianMatch(A [][]float64, min float64) []int {
	out := make([]int, len(A))
	for a := range out {
		out[a] = -1
	}
	var rows, cols []int
	colSeen := map[int]bool{}
	for a, row := range A {
		has := false
		for b, v := range row {
			if v >= min {
				has = true
				colSeen[b] = true
			}
		}
		if has {
			rows = append(rows, a)
		}
	}
	for b := range colSeen {
		cols = append(cols, b)
	}
	sort.Ints(cols)
	if len(rows) == 0 {
		return out
	}
	w := make([][]float64, len(rows))
	for i, a := range rows {
		w[i] = make([]float64, len(cols))
		for j, b := range cols {
			if v := A[a][b]; v >= min {
				w[i][j] = v
			}
		}
	}
	for i, j := range assign(w) {
		if j >= 0 && A[rows[i]][cols[j]] >= min {
			out[rows[i]] = cols[j]
		}
	}
	return out
}

// assign solves the maximum-weight assignment of the n×m matrix w (every
// row gets a distinct column if n ≤ m, else every column a distinct row)
// by the Hungarian method with potentials, O(min² · max). It returns the
// column of each row, −1 for rows left out.
func assign(w [][]float64) []int {
	n, m := len(w), len(w[0])
	if n > m {
		t := make([][]float64, m)
		for j := range t {
			t[j] = make([]float64, n)
			for i := range n {
				t[j][i] = w[i][j]
			}
		}
		colOf := assign(t)
		out := make([]int, n)
		for i := range out {
			out[i] = -1
		}
		for j, i := range colOf {
			if i >= 0 {
				out[i] = j
			}
		}
		return out
	}
	// Minimise cost = −w; 1-based arrays, p[j] the row matched to column j.
	inf := math.Inf(1)
	u := make([]float64, n+1)
	v := make([]float64, m+1)
	p := make([]int, m+1)
	way := make([]int, m+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		minv := make([]float64, m+1)
		used := make([]bool, m+1)
		for j := range minv {
			minv[j] = inf
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], inf, 0
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				cur := -w[i0-1][j-1] - u[i0] - v[j]
				if cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	for j := 1; j <= m; j++ {
		if p[j] > 0 {
			out[p[j]-1] = j - 1
		}
	}
	return out
}
