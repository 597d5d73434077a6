package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refMaxMatching is a maximum bipartite matching (augmenting paths)
// between the spikes of x and y within delta samples.
func refMaxMatching(x, y []int64, delta int64) int64 {
	matchY := make([]int, len(y))
	for j := range matchY {
		matchY[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for j := range y {
			if seen[j] || x[i]-y[j] > delta || y[j]-x[i] > delta {
				continue
			}
			seen[j] = true
			if matchY[j] < 0 || try(matchY[j], seen) {
				matchY[j] = i
				return true
			}
		}
		return false
	}
	var n int64
	for i := range x {
		if try(i, make([]bool, len(y))) {
			n++
		}
	}
	return n
}

func TestMatchCountsAreMaximumMatchings(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		U1, U2 := 1+rng.IntN(4), 1+rng.IntN(5)
		gen := func(U int) Sorting {
			var s Sorting
			for range rng.IntN(60) {
				s.Times = append(s.Times, rng.Int64N(400)) // bursts: many spikes within delta
				s.Labels = append(s.Labels, int32(rng.IntN(U)))
			}
			s.Units = make([]int32, U)
			for i := range s.Units {
				s.Units[i] = int32(i)
			}
			return s
		}
		tr, so := gen(U1), gen(U2)
		delta := int64(rng.IntN(15))
		r, err := MatchUnits(tr, so, UnitOptions{Delta: delta, MatchScore: 0.5, ChanceScore: 0.1, WellDetected: 0.8, Redundant: 0.2, Overmerged: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		for a := range U1 {
			for b := range U2 {
				var x, y []int64
				for i, l := range tr.Labels {
					if int(l) == a {
						x = append(x, tr.Times[i])
					}
				}
				for i, l := range so.Labels {
					if int(l) == b {
						y = append(y, so.Times[i])
					}
				}
				if want := refMaxMatching(x, y, delta); r.Matches[a][b] != want {
					t.Fatalf("trial %d pair (%d,%d): %d matches, maximum %d", trial, a, b, r.Matches[a][b], want)
				}
				if d := len(x) + len(y) - int(r.Matches[a][b]); d > 0 && math.Abs(r.Agreement[a][b]-float64(r.Matches[a][b])/float64(d)) > 1e-15 {
					t.Fatalf("agreement")
				}
			}
		}
	}
}

// bestTotal is the largest total weight of a one-to-one assignment, by
// trying every injection of the smaller side.
func bestTotal(w [][]float64) float64 {
	n, m := len(w), len(w[0])
	best := 0.0
	var rec func(i int, used []bool, sum float64)
	rec = func(i int, used []bool, sum float64) {
		if i == n {
			best = math.Max(best, sum)
			return
		}
		rec(i+1, used, sum) // row i unassigned (weights are ≥ 0)
		for j := range m {
			if !used[j] {
				used[j] = true
				rec(i+1, used, sum+w[i][j])
				used[j] = false
			}
		}
	}
	rec(0, make([]bool, m), 0)
	return best
}

func TestHungarianIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n, m := 1+rng.IntN(6), 1+rng.IntN(6)
		A := make([][]float64, n)
		for i := range A {
			A[i] = make([]float64, m)
			for j := range A[i] {
				A[i][j] = rng.Float64()
				if rng.IntN(3) == 0 {
					A[i][j] = 0.5 + 0.1*float64(rng.IntN(3)) // ties
				}
			}
		}
		h := hungarianMatch(A, 0.5)
		thr := make([][]float64, n)
		var got float64
		used := map[int]bool{}
		for i := range A {
			thr[i] = make([]float64, m)
			for j, v := range A[i] {
				if v >= 0.5 {
					thr[i][j] = v
				}
			}
			if j := h[i]; j >= 0 {
				if used[j] || A[i][j] < 0.5 {
					t.Fatalf("trial %d: bad assignment %v", trial, h)
				}
				used[j] = true
				got += A[i][j]
			}
		}
		if want := bestTotal(thr); math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: total %g, optimum %g (%v)", trial, got, want, h)
		}
	}
}

// truthScene returns U refractory units (gaps ≥ 40 samples) of about n
// spikes each over dur samples.
func truthScene(rng *rand.Rand, U, n int) Sorting {
	var s Sorting
	for u := range U {
		t := int64(rng.IntN(100))
		for range n {
			t += 40 + rng.Int64N(3000)
			s.Times = append(s.Times, t)
			s.Labels = append(s.Labels, int32(u))
		}
	}
	return s
}

func score(t *testing.T, tr, so Sorting) *UnitReport {
	t.Helper()
	r, err := MatchUnits(tr, so, DefaultUnitOptions(30000))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestUnitsConstructedSortings(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tr := truthScene(rng, 6, 400)
	if d := DefaultUnitOptions(30000).Delta; d != 12 {
		t.Fatalf("delta %d samples at 30 kHz, want 12", d)
	}

	t.Run("perfect", func(t *testing.T) {
		so := Sorting{Times: slices.Clone(tr.Times), Labels: make([]int32, len(tr.Labels))}
		for i, l := range tr.Labels {
			so.Labels[i] = 10 + 2*(5-l) // other ids, other order
		}
		r := score(t, tr, so)
		if r.WellDetected != 6 || r.Bad != 0 || r.Redundant != 0 || r.Overmerged != 0 || r.FalsePositive != 0 || r.MeanAccuracy != 1 {
			t.Fatalf("%+v", r)
		}
		for _, u := range r.Truth {
			if u.Matched != 10+2*(5-u.Unit) || u.Accuracy != 1 || u.Recall != 1 || u.Precision != 1 || u.Best != u.Matched {
				t.Fatalf("%+v", u)
			}
		}
	})

	t.Run("shifted", func(t *testing.T) {
		for _, c := range []struct {
			shift int64
			well  int
		}{{10, 6}, {-12, 6}, {13, 0}} {
			so := Sorting{Times: slices.Clone(tr.Times), Labels: slices.Clone(tr.Labels)}
			for i := range so.Times {
				so.Times[i] += c.shift
			}
			r := score(t, tr, so)
			if r.WellDetected != c.well || (c.well == 0 && r.FalsePositive != 6) {
				t.Fatalf("shift %d: %+v", c.shift, r)
			}
		}
	})

	t.Run("split", func(t *testing.T) {
		// Unit 0 split 70/30 into sorted units 0 and 100.
		so := Sorting{Times: slices.Clone(tr.Times), Labels: slices.Clone(tr.Labels)}
		k := 0
		for i, l := range so.Labels {
			if l == 0 {
				if k%10 >= 7 {
					so.Labels[i] = 100
				}
				k++
			}
		}
		r := score(t, tr, so)
		if r.WellDetected != 5 || r.Redundant != 1 || r.Bad != 1 || r.FalsePositive != 0 || r.Overmerged != 0 {
			t.Fatalf("%+v", r)
		}
		if u := r.Truth[0]; u.Matched != 0 || math.Abs(u.Accuracy-0.7) > 1e-12 || u.Recall != u.Accuracy || u.Precision != 1 {
			t.Fatalf("%+v", u)
		}
	})

	t.Run("merged", func(t *testing.T) {
		// Truth units 1 and 2 in one sorted unit.
		so := Sorting{Times: slices.Clone(tr.Times), Labels: slices.Clone(tr.Labels)}
		for i, l := range so.Labels {
			if l == 2 {
				so.Labels[i] = 1
			}
		}
		r := score(t, tr, so)
		if r.WellDetected != 4 || r.Overmerged != 1 || r.Bad != 0 || r.NSorted != 5 {
			t.Fatalf("%+v", r)
		}
		// Both agree 0.5 with the merged unit; one of them gets it.
		m1, m2 := r.Truth[1].Matched, r.Truth[2].Matched
		if (m1 == 1) == (m2 == 1) || r.Truth[1].BestAccuracy != 0.5 || r.Truth[2].Best != 1 {
			t.Fatalf("%+v %+v", r.Truth[1], r.Truth[2])
		}
	})

	t.Run("missing and false", func(t *testing.T) {
		// Units 3 and 4 missing; a false unit of spikes away from the truth.
		var so Sorting
		for i, l := range tr.Labels {
			if l != 3 && l != 4 {
				so.Times = append(so.Times, tr.Times[i])
				so.Labels = append(so.Labels, l)
			}
		}
		for i := range 50 {
			so.Times = append(so.Times, int64(i)*7919+3)
			so.Labels = append(so.Labels, 77)
		}
		r := score(t, tr, so)
		if r.WellDetected != 4 || r.FalsePositive != 1 || r.Bad != 1 || r.NTruth != 6 {
			t.Fatalf("%+v", r)
		}
		for _, u := range r.Truth[3:5] {
			if u.Matched != -1 || u.Accuracy != 0 {
				t.Fatalf("%+v", u)
			}
		}
	})

	t.Run("empty", func(t *testing.T) {
		r := score(t, tr, Sorting{})
		if r.WellDetected != 0 || r.NSorted != 0 || len(r.Truth) != 6 {
			t.Fatalf("%+v", r)
		}
		r = score(t, Sorting{}, tr)
		if r.NTruth != 0 || r.FalsePositive != 6 {
			t.Fatalf("%+v", r)
		}
	})
}

func TestMatchUnitsErrors(t *testing.T) {
	if _, err := MatchUnits(Sorting{Times: []int64{1}}, Sorting{}, DefaultUnitOptions(30000)); err == nil {
		t.Fatal("no error for a missing label")
	}
	if _, err := MatchUnits(Sorting{Times: []int64{1}, Labels: []int32{3}, Units: []int32{0, 1}}, Sorting{}, DefaultUnitOptions(30000)); err == nil {
		t.Fatal("no error for a label outside the unit list")
	}
}

// TestUnitReportConsistent checks relations every report must satisfy on
// random sortings.
func TestUnitReportConsistent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 100 {
		tr := truthScene(rng, 1+rng.IntN(6), 1+rng.IntN(80))
		so := Sorting{Times: slices.Clone(tr.Times), Labels: slices.Clone(tr.Labels)}
		for i := range so.Times {
			so.Times[i] += rng.Int64N(31) - 15
			if rng.IntN(4) == 0 {
				so.Labels[i] = int32(rng.IntN(9))
			}
		}
		r := score(t, tr, so)
		assigned := 0
		seen := map[int32]bool{}
		for _, u := range r.Truth {
			if u.Accuracy < 0 || u.Accuracy > 1 || u.Recall < u.Accuracy || u.Precision < u.Accuracy || u.Precision > 1 {
				t.Fatalf("trial %d: %+v", trial, u)
			}
			if u.Matched >= 0 {
				if seen[u.Matched] || u.Accuracy < 0.5 || u.BestAccuracy < u.Accuracy {
					t.Fatalf("trial %d: assignment %+v", trial, u)
				}
				seen[u.Matched] = true
				assigned++
			}
		}
		if r.Bad != r.NSorted-assigned || r.FalsePositive+r.Redundant > r.Bad || r.WellDetected > assigned {
			t.Fatalf("trial %d: %+v", trial, r)
		}
	}
}
