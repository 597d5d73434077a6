package stream

import (
	"math"
	"testing"

	"dspk/preprocess"
)

// relErr returns ‖a − b‖/‖b‖.
func relErr(a, b []float64) float64 {
	var d, n float64
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
		n += b[i] * b[i]
	}
	return math.Sqrt(d / n)
}

// TestCausalTemplates checks the basis transform on a spike: a template
// cut from the spike through the zero-phase filter (filtfilt), taken
// through causalTemplates, must match the same spike through the filter
// run forward twice (the stream's preprocessing), cut at the same
// samples; the untransformed template must not (else the test could not
// fail). Two PCs: the template and a shifted copy, so that the
// re-orthonormalisation and the coefficients' map are exercised.
func TestCausalTemplates(t *testing.T) {
	const fs, n, at, nt, nt0 = 30000.0, 4096, 2000, 61, 20
	b, a := preprocess.ButterHighpass(3, 300, fs)
	s := make([]float64, n)
	for i := range s { // a biphasic spike about 1 ms long
		x := float64(i-at) / 6
		s[i] = -x*math.Exp(-x*x/2) - 0.3*math.Exp(-(x-3)*(x-3)/8)
	}
	zp := preprocess.FiltFilt(b, a, s)
	c1, _ := preprocess.LFilter(b, a, s, nil)
	c2, _ := preprocess.LFilter(b, a, c1, nil)
	tr := 0
	for i := range zp {
		if zp[i] < zp[tr] {
			tr = i
		}
	}
	win := func(x []float64, from int) []float64 { return append([]float64(nil), x[from:from+nt]...) }
	t0, want := win(zp, tr-nt0), win(c2, tr-nt0)
	// Basis: the template and its copy two samples later, made orthonormal
	// by causalTemplates itself (the input basis need not be).
	w := make([]float32, 2*nt)
	for i := range nt {
		w[i] = float32(t0[i])
		if i >= 2 {
			w[nt+i] = float32(t0[i-2])
		}
	}
	u := []float32{1, 0} // the template is the first basis vector
	u2, q, _ := causalTemplates(u, w, 1, 1, 2, nt, b, a)
	got := make([]float64, nt)
	for p := range 2 {
		for i := range nt {
			got[i] += float64(u2[p]) * float64(q[p*nt+i])
		}
	}
	// The 61-sample window cuts off the zero-phase spike's tails, which
	// the transform cannot restore: 0.11 here (the untransformed template
	// is off by 1.5).
	if e := relErr(got, want); !(e < 0.15) {
		t.Errorf("transformed template differs from the causally filtered spike by %.3f (relative)", e)
	}
	if e := relErr(t0, want); e < 0.5 {
		t.Errorf("the zero-phase template is within %.3f of the causal one: the test cannot tell them apart", e)
	}
	// Q's rows are orthonormal.
	for p := range 2 {
		for r := range 2 {
			d := 0.0
			for i := range nt {
				d += float64(q[p*nt+i]) * float64(q[r*nt+i])
			}
			if want := map[bool]float64{true: 1, false: 0}[p == r]; math.Abs(d-want) > 1e-5 {
				t.Errorf("Q rows %d·%d = %v", p, r, d)
			}
		}
	}
}
