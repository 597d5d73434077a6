package preprocess

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// freqResp evaluates b(z)/a(z) at z = exp(iω), coefficients in z⁻¹.
func freqResp(b, a []float64, w float64) complex128 {
	zi := cmplx.Exp(complex(0, -w)) // z⁻¹
	poly := func(c []float64) complex128 {
		var s complex128
		for i := len(c) - 1; i >= 0; i-- {
			s = s*zi + complex(c[i], 0)
		}
		return s
	}
	return poly(b) / poly(a)
}

// TestButterHighpassClosedForm checks the third-order design against the
// transfer function derived by hand: the analog high-pass s³/(s³+2s²+2s+1)
// with s = (1−z⁻¹)/(K(1+z⁻¹)), K = tan(π·cutoff/fs), multiplied out.
func TestButterHighpassClosedForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ fs, fc float64 }{
		{30000, 300}, {30000, 150}, {25000, 300}, {20000, 5000}, {1000, 499}, {1000, 0.5},
	} {
		K := math.Tan(math.Pi * tc.fc / tc.fs)
		// (1−z)³, (1−z)²(1+z), (1−z)(1+z)², (1+z)³ in powers of z⁻¹.
		p0 := []float64{1, -3, 3, -1}
		p1 := []float64{1, -1, -1, 1}
		p2 := []float64{1, 1, -1, -1}
		p3 := []float64{1, 3, 3, 1}
		den := make([]float64, 4)
		for i := range den {
			den[i] = p0[i] + 2*K*p1[i] + 2*K*K*p2[i] + K*K*K*p3[i]
		}
		d0 := den[0]
		b, a := ButterHighpass(3, tc.fc, tc.fs)
		for i := range 4 {
			wantB, wantA := p0[i]/d0, den[i]/d0
			if math.Abs(b[i]-wantB) > 1e-13*math.Max(1, math.Abs(wantB)) {
				t.Errorf("fs %v fc %v: b[%d] = %.17g, want %.17g", tc.fs, tc.fc, i, b[i], wantB)
			}
			if math.Abs(a[i]-wantA) > 1e-13*math.Max(1, math.Abs(wantA)) {
				t.Errorf("fs %v fc %v: a[%d] = %.17g, want %.17g", tc.fs, tc.fc, i, a[i], wantA)
			}
		}
	}
}

// TestButterHighpassMagnitude checks every order against the analytic
// magnitude of a bilinear, pre-warped Butterworth high-pass,
// |H(ω)|² = 1 / (1 + (tan(ωc/2)/tan(ω/2))^(2N)), which is 1/2 at the cutoff,
// 0 at DC and 1 at Nyquist. The cascade of sections is checked for every
// order; the transfer function b/a, whose evaluation loses accuracy as the
// poles crowd towards z = 1, up to order 3 (Kilosort4's).
func TestButterHighpassMagnitude(t *testing.T) {
	t.Parallel()
	for order := 1; order <= maxOrder; order++ {
		for _, fc := range []float64{300, 1000, 7000} {
			fs := 30000.0
			d := designButterHP(order, fc, fs)
			secs := d.sections()
			cascade := func(w float64) complex128 {
				h := complex(d.gain, 0)
				for _, s := range secs {
					h *= freqResp([]float64{s.b0, s.b1, s.b2}, []float64{1, s.a1, s.a2}, w)
				}
				return h
			}
			b, a := ButterHighpass(order, fc, fs)
			if a[0] != 1 || len(a) != order+1 || len(b) != order+1 {
				t.Fatalf("order %d: len(b) = %d, len(a) = %d, a[0] = %v", order, len(b), len(a), a[0])
			}
			resp := []func(float64) complex128{cascade}
			if order <= 3 {
				resp = append(resp, func(w float64) complex128 { return freqResp(b, a, w) })
			}
			wc := 2 * math.Pi * fc / fs
			for ri, H := range resp {
				if g := cmplx.Abs(H(wc)); math.Abs(g-1/math.Sqrt2) > 1e-12 {
					t.Errorf("order %d fc %v form %d: |H(cutoff)| = %.15f, want 1/√2", order, fc, ri, g)
				}
				if g := cmplx.Abs(H(0)); g > 1e-12 {
					t.Errorf("order %d fc %v form %d: |H(DC)| = %g, want 0", order, fc, ri, g)
				}
				if g := cmplx.Abs(H(math.Pi)); math.Abs(g-1) > 1e-12 {
					t.Errorf("order %d fc %v form %d: |H(Nyquist)| = %.15f, want 1", order, fc, ri, g)
				}
				for k := 1; k < 200; k++ {
					w := math.Pi * float64(k) / 200
					r := math.Tan(wc/2) / math.Tan(w/2)
					want := 1 / (1 + math.Pow(r, float64(2*order)))
					got := cmplx.Abs(H(w))
					if math.Abs(got*got-want) > 1e-11 {
						t.Errorf("order %d fc %v form %d ω %.4f: |H|² = %.15g, want %.15g", order, fc, ri, w, got*got, want)
					}
				}
			}
			// Stable: the poles lie inside the unit circle.
			for _, p := range d.poles {
				if cmplx.Abs(p) >= 1 {
					t.Errorf("order %d fc %v: pole %v outside the unit circle", order, fc, p)
				}
			}
		}
	}
}

// TestSectionsMatchTransferFunction checks, phase included, that the
// cascade used by Filter (unit numerators times the gain) has the transfer
// function b/a, for the orders where b/a is well conditioned.
func TestSectionsMatchTransferFunction(t *testing.T) {
	t.Parallel()
	for order := 1; order <= 3; order++ {
		d := designButterHP(order, 300, 30000)
		b, a := ButterHighpass(order, 300, 30000)
		for k := 1; k < 50; k++ {
			w := math.Pi * float64(k) / 50
			want := freqResp(b, a, w)
			got := complex(d.gain, 0)
			for _, s := range d.sections() {
				got *= freqResp([]float64{s.b0, s.b1, s.b2}, []float64{1, s.a1, s.a2}, w)
			}
			if cmplx.Abs(got-want) > 1e-11 {
				t.Errorf("order %d ω %.3f: cascade %v, b/a %v", order, w, got, want)
			}
		}
	}
}

func TestButterHighpassPanics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		order  int
		fc, fs float64
	}{{0, 300, 30000}, {17, 300, 30000}, {3, 0, 30000}, {3, 15000, 30000}, {3, 300, 0}, {3, math.NaN(), 30000}} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("ButterHighpass(%d, %v, %v) did not panic", tc.order, tc.fc, tc.fs)
				}
			}()
			ButterHighpass(tc.order, tc.fc, tc.fs)
		}()
	}
}

// refLFilterSteady filters x by b/a in direct form I, with the past
// inputs all equal to x0 and the past outputs all equal to the DC gain
// times x0 (the steady state lfilter_zi describes).
func refLFilterSteady(b, a, x []float64, x0 float64) []float64 {
	var sb, sa float64
	for _, v := range b {
		sb += v
	}
	for _, v := range a {
		sa += v
	}
	y0 := sb / sa * x0
	y := make([]float64, len(x))
	for n := range x {
		var s float64
		for k, bk := range b {
			if n-k >= 0 {
				s += bk * x[n-k]
			} else {
				s += bk * x0
			}
		}
		for k := 1; k < len(a); k++ {
			if n-k >= 0 {
				s -= a[k] * y[n-k]
			} else {
				s -= a[k] * y0
			}
		}
		y[n] = s / a[0]
	}
	return y
}

// refFiltFilt is scipy's filtfilt written independently: odd extension by
// 3·max(len) samples, steady-state filtering forward and backward.
func refFiltFilt(b, a, x []float64) []float64 {
	e := 3 * max(len(a), len(b))
	n := len(x)
	ext := make([]float64, 0, n+2*e)
	for i := e; i >= 1; i-- {
		ext = append(ext, 2*x[0]-x[i])
	}
	ext = append(ext, x...)
	for i := 1; i <= e; i++ {
		ext = append(ext, 2*x[n-1]-x[n-1-i])
	}
	y := refLFilterSteady(b, a, ext, ext[0])
	r := make([]float64, len(y))
	for i := range y {
		r[i] = y[len(y)-1-i]
	}
	y = refLFilterSteady(b, a, r, r[0])
	out := make([]float64, n)
	for i := range out {
		out[i] = y[len(y)-1-e-i]
	}
	return out
}

// maxRelDiff returns max|got−want| / max|want|.
func maxRelDiff(got, want []float64) float64 {
	var d, m float64
	for i := range want {
		d = math.Max(d, math.Abs(got[i]-want[i]))
		if math.IsNaN(got[i]) {
			return math.Inf(1)
		}
		m = math.Max(m, math.Abs(want[i]))
	}
	if m == 0 {
		return d
	}
	return d / m
}

func TestLFilterAndZi(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	filters := [][2][]float64{
		{{0.5, 0.5}, {1}},
		{{1, 2, 1}, {4}},         // unnormalised a[0]
		{{0.2}, {1, -0.5, 0.06}}, // longer a than b
		{{1, -1}, {1, -0.9}},
	}
	for order := 1; order <= 4; order++ {
		b, a := ButterHighpass(order, 300+100*float64(order), 30000)
		filters = append(filters, [2][]float64{b, a})
	}
	for fi, f := range filters {
		b, a := f[0], f[1]
		x := make([]float64, 37)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		x0 := rng.NormFloat64()
		zi := LFilterZi(b, a)
		z := make([]float64, len(zi))
		for i := range zi {
			z[i] = zi[i] * x0
		}
		got, _ := LFilter(b, a, x, z)
		want := refLFilterSteady(b, a, x, x0)
		if d := maxRelDiff(got, want); d > 1e-12 {
			t.Errorf("filter %d: LFilter with LFilterZi·x0 differs from the steady-state reference by %g", fi, d)
		}
		got, _ = LFilter(b, a, x, nil)
		want = refLFilterSteady(b, a, x, 0)
		if d := maxRelDiff(got, want); d > 1e-12 {
			t.Errorf("filter %d: LFilter from rest differs by %g", fi, d)
		}
	}
}

func TestFiltFilt(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for order := 1; order <= 6; order++ {
		b, a := ButterHighpass(order, 50*float64(order), 1000)
		for _, n := range []int{3*(order+1) + 1, 40, 257} {
			x := make([]float64, n)
			for i := range x {
				x[i] = 10 + rng.NormFloat64() + 0.01*float64(i)
			}
			got := FiltFilt(b, a, x)
			want := refFiltFilt(b, a, x)
			if d := maxRelDiff(got, want); d > 1e-11 {
				t.Errorf("order %d n %d: FiltFilt differs from the reference by %g", order, n, d)
			}
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("FiltFilt of 12 samples with padlen 12 did not panic")
			}
		}()
		b, a := ButterHighpass(3, 300, 30000)
		FiltFilt(b, a, make([]float64, 12))
	}()
}
