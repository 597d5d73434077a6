package cluster

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"dspk/detect"
)

// testTemplates returns nt = 61 universal templates: K = 6 unit-norm
// troughs at sample 20 of several widths, and P = 6 orthonormal smooth
// wPCA rows.
func testTemplates(rng *rand.Rand) *detect.Templates {
	const nt, K, P = 61, 6, 6
	tm := &detect.Templates{NT: nt, K: K, P: P, WTEMP: make([]float32, K*nt), WPCA: make([]float32, P*nt)}
	for f := 0; f < K; f++ {
		s := 1.5 + 0.5*float64(f)
		row := make([]float64, nt)
		nrm := 0.0
		for t := range row {
			dt := float64(t - 20)
			row[t] = -math.Exp(-dt*dt/(2*s*s)) + 0.3*math.Exp(-(dt-8)*(dt-8)/(8*s*s))
			nrm += row[t] * row[t]
		}
		for t := range row {
			tm.WTEMP[f*nt+t] = float32(row[t] / math.Sqrt(nrm))
		}
	}
	basis := make([][]float64, P)
	for p := range basis {
		raw := make([]float64, nt)
		for t := range raw {
			raw[t] = rng.NormFloat64()
		}
		sm := gaussSmooth(raw, 2)
		for _, q := range basis[:p] {
			d := 0.0
			for t := range sm {
				d += sm[t] * q[t]
			}
			for t := range sm {
				sm[t] -= d * q[t]
			}
		}
		nrm := 0.0
		for _, v := range sm {
			nrm += v * v
		}
		for t := range sm {
			sm[t] /= math.Sqrt(nrm)
		}
		basis[p] = sm
		for t := range sm {
			tm.WPCA[p*nt+t] = float32(sm[t])
		}
	}
	return tm
}

// TestPeakLags: a template equal to a wTEMP row shifted by δ samples has
// its peak response at nt/2 + δ.
func TestPeakLags(t *testing.T) {
	tm := testTemplates(rand.New(rand.NewPCG(1, 1)))
	nt, C := tm.NT, 5
	for _, delta := range []int{-6, 0, 3, 9} {
		ut := make([]float32, 3*C*nt)
		for tt := 0; tt < nt; tt++ {
			if s := tt - delta; s >= 0 && s < nt {
				ut[(1*C+3)*nt+tt] = 2 * tm.WTEMP[2*nt+s]
			}
		}
		if lag := peakLags(ut, 3, C, tm)[1]; lag != nt/2+delta {
			t.Errorf("shift %d: lag %d, want %d", delta, lag, nt/2+delta)
		}
	}
}

// TestAlignMatchesReference compares the alignment with a plain float64
// reference: every channel's templates laid end to end, the full
// correlation with every wTEMP row, the first peak per template, numpy's
// roll and the projection back onto wPCA.
func TestAlignMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	tm := testTemplates(rng)
	nt, P, K := tm.NT, tm.P, tm.K
	for _, c := range []struct{ n, C int }{{1, 1}, {5, 8}, {7, 3}} {
		wall := make([]float32, c.n*c.C*P)
		for k := 0; k < c.n; k++ {
			for ch := 0; ch < c.C; ch++ {
				if rng.IntN(3) == 0 && ch != k%c.C {
					continue // zero channel
				}
				for p := 0; p < P; p++ {
					wall[(k*c.C+ch)*P+p] = float32(rng.NormFloat64())
				}
			}
		}
		got := alignTemplates(wall, c.n, c.C, tm)
		L := c.n * nt
		sig := make([][]float64, c.C)
		for ch := range sig {
			sig[ch] = make([]float64, L)
			for k := 0; k < c.n; k++ {
				for tt := 0; tt < nt; tt++ {
					s := 0.0
					for p := 0; p < P; p++ {
						s += float64(wall[(k*c.C+ch)*P+p]) * float64(tm.WPCA[p*nt+tt])
					}
					sig[ch][k*nt+tt] = s
				}
			}
		}
		for k := 0; k < c.n; k++ {
			lag, best := 0, -1.0
			for tt := 0; tt < nt; tt++ {
				m := 0.0
				for ch := 0; ch < c.C; ch++ {
					for f := 0; f < K; f++ {
						s := 0.0
						for j := 0; j < nt; j++ {
							if idx := k*nt + tt + j - nt/2; idx >= 0 && idx < L {
								s += sig[ch][idx] * float64(tm.WTEMP[f*nt+j])
							}
						}
						m = math.Max(m, math.Abs(s))
					}
				}
				if m > best {
					lag, best = tt, m
				}
			}
			shift := nt/2 - lag
			for ch := 0; ch < c.C; ch++ {
				rolled := make([]float64, nt)
				for tt := 0; tt < nt; tt++ {
					rolled[((tt+shift)%nt+nt)%nt] = sig[ch][k*nt+tt]
				}
				for p := 0; p < P; p++ {
					want := 0.0
					for tt := 0; tt < nt; tt++ {
						want += rolled[tt] * float64(tm.WPCA[p*nt+tt])
					}
					if g := float64(got[(k*P+p)*c.C+ch]); math.Abs(g-want) > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("%+v: U[%d][%d][%d] = %v, want %v (lag %d)", c, k, p, ch, g, want, lag)
					}
				}
			}
		}
	}
}

// TestPairSimMatchesTimeDomain checks the PC-space similarity against the
// cross-correlation of the templates' time-domain forms.
func TestPairSimMatchesTimeDomain(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	tm := testTemplates(rng)
	nt, P, C := tm.NT, tm.P, 5
	ww := wtw(tm.WPCA, P, nt)
	for trial := 0; trial < 5; trial++ {
		a, b := make([]float64, P*C), make([]float64, P*C)
		var ca []int
		for ch := 0; ch < C; ch++ {
			if ch == 2 && trial%2 == 0 {
				continue
			}
			ca = append(ca, ch)
			for p := 0; p < P; p++ {
				a[p*C+ch] = rng.NormFloat64()
			}
		}
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		norm := func(v []float64) float64 {
			s := 0.0
			for _, x := range v {
				s += x * x
			}
			return math.Sqrt(s)
		}
		na, nb := norm(a), norm(b)
		got := pairSim(a, b, na, nb, ca, C, P, ww, make([]float64, P*P))
		time := func(v []float64, ch int) []float64 {
			out := make([]float64, nt)
			for tt := range out {
				for p := 0; p < P; p++ {
					out[tt] += v[p*C+ch] * float64(tm.WPCA[p*nt+tt])
				}
			}
			return out
		}
		want := math.Inf(-1)
		for lag := -nt; lag <= nt; lag++ {
			s := 0.0
			for ch := 0; ch < C; ch++ {
				ua, ub := time(a, ch), time(b, ch)
				for tt := 0; tt < nt; tt++ {
					if j := tt + lag; j >= 0 && j < nt {
						s += ua[tt] * ub[j]
					}
				}
			}
			want = math.Max(want, s/((1e-6+na)*(1e-6+nb)))
		}
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("trial %d: similarity %v, want %v", trial, got, want)
		}
	}
}

// TestMergeTemplates merges a near duplicate (norm 1.1×) into the larger
// base as the count-weighted mean, keeps a 1.5× copy and a template on
// other channels, and keeps the original order.
func TestMergeTemplates(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tm := testTemplates(rng)
	P, C := tm.P, 8
	a := make([]float32, P*C)
	e := make([]float32, P*C)
	for ch := 0; ch < 4; ch++ {
		for p := 0; p < P; p++ {
			a[p*C+ch] = float32(rng.NormFloat64())
			e[p*C+ch+4] = float32(rng.NormFloat64())
		}
	}
	scaled := func(s float32) []float32 {
		out := make([]float32, len(a))
		for i, v := range a {
			out[i] = s * v
		}
		return out
	}
	// Order: the 1.5× copy, the base, the 1.1× copy, the other.
	u := append(append(append(scaled(1.5), a...), scaled(1.1)...), e...)
	counts := []int{30, 100, 50, 10}
	got, n := mergeTemplates(u, counts, C, P, tm.NT, tm.WPCA, 0.9, 0.2, nil)
	if n != 3 || len(got) != 3*P*C {
		t.Fatalf("%d templates survive, want 3", n)
	}
	for i := range a {
		want := []float64{1.5 * float64(a[i]), (100*float64(a[i]) + 50*float64(scaled(1.1)[i])) / 150, float64(e[i])}
		for k := 0; k < 3; k++ {
			if g := float64(got[k*P*C+i]); math.Abs(g-want[k]) > 1e-6 {
				t.Fatalf("template %d value %d = %v, want %v", k, i, g, want[k])
			}
		}
	}
	// PostprocessTemplates is the alignment followed by this merge.
	wall := make([]float32, 4*C*P)
	for k := 0; k < 4; k++ {
		for p := 0; p < P; p++ {
			for ch := 0; ch < C; ch++ {
				wall[(k*C+ch)*P+p] = u[(k*P+p)*C+ch]
			}
		}
	}
	pu, pn := PostprocessTemplates(wall, counts, C, tm)
	mu, mn := mergeTemplates(alignTemplates(wall, 4, C, tm), counts, C, P, tm.NT, tm.WPCA, 0.9, 0.2, nil)
	if pn != mn || !slices.Equal(pu, mu) {
		t.Errorf("PostprocessTemplates kept %d, align + merge %d", pn, mn)
	}
	// The merge looks at its stop before every base, and a stopped
	// context gives its error and no templates.
	looks := 0
	mergeTemplates(u, counts, C, P, tm.NT, tm.WPCA, 0.9, 0.2, func() bool { looks++; return false })
	if looks < 3 {
		t.Errorf("the merge looked at its stop %d times for 3 bases", looks)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if cu, cn, err := PostprocessTemplatesContext(ctx, wall, counts, C, tm); !errors.Is(err, context.Canceled) || cu != nil || cn != 0 {
		t.Errorf("a stopped context: %d templates, error %v", cn, err)
	}
	if cu, cn, err := PostprocessTemplatesContext(context.Background(), wall, counts, C, tm); err != nil || cn != pn || !slices.Equal(cu, pu) {
		t.Errorf("PostprocessTemplatesContext kept %d (error %v), PostprocessTemplates %d", cn, err, pn)
	}
}
