package preprocess

import (
	"fmt"
	"math"
	"math/cmplx"
)

// maxOrder bounds the Butterworth order accepted by [ButterHighpass].
const maxOrder = 16

// section is one causal second-order section with a monic denominator,
//
//	y[n] = b0·x[n] + b1·x[n−1] + b2·x[n−2] − a1·y[n−1] − a2·y[n−2],
//
// a first-order section having b2 = a2 = 0.
type section struct {
	b0, b1, b2, a1, a2 float64
}

// butterHP is a digital Butterworth high-pass as scipy.signal.butter
// designs it: every zero at z = 1, poles from the analog prototype by
// pre-warped bilinear transform.
type butterHP struct {
	poles []complex128 // digital poles, conjugate pairs adjacent, real pole last
	gain  float64      // k in b = k·(1 − z⁻¹)^order
}

// checkButter panics unless the design parameters are usable.
func checkButter(order int, cutoff, fs float64) {
	if order < 1 || order > maxOrder {
		panic(fmt.Sprintf("preprocess: Butterworth order %d outside [1, %d]", order, maxOrder))
	}
	if !(fs > 0) || math.IsInf(fs, 0) {
		panic(fmt.Sprintf("preprocess: sample rate %v Hz", fs))
	}
	if !(cutoff > 0 && cutoff < fs/2) {
		panic(fmt.Sprintf("preprocess: cutoff %v Hz not in (0, %v) for a %v-Hz sample rate", cutoff, fs/2, fs))
	}
}

// designButterHP follows scipy.signal.butter(order, cutoff, btype='high',
// fs=fs, output='zpk'): the analog prototype's poles −exp(iπm/(2N)),
// m = −N+1, −N+3, …, N−1, moved to a high-pass at the pre-warped cutoff
// 4·tan(π·Wn/2) (Wn = cutoff/(fs/2), bilinear rate 2), then mapped by
// z = (4 + s)/(4 − s).
func designButterHP(order int, cutoff, fs float64) butterHP {
	checkButter(order, cutoff, fs)
	wn := cutoff / (fs / 2)
	const fs2 = 4.0 // 2·fs of the normalised bilinear transform (fs = 2)
	warped := fs2 * math.Tan(math.Pi*wn/2)
	var d butterHP
	analog := func(m int) complex128 {
		lp := -cmplx.Exp(complex(0, math.Pi*float64(m)/float64(2*order)))
		return complex(warped, 0) / lp // lp2hp: s → ω/s
	}
	den := complex(1, 0)
	add := func(s complex128) {
		d.poles = append(d.poles, (fs2+s)/(fs2-s))
		den *= fs2 - s
	}
	// Conjugate pairs m and −m, then the real pole m = 0 of an odd order.
	for m := order - 1; m > 0; m -= 2 {
		add(analog(m))
		add(analog(-m))
	}
	if order%2 == 1 {
		add(analog(0))
	}
	// lp2hp keeps the gain (the prototype's poles multiply to 1 in
	// modulus with zero total angle); bilinear_zpk multiplies it by
	// Π(fs2 − z)/Π(fs2 − p) with all analog zeros at 0.
	d.gain = real(cmplx.Pow(complex(fs2, 0), complex(float64(order), 0)) / den)
	return d
}

// sections returns the filter as cascaded sections with unit-gain
// numerators (1 − z⁻¹)² or (1 − z⁻¹); the overall gain is d.gain.
func (d butterHP) sections() []section {
	var s []section
	i := 0
	for ; i+1 < len(d.poles); i += 2 {
		p := d.poles[i]
		s = append(s, section{b0: 1, b1: -2, b2: 1, a1: -2 * real(p), a2: real(p)*real(p) + imag(p)*imag(p)})
	}
	if i < len(d.poles) {
		s = append(s, section{b0: 1, b1: -1, a1: -real(d.poles[i])})
	}
	return s
}

// ButterHighpass returns the transfer function b, a (a[0] = 1) of the
// digital Butterworth high-pass of the given order with its −3 dB point at
// cutoff Hz for sample rate fs, as scipy.signal.butter(order, cutoff,
// btype='high', fs=fs) computes it: b = k·(1 − z⁻¹)^order and a the
// polynomial of the poles. It panics unless 1 ≤ order ≤ 16 and
// 0 < cutoff < fs/2.
func ButterHighpass(order int, cutoff, fs float64) (b, a []float64) {
	d := designButterHP(order, cutoff, fs)
	// a = Π (1 − p z⁻¹), expanded in complex arithmetic as numpy.poly does.
	ac := []complex128{1}
	for _, p := range d.poles {
		next := make([]complex128, len(ac)+1)
		for i, v := range ac {
			next[i] += v
			next[i+1] -= v * p
		}
		ac = next
	}
	a = make([]float64, len(ac))
	for i, v := range ac {
		a[i] = real(v)
	}
	// b = k·(1 − z⁻¹)^order: binomial coefficients with alternating signs.
	b = make([]float64, order+1)
	c := 1.0
	for i := 0; i <= order; i++ {
		if i%2 == 0 {
			b[i] = d.gain * c
		} else {
			b[i] = -d.gain * c
		}
		c = c * float64(order-i) / float64(i+1)
	}
	return b, a
}
