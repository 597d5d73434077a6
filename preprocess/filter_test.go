package preprocess

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refCircular is the float64 circular correlation of Kilosort4's
// fft_highpass written out in the time domain, O(n·len):
// y[m] = Σ_i h[i]·x[(m + i − n/2) mod n]. Taps with |h[i]| ≤ drop are
// skipped.
func refCircular(x, h []float64, drop float64) []float64 {
	n := len(x)
	y := make([]float64, n)
	var idx []int
	for i, v := range h {
		if math.Abs(v) > drop {
			idx = append(idx, i)
		}
	}
	for m := range n {
		var s float64
		j0 := ((m-n/2)%n + n) % n // x index at tap 0
		for _, i := range idx {
			j := j0 + i
			if j >= n {
				j -= n
			}
			s += h[i] * x[j]
		}
		y[m] = s
	}
	return y
}

// randRow returns n samples of int16-like noise with an offset and a slow
// drift, as float32.
func randRow(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	off := 200 * rng.NormFloat64()
	for i := range x {
		x[i] = float32(math.Round(off + 30*rng.NormFloat64() + 50*math.Sin(float64(i)/300)))
	}
	return x
}

func nanRow(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.NaN())
	}
	return x
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// maxRelDiff32 returns max|got−want| / max|want|, +Inf if got has a NaN.
func maxRelDiff32(got []float32, want []float64) float64 {
	return maxRelDiff(to64(got), want)
}

// TestFilterAgainstDirect compares Filter with the direct circular
// correlation with HighpassTaps on short and medium windows, covering both
// the FFT path (short) and the periodic forward-backward path.
func TestFilterAgainstDirect(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	sawFast, sawFFT := false, false
	for _, n := range []int{1, 2, 3, 61, 127, 1000, 1997, 1998, 2048, 3001, 4097} {
		f, err := NewFilter(30000, 300, 3, n)
		if err != nil {
			t.Fatal(err)
		}
		if f.Context() > 0 {
			sawFast = true
		} else {
			sawFFT = true
		}
		h := HighpassTaps(30000, 300, 3, n)
		for rep := range 2 {
			x := randRow(rng, n)
			want := refCircular(to64(x), h, 0)
			dst := nanRow(n)
			f.Apply(dst, x)
			// 1e-6 of the peak: the float32 rounding of the output is 6e-8.
			if d := maxRelDiff32(dst, want); d > 1e-6 {
				t.Errorf("n %d rep %d (context %d): Filter differs from the direct correlation by %g of the peak", n, rep, f.Context(), d)
			}
		}
	}
	if !sawFast || !sawFFT {
		t.Errorf("paths exercised: periodic %v, FFT %v; want both", sawFast, sawFFT)
	}
}

// TestFilterPeriodicExact checks the periodic forward-backward path in
// float64, before the output is rounded to float32: it must match the
// direct circular correlation with the taps to 1e-12 relative.
func TestFilterPeriodicExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{2000, 2501, 4097} {
		f, err := NewFilter(30000, 300, 3, n)
		if err != nil {
			t.Fatal(err)
		}
		if f.Context() == 0 {
			t.Fatalf("n %d: periodic path not taken", n)
		}
		x := to64(randRow(rng, n))
		L := f.Context()
		for i := range f.ext {
			f.ext[i] = x[((i-L)%n+n)%n]
		}
		f.runExt()
		got := make([]float64, n)
		for i := range got {
			got[i] = f.g2 * f.ext[L+i]
		}
		want := refCircular(x, HighpassTaps(30000, 300, 3, n), 0)
		// Relative to max|x|·Σ|h|, the bound the tail tolerance gives.
		var mx, sh float64
		for _, v := range x {
			mx = math.Max(mx, math.Abs(v))
		}
		for _, v := range HighpassTaps(30000, 300, 3, n) {
			sh += math.Abs(v)
		}
		var d float64
		for i := range got {
			d = math.Max(d, math.Abs(got[i]-want[i]))
		}
		t.Logf("n %d: periodic path error %.2g of max|x|·Σ|h|", n, d/(mx*sh))
		if d > 1e-12*mx*sh {
			t.Errorf("n %d: periodic path differs by %g = %g of max|x|·Σ|h|", n, d, d/(mx*sh))
		}
	}
}

// TestFilterFullWindow compares the periodic path at Kilosort4's window
// length T = 60122 with the exact float64 FFT correlation (gonum, length
// 60122) on two channels and with the direct time-domain correlation on
// one channel, skipping taps below 1e-20 of the peak (about 3000 taps are
// kept; the rest contribute less than 1e-16 of the output).
func TestFilterFullWindow(t *testing.T) {
	t.Parallel()
	const n = 60122
	rng := rand.New(rand.NewPCG(9, 10))
	f, err := NewFilter(30000, 300, 3, n)
	if err != nil {
		t.Fatal(err)
	}
	if f.Context() == 0 {
		t.Fatal("periodic path not taken at T = 60122")
	}
	slow := newFFTFilter(t, 30000, 300, 3, n)
	h := HighpassTaps(30000, 300, 3, n)
	var hmax float64
	for _, v := range h {
		hmax = math.Max(hmax, math.Abs(v))
	}
	for ch := range 2 {
		x := randRow(rng, n)
		got := nanRow(n)
		f.Apply(got, x)
		ref := nanRow(n)
		slow.Apply(ref, x)
		if d := maxRelDiff32(got, to64(ref)); d > 1e-6 {
			t.Errorf("channel %d: periodic path differs from the FFT correlation by %g of the peak", ch, d)
		}
		if ch == 0 {
			want := refCircular(to64(x), h, 1e-20*hmax)
			if d := maxRelDiff32(got, want); d > 1e-6 {
				t.Errorf("periodic path differs from the direct correlation by %g of the peak", d)
			}
			if d := maxRelDiff32(ref, want); d > 1e-6 {
				t.Errorf("FFT path differs from the direct correlation by %g of the peak", d)
			}
		}
	}
}

// newFFTFilter returns a Filter forced onto the FFT path.
func newFFTFilter(t testing.TB, fs, fc float64, order, n int) *Filter {
	t.Helper()
	f, err := newFilter(fs, fc, order, n, false)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFilterOtherSettings runs other cutoffs, orders and rates against the
// direct correlation.
func TestFilterOtherSettings(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		fs, fc   float64
		order, n int
	}{
		{30000, 150, 3, 4500}, {30000, 1000, 3, 700}, {25000, 300, 3, 3333},
		{30000, 300, 1, 1200}, {30000, 300, 2, 1501}, {30000, 300, 4, 2999},
		{30000, 300, 6, 5000}, // transfer function too ill-conditioned: FFT path
		{30000, 300, 3, 999},
	} {
		t.Run(fmt.Sprintf("fs%v_fc%v_o%d_n%d", tc.fs, tc.fc, tc.order, tc.n), func(t *testing.T) {
			f, err := NewFilter(tc.fs, tc.fc, tc.order, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			x := randRow(rng, tc.n)
			want := refCircular(to64(x), HighpassTaps(tc.fs, tc.fc, tc.order, tc.n), 0)
			got := nanRow(tc.n)
			f.Apply(got, x)
			if d := maxRelDiff32(got, want); d > 1e-6 {
				t.Errorf("context %d: differs from the direct correlation by %g of the peak", f.Context(), d)
			}
		})
	}
}

// TestFilterSines is Kilosort4's own filter check: a 100-Hz sine is
// suppressed and a 500-Hz sine passed, here to the analytic gain |H(f)|²
// and zero phase, measured away from the window edges where the circular
// wrap joins non-matching phases.
func TestFilterSines(t *testing.T) {
	t.Parallel()
	const n, fs = 60122, 30000.0
	f, err := NewFilter(fs, 300, 3, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, freq := range []float64{100, 500, 3000} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(100 * math.Sin(2*math.Pi*freq*float64(i)/fs))
		}
		y := nanRow(n)
		f.Apply(y, x)
		// Project the middle 50100 samples (whole periods of every
		// frequency here) on sin and cos: gain and phase.
		var ps, pc float64
		const m0, m = 5011, 50100
		for i, v := range y[m0 : m0+m] {
			ph := 2 * math.Pi * freq * float64(m0+i) / fs
			ps += float64(v) * math.Sin(ph)
			pc += float64(v) * math.Cos(ph)
		}
		ps, pc = 2*ps/m/100, 2*pc/m/100
		gain := math.Hypot(ps, pc)
		if math.Abs(pc) > 1e-6 {
			t.Errorf("%v Hz: phase shift: cos component %g", freq, pc)
		}
		r := math.Tan(math.Pi*300/fs) / math.Tan(math.Pi*freq/fs)
		want := 1 / (1 + math.Pow(r, 6))
		if math.Abs(gain-want) > 1e-4 {
			t.Errorf("%v Hz: gain %.6f, want |H|² = %.6f", freq, gain, want)
		}
		if freq == 100 && gain > 0.01 {
			t.Errorf("100 Hz not suppressed: gain %g", gain)
		}
		if freq == 500 && gain < 0.9 {
			t.Errorf("500 Hz not passed: gain %g", gain)
		}
	}
}

// TestFilterInPlaceAndClone checks that dst may be src, that clones give
// identical results independently, and that apply2 is two Applys.
func TestFilterInPlaceAndClone(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{500, 5000} {
		f, err := NewFilter(30000, 300, 3, n)
		if err != nil {
			t.Fatal(err)
		}
		g := f.Clone()
		x := randRow(rng, n)
		want := nanRow(n)
		f.Apply(want, x)
		y := append([]float32(nil), x...)
		g.Apply(y, y)
		for i := range y {
			if y[i] != want[i] {
				t.Fatalf("n %d: in-place clone differs at %d: %v vs %v", n, i, y[i], want[i])
			}
		}
		// Two rows at once, in place, equal two single rows bit for bit.
		x2 := randRow(rng, n)
		want2 := nanRow(n)
		f.Apply(want2, x2)
		y, y2 := append([]float32(nil), x...), append([]float32(nil), x2...)
		g.apply2(y, y, y2, y2)
		for i := range y {
			if y[i] != want[i] || y2[i] != want2[i] {
				t.Fatalf("n %d: apply2 differs at %d: %v, %v vs %v, %v", n, i, y[i], y2[i], want[i], want2[i])
			}
		}
	}
}

func TestFilterErrorsAndPanics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fs, fc   float64
		order, n int
	}{{0, 300, 3, 100}, {30000, 0, 3, 100}, {30000, 15000, 3, 100}, {30000, 300, 0, 100}, {30000, 300, 17, 100}, {30000, 300, 3, 0}, {math.Inf(1), 300, 3, 10}} {
		if _, err := NewFilter(tc.fs, tc.fc, tc.order, tc.n); err == nil {
			t.Errorf("NewFilter(%v, %v, %d, %d): no error", tc.fs, tc.fc, tc.order, tc.n)
		}
	}
	f, _ := NewFilter(30000, 300, 3, 100)
	defer func() {
		if r := recover(); r == nil {
			t.Error("Apply with a short dst did not panic")
		}
	}()
	f.Apply(make([]float32, 99), make([]float32, 100))
}

// TestHighpassTaps checks the taps: symmetric about the centre, their
// zero-phase spectrum Σ h(j)·cos(ωj) equal to |H(ω)|², and the
// pad/crop layout with the zero lag at n/2.
func TestHighpassTaps(t *testing.T) {
	t.Parallel()
	h := ImpulseResponse(30000, 300, 3)
	if len(h) != TapsLen {
		t.Fatalf("len = %d", len(h))
	}
	peak := h[TapsCentre]
	for j := 1; j < TapsCentre; j++ {
		if d := math.Abs(h[TapsCentre+j] - h[TapsCentre-j]); d > 1e-13*peak {
			t.Fatalf("asymmetric at lag %d: %g", j, d)
		}
	}
	b, a := ButterHighpass(3, 300, 30000)
	for _, freq := range []float64{0, 50, 100, 299, 300, 301, 500, 1000, 5000, 15000} {
		w := 2 * math.Pi * freq / 30000
		s := h[TapsCentre]
		for j := 1; j < TapsCentre; j++ {
			s += 2 * h[TapsCentre+j] * math.Cos(w*float64(j))
		}
		s += h[0] * math.Cos(w*TapsCentre)
		H := freqResp(b, a, w)
		want := real(H)*real(H) + imag(H)*imag(H)
		if math.Abs(s-want) > 1e-12 {
			t.Errorf("%v Hz: Σh·cos = %.15g, |H|² = %.15g", freq, s, want)
		}
	}
	for _, n := range []int{1, 2, 1000, 1001, TapsLen - 1, TapsLen, TapsLen + 1, 60122, 60123} {
		ht := HighpassTaps(30000, 300, 3, n)
		if len(ht) != n {
			t.Fatalf("n %d: len %d", n, len(ht))
		}
		for i, v := range ht {
			j := i - n/2 // lag
			var want float64
			if j >= -TapsCentre && j < TapsLen-TapsCentre {
				want = h[TapsCentre+j]
			}
			if v != want {
				t.Fatalf("n %d: taps[%d] (lag %d) = %g, want %g", n, i, j, v, want)
			}
		}
	}
	ht := HighpassTaps(30000, 300, 3, 60122)
	for i := range 15000 {
		if ht[i] != 0 || ht[60121-i] != 0 {
			t.Fatalf("60122 taps: not 15000 zeros each side (index %d)", i)
		}
	}
	if ht[15000] == 0 || ht[15000+TapsLen-1] == 0 {
		t.Error("60122 taps: response not at [15000, 45122)")
	}
}

// TestCascade runs the exported sections, with the gain, forward and then
// backward over a unit impulse: the result must be ImpulseResponse.
func TestCascade(t *testing.T) {
	t.Parallel()
	f, err := NewFilter(30000, 300, 3, 60122)
	if err != nil {
		t.Fatal(err)
	}
	sos, gain := f.Cascade()
	if len(sos) != 2 {
		t.Fatalf("%d sections for order 3", len(sos))
	}
	x := make([]float64, TapsLen)
	x[TapsCentre] = 1
	for pass := range 2 {
		slicesReverse := func() {
			for i, j := 0, len(x)-1; i < j; i, j = i+1, j-1 {
				x[i], x[j] = x[j], x[i]
			}
		}
		if pass == 1 {
			slicesReverse()
		}
		for _, s := range sos {
			x, _ = LFilter(s[:3], s[3:], x, nil)
		}
		for i := range x {
			x[i] *= gain
		}
		if pass == 1 {
			slicesReverse()
		}
	}
	if d := maxRelDiff(x, ImpulseResponse(30000, 300, 3)); d > 1e-12 {
		t.Errorf("cascade forward-backward differs from the taps by %g of the peak", d)
	}
}
