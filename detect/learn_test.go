package detect

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// referenceClips is FindClips written from the pooling description: a
// dense box maximum of |x| (max_pool2d 9×11, −inf padding), a dense count
// of peaks over 13×61 boxes (avg_pool2d × area, zero padding), then the
// clips of isolated peaks outside the first and last nt columns.
func referenceClips(x []float32, C, T int, prm Params) []float32 {
	a := make([]float64, C*T)
	for i, v := range x {
		a[i] = math.Abs(float64(v))
	}
	peak := make([]bool, C*T)
	for c := range C {
		for t := range T {
			m := math.Inf(-1)
			for cc := c - 4; cc <= c+4; cc++ {
				for tt := t - 5; tt <= t+5; tt++ {
					if cc >= 0 && cc < C && tt >= 0 && tt < T {
						m = max(m, a[cc*T+tt])
					}
				}
			}
			peak[c*T+t] = a[c*T+t] == m && a[c*T+t] > prm.ThSingleCh
		}
	}
	var out []float32
	for c := range C {
		for t := range T {
			if !peak[c*T+t] || t < prm.NT || t >= T-prm.NT {
				continue
			}
			n := 0
			for cc := c - 6; cc <= c+6; cc++ {
				for tt := t - 30; tt <= t+30; tt++ {
					if cc >= 0 && cc < C && tt >= 0 && tt < T && peak[cc*T+tt] {
						n++
					}
				}
			}
			if n != 1 {
				continue
			}
			var ss float64
			for j := range prm.NT {
				v := float64(x[c*T+t-prm.NT0Min+j])
				ss += v * v
			}
			for j := range prm.NT {
				out = append(out, float32(float64(x[c*T+t-prm.NT0Min+j])/math.Sqrt(ss)))
			}
		}
	}
	return out
}

func TestFindClipsMatchesReference(t *testing.T) {
	t.Parallel()
	prm := DefaultParams()
	shapes := synthShapes(4, prm.NT, prm.NT0Min)
	for _, c := range []struct{ C, T, n int }{{1, 200, 3}, {5, 300, 6}, {16, 2000, 40}, {40, 3000, 120}} {
		rng := rand.New(rand.NewPCG(uint64(c.C), uint64(c.T)))
		p := twoColumnProbe(c.C)
		sp := randomSpikes(rng, p, c.n, 0, c.T, 5, 25, 4, true)
		x := synthWindow(rng, p, c.T, shapes, prm.NT0Min, sp, 1, 12)
		// Plant exact ties and threshold cases.
		x[(c.C/2)*c.T+c.T/2] = 6    // exactly at threshold: not a peak
		x[(c.C/2)*c.T+c.T/2+40] = 9 // a tie pair in one box: both peaks,
		x[(c.C/2)*c.T+c.T/2+42] = -9
		got := FindClips(nil, x, c.C, c.T, prm)
		want := referenceClips(x, c.C, c.T, prm)
		if len(got) != len(want) {
			t.Fatalf("C %d T %d: %d clips, reference %d", c.C, c.T, len(got)/prm.NT, len(want)/prm.NT)
		}
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-7 {
				t.Fatalf("C %d T %d: clip value %d = %g, reference %g", c.C, c.T, i, got[i], want[i])
			}
		}
		t.Logf("C %d T %d: %d clips", c.C, c.T, len(got)/prm.NT)
	}
}

func TestFindClipsRules(t *testing.T) {
	t.Parallel()
	prm := DefaultParams()
	C, T := 20, 400
	x := make([]float32, C*T)
	set := func(c, t int, v float32) { x[c*T+t] = v }
	set(3, 100, -10) // isolated, negative
	set(15, 100, 7)  // isolated, positive (12 channels away)
	set(3, 250, 8)   // pair within ±6 channels, ±30 samples but outside
	set(8, 270, 8)   // ±4 × ±5: both peaks, neither isolated
	set(12, 40, 20)  // in the first nt columns: dropped
	set(12, 66, 8)   // 26 samples from the dropped peak: not isolated
	set(17, 200, 6)  // at threshold: not a peak
	set(0, 338, 9)   // the last column before the last nt: kept
	set(10, 339, 30) // the first of the last nt columns: dropped
	got := FindClips(nil, x, C, T, prm)
	nt := prm.NT
	if len(got) != 3*nt {
		t.Fatalf("%d clips, want 3 (channels 0, 3, 15)", len(got)/nt)
	}
	for i, want := range []float32{1, -1, 1} { // channel order 0, 3, 15
		clip := got[i*nt : (i+1)*nt]
		if clip[prm.NT0Min] != want {
			t.Errorf("clip %d: value at the trough index %g, want %g", i, clip[prm.NT0Min], want)
		}
	}
}

func TestLearnerRecoversShapes(t *testing.T) {
	t.Parallel()
	prm := DefaultParams()
	prm.NTemplates = 4
	p := twoColumnProbe(48)
	C, T := p.Len(), 6000+2*prm.NT
	shapes := synthShapes(4, prm.NT, prm.NT0Min)
	rng := rand.New(rand.NewPCG(9, 9))
	l := NewLearner(C, T, prm)
	for w := 0; w < 4; w++ {
		// Single-channel spikes (narrow footprint) on a grid of channels
		// and times, so that most are isolated.
		var sp []injected
		for i := 0; i < 300; i++ {
			c := rng.IntN(C)
			sp = append(sp, injected{
				tau: prm.NT + 40 + rng.IntN(T-2*prm.NT-80), x: p.X[c], y: p.Y[c],
				amp: 12 + 10*rng.Float64(), k: i % 4, sign: 1,
			})
		}
		x := synthWindow(rng, p, T, shapes, prm.NT0Min, sp, 1, 4)
		l.Add(x)
	}
	if l.Len() < 200 || l.Windows() != 4 || l.Full() {
		t.Fatalf("%d clips from %d windows (full %v)", l.Len(), l.Windows(), l.Full())
	}
	tm, err := l.Templates()
	if err != nil {
		t.Fatal(err)
	}
	nt := prm.NT
	for k, s := range shapes {
		best := -1.0
		for i := range tm.K {
			var dot float64
			for j := range nt {
				dot += s[j] * float64(tm.WTEMP[i*nt+j])
			}
			best = max(best, dot)
		}
		if best < 0.95 {
			t.Errorf("shape %d: best cosine to a learned template %.3f, want > 0.95", k, best)
		}
	}
	checkTemplates(t, tm)
	t.Logf("%d clips", l.Len())
}

// checkTemplates checks unit-norm wTEMP rows, orthonormal wPCA rows and
// the PCA sign convention.
func checkTemplates(t *testing.T, tm *Templates) {
	t.Helper()
	nt := tm.NT
	for i := range tm.K {
		var ss float64
		for _, v := range tm.WTEMP[i*nt : (i+1)*nt] {
			ss += float64(v) * float64(v)
		}
		if math.Abs(ss-1) > 1e-6 {
			t.Errorf("wTEMP row %d: norm² %g", i, ss)
		}
	}
	for i := range tm.P {
		ri := tm.WPCA[i*nt : (i+1)*nt]
		big := 0
		for j := range ri {
			if math.Abs(float64(ri[j])) > math.Abs(float64(ri[big])) {
				big = j
			}
		}
		if ri[big] <= 0 {
			t.Errorf("wPCA row %d: largest entry %g, want positive", i, ri[big])
		}
		for j := range tm.P {
			var dot float64
			for m := range nt {
				dot += float64(ri[m]) * float64(tm.WPCA[j*nt+m])
			}
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(dot-want) > 1e-6 {
				t.Errorf("wPCA rows %d·%d = %g", i, j, dot)
			}
		}
	}
}

func TestLearnerBudgetAndErrors(t *testing.T) {
	t.Parallel()
	prm := DefaultParams()
	prm.MaxClips = 70
	C, T := 8, 800
	x := make([]float32, C*T)
	// 34 isolated peaks per window: channels 0 and 7, every 40 samples.
	n := 0
	for c := 0; c < C; c += 7 {
		for t := prm.NT + 10; t < T-prm.NT; t += 40 {
			x[c*T+t] = 10
			n++
		}
	}
	l := NewLearner(C, T, prm)
	if got := l.Add(x); got != n {
		t.Fatalf("first window gave %d clips, want %d", got, n)
	}
	// 34 clips are at least MinClips: templates are learned from them.
	if n < MinClips {
		t.Fatalf("fixture has %d clips, below MinClips %d", n, MinClips)
	}
	if _, err := l.Templates(); err != nil {
		t.Errorf("%d clips: %v", n, err)
	}
	// Channel 0 alone gives 17, below MinClips: a clear error.
	few := slices.Clone(x)
	clear(few[7*T:])
	lf := NewLearner(C, T, prm)
	if got := lf.Add(few); got >= MinClips {
		t.Fatalf("few-peak window gave %d clips", got)
	}
	if _, err := lf.Templates(); err == nil || !strings.Contains(err.Error(), "isolated single-channel peaks") ||
		!strings.Contains(err.Error(), "templates file") || !strings.Contains(err.Error(), "-templates") {
		t.Errorf("error %v for %d clips", err, lf.Len())
	}
	l.Add(x)
	if l.Full() || l.Len() != 2*n {
		t.Fatalf("after two windows: %d clips, full %v", l.Len(), l.Full())
	}
	if got := l.Add(x); got != 0 || !l.Full() || l.Len() != 2*n {
		t.Fatalf("third window overflowing %d: added %d, full %v, %d clips", prm.MaxClips, got, l.Full(), l.Len())
	}
	if got := l.Add(x); got != 0 {
		t.Errorf("a full learner added %d", got)
	}
	if len(l.Clips()) != l.Len()*prm.NT {
		t.Errorf("Clips has %d values", len(l.Clips()))
	}
	// 120 identical clips: k-means still returns K unit-norm rows, all
	// equal to the clip.
	var clips []float32
	for range 120 {
		clips = append(clips, l.Clips()[:prm.NT]...)
	}
	tm, err := TemplatesFromClips(clips, prm, 3)
	if err != nil {
		t.Fatal(err)
	}
	for k := range tm.K {
		if !slices.Equal(tm.WTEMP[k*prm.NT:(k+1)*prm.NT], clips[:prm.NT]) {
			t.Errorf("template %d from identical clips differs from the clip", k)
		}
	}
}

func TestFindClipsPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if r, _ := recover().(string); !strings.HasPrefix(r, "detect:") {
			t.Errorf("panic %q", r)
		}
	}()
	FindClips(nil, make([]float32, 10), 2, 6, DefaultParams())
}
