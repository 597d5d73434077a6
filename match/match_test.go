package match

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// check compares m's spikes of problem pr with the float64 reference.
func checkAgainstRef(t *testing.T, pr problem, prm Params, ownStart int64, short ...bool) *Spikes {
	t.Helper()
	m, err := NewMatcher(nil, pr.tm, pr.x, pr.y, prm)
	if err != nil {
		t.Fatal(err)
	}
	if len(short) > 0 && short[0] {
		m.PreferShortWindows()
	}
	var got Spikes
	m.Match(&got, pr.win, ownStart, pr.owned)
	icc := func(u int) []int {
		var out []int
		for _, c := range m.Channels(u) {
			out = append(out, int(c))
		}
		return out
	}
	want, feats := refMatch(&pr.tm, pr.win, pr.T, pr.owned, prm, icc)
	shift := int64(prm.NT/2 - prm.NT0Min)
	var kept []int
	for i, sp := range want {
		if ownStart+int64(sp.t-prm.NT)-shift >= 0 {
			kept = append(kept, i)
		}
	}
	if got.Len() != len(kept) {
		t.Fatalf("%d spikes, reference %d (planted %d)", got.Len(), len(kept), len(pr.planted))
	}
	nf := prm.NearestChans * pr.tm.P
	for k, i := range kept {
		sp := want[i]
		trough := ownStart + int64(sp.t-prm.NT) - shift
		if got.Sample[k] != trough || int(got.Template[k]) != sp.u {
			t.Fatalf("spike %d: sample %d template %d, reference %d %d", k, got.Sample[k], got.Template[k], trough, sp.u)
		}
		if d := math.Abs(float64(got.Amplitude[k]) - sp.q); d > 1e-4*math.Abs(sp.q)+1e-4 {
			t.Fatalf("spike %d: amplitude %g, reference %g", k, got.Amplitude[k], sp.q)
		}
		if d := math.Abs(float64(got.Coef[k]) - sp.a); d > 1e-4*math.Abs(sp.a)+1e-5 {
			t.Fatalf("spike %d: coefficient %g, reference %g", k, got.Coef[k], sp.a)
		}
		for f := range nf {
			g, w := float64(got.Features[k*nf+f]), feats[i][f]
			if math.IsNaN(g) || math.Abs(g-w) > 1e-3*(1+math.Abs(w)) {
				t.Fatalf("spike %d feature %d: %g, reference %g", k, f, g, w)
			}
		}
	}
	return &got
}

func TestMatchAgainstReference(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		seed                   uint64
		N, C, P, T, spikes, nt int
	}{
		{"small", 1, 3, 6, 3, 400, 6, 21},
		{"overlapping", 2, 5, 8, 4, 700, 30, 21},
		{"one template one channel", 3, 1, 1, 1, 300, 5, 11},
		{"odd", 4, 7, 9, 6, 613, 17, 31},
		{"kilosort length", 5, 4, 10, 6, 1100, 20, 61},
		{"many rounds", 6, 2, 4, 3, 501, 60, 21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newProblem(tc.seed, tc.N, tc.C, tc.P, tc.T, tc.spikes, tc.nt)
			prm := DefaultParams()
			prm.NT, prm.NT0Min = tc.nt, tc.nt/3
			prm.NearestChans = min(prm.NearestChans, tc.C)
			got := checkAgainstRef(t, pr, prm, 1000)
			if got.Len() == 0 {
				t.Fatal("no spikes found")
			}
			checkAgainstRef(t, pr, prm, 1000, true) // the short transforms, a stream's
		})
	}
}

// TestMatchRecoversPlanted checks the planted spikes come back at their
// columns with their templates and coefficients.
func TestMatchRecoversPlanted(t *testing.T) {
	nt := 31
	pr := newProblem(11, 4, 10, 5, 4000, 0, nt)
	for i := range 25 {
		// Spikes 2nt apart, on templates in turn, amplitudes 1 to 2.
		pr.plant(nt+20+i*2*nt*2, i%4, 1+float64(i)/25, nt)
	}
	prm := DefaultParams()
	prm.NT, prm.NT0Min = nt, 10
	m, err := NewMatcher(nil, pr.tm, pr.x, pr.y, prm)
	if err != nil {
		t.Fatal(err)
	}
	var got Spikes
	m.Match(&got, pr.win, 0, pr.owned)
	shift := int64(nt/2 - prm.NT0Min)
	found := 0
	for _, sp := range pr.planted {
		trough := int64(sp.t-nt) - shift
		for k := range got.Len() {
			if got.Sample[k] == trough && int(got.Template[k]) == sp.u && math.Abs(float64(got.Coef[k])-sp.a) < 0.05 {
				found++
				break
			}
		}
	}
	if found != len(pr.planted) || got.Len() != found {
		t.Fatalf("recovered %d of %d planted spikes (%d found in all, %d rounds)", found, len(pr.planted), got.Len(), m.Rounds())
	}
}

// TestMatchReuse matches two different windows with one matcher, the
// second shorter, and the first again: buffers carry nothing over.
func TestMatchReuse(t *testing.T) {
	prm := DefaultParams()
	prm.NT, prm.NT0Min, prm.NearestChans = 21, 7, 4
	a := newProblem(21, 3, 6, 3, 900, 10, 21)
	b := newProblem(21, 3, 6, 3, 500, 10, 21) // same templates (same seed), other window
	m, err := NewMatcher(nil, a.tm, a.x, a.y, prm)
	if err != nil {
		t.Fatal(err)
	}
	var first, second, again Spikes
	m.Match(&first, a.win, 0, a.owned)
	m.Match(&second, b.win, 0, b.owned)
	m.Match(&again, a.win, 0, a.owned)
	if fmt.Sprint(first) != fmt.Sprint(again) {
		t.Fatal("matching a window again gave other spikes")
	}
	if second.Len() == 0 {
		t.Fatal("second window: no spikes")
	}
	// Close drops the window scratch; the channels still answer.
	var chans []int32
	var best []int
	for u := range a.tm.N {
		chans, best = append(chans, m.Channels(u)...), append(best, m.BestChannel(u))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if m.b != nil || m.xres != nil || m.s != nil {
		t.Fatal("Close kept the window scratch")
	}
	for u := range a.tm.N {
		if fmt.Sprint(m.Channels(u)) != fmt.Sprint(chans[u*prm.NearestChans:(u+1)*prm.NearestChans]) || m.BestChannel(u) != best[u] {
			t.Fatalf("template %d: channels %v best %d after Close, %v %d before", u, m.Channels(u), m.BestChannel(u),
				chans[u*prm.NearestChans:(u+1)*prm.NearestChans], best[u])
		}
	}
}

func TestMatchDropsNegativeTroughs(t *testing.T) {
	pr := newProblem(31, 3, 6, 3, 600, 12, 21)
	prm := DefaultParams()
	prm.NT, prm.NT0Min, prm.NearestChans = 21, 7, 4
	got := checkAgainstRef(t, pr, prm, 0)
	for _, s := range got.Sample {
		if s < 0 {
			t.Fatalf("trough %d kept", s)
		}
	}
}

func TestNewMatcherErrors(t *testing.T) {
	pr := newProblem(41, 2, 4, 3, 300, 0, 21)
	prm := DefaultParams()
	prm.NT, prm.NT0Min = 21, 7
	zero := pr.tm
	zero.U = make([]float32, len(pr.tm.U))
	nan := pr.tm
	nan.U = append([]float32(nil), pr.tm.U...)
	nan.U[5] = float32(math.NaN())
	for _, tc := range []struct {
		name string
		tm   Templates
		x    []float64
		prm  Params
		want string
	}{
		{"zero template", zero, pr.x, prm, "all zero"},
		{"NaN", nan, pr.x, prm, "is NaN"},
		{"positions", pr.tm, pr.x[:3], prm, "site positions"},
		{"nearest", pr.tm, pr.x, func() Params { p := prm; p.NearestChans = 5; return p }(), "more than the probe"},
		{"even nt", pr.tm, pr.x, func() Params { p := prm; p.NT = 20; return p }(), "must be odd"},
		{"threshold", pr.tm, pr.x, func() Params { p := prm; p.ThLearned = math.NaN(); return p }(), "Th_learned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewMatcher(nil, tc.tm, tc.x, pr.y, tc.prm)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
