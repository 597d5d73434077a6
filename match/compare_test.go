package match

import (
	"math"
	"testing"
)

// compareSpikes checks that got holds want's spikes (same samples and
// templates in the same order) with amplitudes, coefficients and features
// within rel relative (plus abs absolute). Where the sets differ, every
// spike that only one side has must lie within nearTh relative of the
// threshold th (a float32 rounding can move such a spike across it, and the
// rounds after it then differ locally); nearTh = 0 asks for identical sets.
// It returns the spikes found on one side only.
func compareSpikes(t *testing.T, want, got *Spikes, th, rel, abs, nearTh float64) int {
	t.Helper()
	nf := want.NC * want.P
	if got.Len() > 0 && (got.NC != want.NC || got.P != want.P) {
		t.Fatalf("features %d×%d per spike, want %d×%d", got.NC, got.P, want.NC, want.P)
	}
	key := func(s *Spikes, i int) [2]int64 { return [2]int64{s.Sample[i], int64(s.Template[i])} }
	i, j, odd := 0, 0, 0
	near := func(q float32) bool { return math.Abs(math.Abs(float64(q))-th) <= nearTh*th }
	for i < want.Len() || j < got.Len() {
		switch {
		case j >= got.Len() || (i < want.Len() && less(key(want, i), key(got, j))):
			if !near(want.Amplitude[i]) {
				t.Fatalf("spike %d (sample %d, template %d, amplitude %g) missing; %d spikes, want %d",
					i, want.Sample[i], want.Template[i], want.Amplitude[i], got.Len(), want.Len())
			}
			odd++
			i++
		case i >= want.Len() || less(key(got, j), key(want, i)):
			if !near(got.Amplitude[j]) {
				t.Fatalf("extra spike %d (sample %d, template %d, amplitude %g); %d spikes, want %d",
					j, got.Sample[j], got.Template[j], got.Amplitude[j], got.Len(), want.Len())
			}
			odd++
			j++
		default:
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
			i++
			j++
		}
	}
	if odd > 0 && odd*100 > want.Len() {
		t.Fatalf("%d of %d spikes differ (all near the threshold)", odd, want.Len())
	}
	return odd
}

func less(a, b [2]int64) bool { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]) }
