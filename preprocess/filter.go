package preprocess

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// tailTol is the share of the summed absolute impulse response that the
// periodic forward-backward path may neglect, both in the IIR start-up
// context and in the taps beyond the window's half length.
const tailTol = 1e-14

// maxImpulse bounds how far the causal impulse response is followed when
// looking for its tail; a filter that has not decayed by then always
// takes the FFT path.
const maxImpulse = 1 << 16

// Filter applies Kilosort4's zero-phase high-pass to single channel rows
// of a fixed length n: the circular correlation with [HighpassTaps](fs,
// cutoff, order, n) that Kilosort4 computes by FFT (kilosort4.md §4 step 5).
//
// When the window is long enough that the taps cut off at ±n/2 have
// decayed below 1e-14 of their sum (n ≥ 1998 for order 3 at 300 Hz and 30 kHz),
// the correlation is computed as the Butterworth filter run forward and
// then backward in float64 over the row extended periodically by Context
// samples on each side, which equals it to about 1e-12 of max|x|·Σ|h|.
// Otherwise it is computed with the cropped taps by a float64 FFT of
// length n.
//
// A Filter holds scratch space and is not safe for concurrent use; use
// [Filter.Clone] for each goroutine.
type Filter struct {
	n    int
	fast bool
	ctx  int       // periodic context on each side (fast path)
	secs []section // cascade with unit-gain numerators
	g2   float64   // squared gain of the cascade: forward and backward
	// order3 marks Kilosort4's order 3, run as the difference
	// (1 − z⁻¹)³ followed by the all-pole part with poles p (pair:
	// 1 + p1·z⁻¹ + p2·z⁻²) and q (1 + q1·z⁻¹).
	order3     bool
	p1, p2, q1 float64
	ext        []float64 // fast path: row with context, n + 2·ctx
	ext2       []float64 // the same for the second row of apply2
	// lanes holds hpLanes rows with context, interleaved, for the
	// vector path (applyLanes); allocated on first use.
	lanes []float64

	hconj []complex128 // FFT path: conj(fft(h))/n, n/2+1 values
	fft   *fourier.FFT
	coef  []complex128
	seq   []float64
}

// checkFilter reports whether the high-pass parameters are usable.
func checkFilter(fs, cutoff float64, order, n int) error {
	switch {
	case !(fs > 0) || math.IsInf(fs, 0):
		return fmt.Errorf("preprocess: sample rate %v Hz: must be positive and finite", fs)
	case !(cutoff > 0 && cutoff < fs/2):
		return fmt.Errorf("preprocess: high-pass cutoff %v Hz: must lie in (0, %v) for a %v-Hz sample rate", cutoff, fs/2, fs)
	case order < 1 || order > maxOrder:
		return fmt.Errorf("preprocess: high-pass order %d: must lie in [1, %d]", order, maxOrder)
	case n < 1:
		return fmt.Errorf("preprocess: window of %d samples: must be positive", n)
	}
	return nil
}

// NewFilter returns a Filter for rows of n samples with Kilosort4's
// Butterworth high-pass of the given order and cutoff (Hz) at sample rate
// fs (Hz). It returns an error unless fs > 0, 0 < cutoff < fs/2,
// 1 ≤ order ≤ 16 and n ≥ 1.
func NewFilter(fs, cutoff float64, order, n int) (*Filter, error) {
	return newFilter(fs, cutoff, order, n, true)
}

// newFilter is NewFilter; allowFast false forces the FFT path.
func newFilter(fs, cutoff float64, order, n int, allowFast bool) (*Filter, error) {
	if err := checkFilter(fs, cutoff, order, n); err != nil {
		return nil, err
	}
	d := designButterHP(order, cutoff, fs)
	f := &Filter{n: n, secs: d.sections(), g2: d.gain * d.gain}
	if order == 3 {
		f.order3 = true
		f.p1, f.p2, f.q1 = f.secs[0].a1, f.secs[0].a2, f.secs[1].a1
	}
	h := ImpulseResponse(fs, cutoff, order)
	ctx := f.impulseTail(d.gain)
	// The fast path needs (1) a decayed causal response, so that the taps
	// are its autocorrelation with no filtfilt edge effects and the
	// context suffices, (2) taps negligible beyond ±n/2, where Kilosort4
	// crops them, (3) one wrap of context and (4) the cascade to agree
	// with the taps, which Kilosort4 computes from the transfer function
	// b/a (ill-conditioned at high orders).
	if allowFast && ctx > 0 && ctx < TapsCentre-64 && tapsTail(h) <= n/2 && ctx <= n && f.matchesTaps(h) {
		f.fast = true
		f.ctx = ctx
		f.ext = make([]float64, n+2*ctx)
		f.ext2 = make([]float64, n+2*ctx)
		return f, nil
	}
	ht := fitTaps(h, n)
	fft := fourier.NewFFT(n)
	f.hconj = fft.Coefficients(nil, ht)
	for i, v := range f.hconj {
		f.hconj[i] = complex(real(v)/float64(n), -imag(v)/float64(n))
	}
	f.alloc()
	return f, nil
}

// alloc gives an FFT-path filter its own transform and scratch space.
func (f *Filter) alloc() {
	f.fft = fourier.NewFFT(f.n)
	f.coef = make([]complex128, f.n/2+1)
	f.seq = make([]float64, f.n)
}

// impulseTail returns the smallest L such that the causal impulse response
// of the cascade (gain included) from sample L on sums in absolute value
// to at most tailTol of the whole, or 0 if it has not decayed within
// maxImpulse samples.
func (f *Filter) impulseTail(gain float64) int {
	g := make([]float64, maxImpulse)
	g[0] = gain
	for _, s := range f.secs {
		s.forward(g)
	}
	var total float64
	for _, v := range g {
		total += math.Abs(v)
	}
	var tail float64
	for k := len(g) - 1; k >= 0; k-- {
		tail += math.Abs(g[k])
		if tail > tailTol*total {
			if k == len(g)-1 {
				return 0
			}
			return k + 1
		}
	}
	return 1
}

// tapsMatchTol bounds the difference, relative to the peak, between the
// taps and the cascade's forward-backward impulse response for the fast
// path to be used.
const tapsMatchTol = 1e-9

// matchesTaps reports whether the cascade run forward and backward over a
// unit impulse at TapsCentre reproduces the taps h to tapsMatchTol.
func (f *Filter) matchesTaps(h []float64) bool {
	r := make([]float64, TapsLen)
	r[TapsCentre] = 1
	for _, s := range f.secs {
		s.forward(r)
	}
	for _, s := range f.secs {
		s.backward(r)
	}
	var d, m float64
	for i, v := range h {
		d = math.Max(d, math.Abs(f.g2*r[i]-v))
		m = math.Max(m, math.Abs(v))
	}
	return d <= tapsMatchTol*m
}

// tapsTail returns the smallest m such that the taps h (centre TapsCentre)
// at lags |j| ≥ m sum in absolute value to at most tailTol of the whole.
func tapsTail(h []float64) int {
	var total float64
	for _, v := range h {
		total += math.Abs(v)
	}
	var tail float64
	for m := TapsCentre; m >= 1; m-- {
		if TapsCentre+m < len(h) {
			tail += math.Abs(h[TapsCentre+m])
		}
		tail += math.Abs(h[TapsCentre-m])
		if tail > tailTol*total {
			return m + 1
		}
	}
	return 1
}

// Len returns the row length n the Filter was made for.
func (f *Filter) Len() int { return f.n }

// Context returns the number of samples of periodic context the fast path
// adds on each side of a row, or 0 if the Filter uses the FFT path.
func (f *Filter) Context() int {
	if !f.fast {
		return 0
	}
	return f.ctx
}

// Cascade returns the Butterworth high-pass as second-order sections in
// scipy's sos layout, one row [b0, b1, b2, 1, a1, a2] per section (a
// first-order section has b2 = a2 = 0), and the gain k that multiplies
// the cascade's output. The periodic path runs the cascade with the gain
// forward and then backward; the result is the circular correlation with
// HighpassTaps.
func (f *Filter) Cascade() (sos [][6]float64, gain float64) {
	for _, s := range f.secs {
		sos = append(sos, [6]float64{s.b0, s.b1, s.b2, 1, s.a1, s.a2})
	}
	return sos, math.Sqrt(f.g2)
}

// Clone returns a Filter with the same coefficients and its own scratch
// space, for use by another goroutine.
func (f *Filter) Clone() *Filter {
	c := *f
	c.lanes = nil
	if f.fast {
		c.ext = make([]float64, len(f.ext))
		c.ext2 = make([]float64, len(f.ext2))
	} else {
		c.alloc()
	}
	return &c
}

// Apply filters the row src into dst, both of length Len(); dst may be
// src. It panics if either length differs from Len().
func (f *Filter) Apply(dst, src []float32) {
	n := f.n
	if len(dst) != n || len(src) != n {
		panic(fmt.Sprintf("preprocess: Filter.Apply: len(dst) = %d, len(src) = %d, want %d", len(dst), len(src), n))
	}
	if f.fast {
		f.applyFast(dst, src)
	} else {
		f.applyFFT(dst, src)
	}
}

// apply2 filters two rows at once, interleaving their recurrences so that
// the processor overlaps their latencies; the results are those of two
// Apply calls, bit for bit. It panics as Apply does.
func (f *Filter) apply2(dst0, src0, dst1, src1 []float32) {
	n := f.n
	if len(dst0) != n || len(src0) != n || len(dst1) != n || len(src1) != n {
		panic(fmt.Sprintf("preprocess: Filter.apply2: lengths %d, %d, %d, %d, want %d", len(dst0), len(src0), len(dst1), len(src1), n))
	}
	if !f.fast {
		f.applyFFT(dst0, src0)
		f.applyFFT(dst1, src1)
		return
	}
	f.extend(f.ext, src0)
	f.extend(f.ext2, src1)
	if f.order3 {
		diff3(f.ext)
		diff3(f.ext2)
		allPole3x2(f.p1, f.p2, f.q1, f.ext, f.ext2)
		diff3Back(f.ext)
		diff3Back(f.ext2)
		allPole3x2Back(f.p1, f.p2, f.q1, f.ext, f.ext2)
	} else {
		for _, s := range f.secs {
			s.forward2(f.ext, f.ext2)
		}
		for _, s := range f.secs {
			s.backward2(f.ext, f.ext2)
		}
	}
	f.output(dst0, f.ext)
	f.output(dst1, f.ext2)
}

// extend copies the row src into e with ctx samples of periodic context
// on each side.
func (f *Filter) extend(e []float64, src []float32) {
	n, L := f.n, f.ctx
	for i, v := range src[n-L:] {
		e[i] = float64(v)
	}
	mid := e[L : L+n]
	for i, v := range src {
		mid[i] = float64(v)
	}
	for i, v := range src[:L] {
		e[L+n+i] = float64(v)
	}
}

// output writes the filtered row from e, gain applied, to dst.
func (f *Filter) output(dst []float32, e []float64) {
	g := f.g2
	for i, v := range e[f.ctx : f.ctx+f.n] {
		dst[i] = float32(g * v)
	}
}

// applyFast runs the cascade forward and backward over the periodically
// extended row.
func (f *Filter) applyFast(dst, src []float32) {
	f.extend(f.ext, src)
	f.runExt()
	f.output(dst, f.ext)
}

// runExt filters the extended row in f.ext forward and backward, without
// the gain.
func (f *Filter) runExt() {
	if f.order3 {
		diff3(f.ext)
		allPole3(f.p1, f.p2, f.q1, f.ext)
		diff3Back(f.ext)
		allPole3Back(f.p1, f.p2, f.q1, f.ext)
		return
	}
	for _, s := range f.secs {
		s.forward(f.ext)
	}
	for _, s := range f.secs {
		s.backward(f.ext)
	}
}

// applyFFT computes the circular correlation with the fitted taps.
func (f *Filter) applyFFT(dst, src []float32) {
	n := f.n
	for i, v := range src {
		f.seq[i] = float64(v)
	}
	f.fft.Coefficients(f.coef, f.seq)
	for i, v := range f.hconj {
		f.coef[i] *= v
	}
	c := f.fft.Sequence(f.seq, f.coef)
	// y[m] = c[(m − n/2) mod n].
	h := n / 2
	for m, v := range c[n-h:] {
		dst[m] = float32(v)
	}
	for m, v := range c[:n-h] {
		dst[h+m] = float32(v)
	}
}

// forward runs the section causally over x in place from zero state.
func (s section) forward(x []float64) {
	b0, b1, b2, a1, a2 := s.b0, s.b1, s.b2, s.a1, s.a2
	var x1, x2, y1, y2 float64
	for i, v := range x {
		t := b0*v + b1*x1 + b2*x2 - a2*y2
		y := t - a1*y1
		x2, x1 = x1, v
		y2, y1 = y1, y
		x[i] = y
	}
}

// backward runs the section anti-causally over x in place from zero
// state, that is forward over x reversed.
func (s section) backward(x []float64) {
	b0, b1, b2, a1, a2 := s.b0, s.b1, s.b2, s.a1, s.a2
	var x1, x2, y1, y2 float64
	for i := len(x) - 1; i >= 0; i-- {
		v := x[i]
		t := b0*v + b1*x1 + b2*x2 - a2*y2
		y := t - a1*y1
		x2, x1 = x1, v
		y2, y1 = y1, y
		x[i] = y
	}
}

// forward2 is forward on x and y (of equal length) at once.
func (s section) forward2(x, y []float64) {
	b0, b1, b2, a1, a2 := s.b0, s.b1, s.b2, s.a1, s.a2
	var x1, x2, y1, y2 float64
	var u1, u2, v1, v2 float64
	y = y[:len(x)]
	for i, v := range x {
		w := y[i]
		t := b0*v + b1*x1 + b2*x2 - a2*y2
		r := b0*w + b1*u1 + b2*u2 - a2*v2
		o := t - a1*y1
		q := r - a1*v1
		x2, x1 = x1, v
		y2, y1 = y1, o
		u2, u1 = u1, w
		v2, v1 = v1, q
		x[i] = o
		y[i] = q
	}
}

// backward2 is backward on x and y (of equal length) at once.
func (s section) backward2(x, y []float64) {
	b0, b1, b2, a1, a2 := s.b0, s.b1, s.b2, s.a1, s.a2
	var x1, x2, y1, y2 float64
	var u1, u2, v1, v2 float64
	y = y[:len(x)]
	for i := len(x) - 1; i >= 0; i-- {
		v, w := x[i], y[i]
		t := b0*v + b1*x1 + b2*x2 - a2*y2
		r := b0*w + b1*u1 + b2*u2 - a2*v2
		o := t - a1*y1
		q := r - a1*v1
		x2, x1 = x1, v
		y2, y1 = y1, o
		u2, u1 = u1, w
		v2, v1 = v1, q
		x[i] = o
		y[i] = q
	}
}

// diff3 replaces x by its third difference, causally from zero state:
// x[i] − 3x[i−1] + 3x[i−2] − x[i−3], the numerator (1 − z⁻¹)³ of the
// order-3 high-pass.
func diff3(x []float64) {
	for i := len(x) - 1; i >= 3; i-- {
		x[i] = ((x[i] - 3*x[i-1]) + 3*x[i-2]) - x[i-3]
	}
	if len(x) > 2 {
		x[2] = (x[2] - 3*x[1]) + 3*x[0]
	}
	if len(x) > 1 {
		x[1] = x[1] - 3*x[0]
	}
}

// diff3Back is diff3 run anti-causally: x[i] − 3x[i+1] + 3x[i+2] − x[i+3].
func diff3Back(x []float64) {
	n := len(x)
	for i := 0; i+3 < n; i++ {
		x[i] = ((x[i] - 3*x[i+1]) + 3*x[i+2]) - x[i+3]
	}
	if n > 2 {
		x[n-3] = (x[n-3] - 3*x[n-2]) + 3*x[n-1]
	}
	if n > 1 {
		x[n-2] = x[n-2] - 3*x[n-1]
	}
}

// allPole3 filters x in place, causally from zero state, by
// 1/((1 + p1·z⁻¹ + p2·z⁻²)(1 + q1·z⁻¹)).
func allPole3(p1, p2, q1 float64, x []float64) {
	var y1, y2, z1 float64
	for i, v := range x {
		y := (v - p2*y2) - p1*y1
		z := y - q1*z1
		y2, y1, z1 = y1, y, z
		x[i] = z
	}
}

// allPole3Back is allPole3 run from the end to the start.
func allPole3Back(p1, p2, q1 float64, x []float64) {
	var y1, y2, z1 float64
	for i := len(x) - 1; i >= 0; i-- {
		y := (x[i] - p2*y2) - p1*y1
		z := y - q1*z1
		y2, y1, z1 = y1, y, z
		x[i] = z
	}
}

// allPole3x2 is allPole3 on x and y (of equal length) at once: four
// independent recurrences share the loop, so the processor overlaps their
// latencies; each row's arithmetic is exactly allPole3's.
func allPole3x2(p1, p2, q1 float64, x, y []float64) {
	var x1, x2, xz, y1, y2, yz float64
	y = y[:len(x)]
	for i, v := range x {
		u := y[i]
		a := (v - p2*x2) - p1*x1
		b := (u - p2*y2) - p1*y1
		za := a - q1*xz
		zb := b - q1*yz
		x2, x1, xz = x1, a, za
		y2, y1, yz = y1, b, zb
		x[i] = za
		y[i] = zb
	}
}

// allPole3x2Back is allPole3x2 run from the end to the start.
func allPole3x2Back(p1, p2, q1 float64, x, y []float64) {
	var x1, x2, xz, y1, y2, yz float64
	y = y[:len(x)]
	for i := len(x) - 1; i >= 0; i-- {
		v, u := x[i], y[i]
		a := (v - p2*x2) - p1*x1
		b := (u - p2*y2) - p1*y1
		za := a - q1*xz
		zb := b - q1*yz
		x2, x1, xz = x1, a, za
		y2, y1, yz = y1, b, zb
		x[i] = za
		y[i] = zb
	}
}
