package match

import (
	"math"
	"testing"
)

// compareSpikes checks that got holds want's spikes (same samples and
// templates in the same order) with amplitudes, coefficients and features
// within rel relative (plus abs absolute). Where the sets differ, each
// spike that only one side has must lie within nearTh relative of the
// threshold th, or within guard samples of such a spike (a float32
// rounding can move a spike across the threshold, and the residual and
// later rounds around it then differ); values are compared only for
// spikes more than guard samples from every such difference. nearTh = 0
// asks for identical sets. It fails if more than 1 % of the spikes differ
// and returns how many do.
func compareSpikes(t *testing.T, want, got *Spikes, th, rel, abs, nearTh float64, guard int64) int {
	t.Helper()
	nf := want.NC * want.P
	if got.Len() > 0 && (got.NC != want.NC || got.P != want.P) {
		t.Fatalf("features %d×%d per spike, want %d×%d", got.NC, got.P, want.NC, want.P)
	}
	key := func(s *Spikes, i int) [2]int64 { return [2]int64{s.Sample[i], int64(s.Template[i])} }
	near := func(q float32) bool { return math.Abs(math.Abs(float64(q))-th) <= nearTh*th }
	type odd struct {
		s      *Spikes
		i      int
		near   bool
		sample int64
	}
	var odds []odd
	var pairs [][2]int
	for i, j := 0, 0; i < want.Len() || j < got.Len(); {
		switch {
		case j >= got.Len() || (i < want.Len() && less(key(want, i), key(got, j))):
			odds = append(odds, odd{want, i, near(want.Amplitude[i]), want.Sample[i]})
			i++
		case i >= want.Len() || less(key(got, j), key(want, i)):
			odds = append(odds, odd{got, j, near(got.Amplitude[j]), got.Sample[j]})
			j++
		default:
			pairs = append(pairs, [2]int{i, j})
			i++
			j++
		}
	}
	closeTo := func(s int64, nearOnly bool) bool {
		for _, o := range odds {
			if (o.near || !nearOnly) && s-o.sample <= guard && o.sample-s <= guard {
				return true
			}
		}
		return false
	}
	for _, o := range odds {
		if !o.near && !closeTo(o.sample, true) {
			side := "missing"
			if o.s == got {
				side = "extra"
			}
			t.Fatalf("%s spike (sample %d, template %d, amplitude %g), not near the threshold; %d spikes, want %d",
				side, o.sample, o.s.Template[o.i], o.s.Amplitude[o.i], got.Len(), want.Len())
		}
	}
	if len(odds)*100 > want.Len() {
		t.Fatalf("%d of %d spikes differ (all near the threshold)", len(odds), want.Len())
	}
	for _, p := range pairs {
		i, j := p[0], p[1]
		if len(odds) > 0 && closeTo(want.Sample[i], false) {
			continue
		}
		for _, f := range []struct {
			name string
			g, w float32
		}{{"amplitude", got.Amplitude[j], want.Amplitude[i]}, {"coefficient", got.Coef[j], want.Coef[i]}} {
			if g, w := float64(f.g), float64(f.w); !(math.Abs(g-w) <= rel*math.Abs(w)+abs) {
				t.Fatalf("spike %d (sample %d, template %d): %s %g, want %g", i, want.Sample[i], want.Template[i], f.name, g, w)
			}
		}
		for k := range nf {
			g, w := float64(got.Features[j*nf+k]), float64(want.Features[i*nf+k])
			if !(math.Abs(g-w) <= rel*math.Abs(w)+abs) {
				t.Fatalf("spike %d (sample %d, template %d): feature %d = %g, want %g", i, want.Sample[i], want.Template[i], k, g, w)
			}
		}
	}
	return len(odds)
}

func less(a, b [2]int64) bool { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]) }
