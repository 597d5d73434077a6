package detect

import (
	"fmt"
	"math"
	"math/cmplx"
)

// fft4 is an in-place complex FFT of length n = 4^m in float64, made for
// fast convolution only. The forward transform (decimation in frequency)
// leaves the spectrum in base-4 digit-reversed order; the inverse
// (decimation in time) takes digit-reversed input back to natural order.
// Pointwise products of two forward outputs are therefore products of
// equal frequencies, and no reordering pass is ever needed. The inverse
// is unnormalised: inverse(forward(x)) = n·x.
//
// Radix-4 butterflies with per-stage twiddle tables; about 34 flops per
// butterfly, n/4·log₄n butterflies.
type fft4 struct {
	n      int
	stages []fftStage // forward order: span n, n/4, …, 16 (span 4 is twiddle-free)
}

type fftStage struct {
	q          int          // quarter span
	w1, w2, w3 []complex128 // e^{−2πi·r·j/(4q)}, j < q
	// The twiddles split for the AVX-512 stage kernels (nil without
	// them): splitTwiddles of w1, w2, w3 for the forward (xf) and, of
	// their conjugates' products, for the inverse (xi).
	xf, xi []complex128
	// xs are the conjugate twiddles in the split layout of the split
	// inverse stages (q a multiple of 8, nil otherwise): for each group of
	// eight j, for w1, w2, w3 in turn, the eight real parts c and then
	// the eight −d of w = c + d·i, so that x·conj(w) = (xr·c − xi·(−d),
	// xr·(−d) + xi·c) as Go forms it.
	xs []float64
}

// newFFT4 returns the transform of length n; it panics unless n is a
// power of 4 and at least 4.
func newFFT4(n int) *fft4 {
	if n < 4 || n&(n-1) != 0 || bitsLen(n)%2 != 1 {
		panic(fmt.Sprintf("detect: fft4 length %d is not a power of 4", n))
	}
	f := &fft4{n: n}
	for span := n; span > 4; span /= 4 {
		q := span / 4
		s := fftStage{q: q, w1: make([]complex128, q), w2: make([]complex128, q), w3: make([]complex128, q)}
		for j := range q {
			a := -2 * math.Pi * float64(j) / float64(span)
			s.w1[j] = cmplx.Rect(1, a)
			s.w2[j] = cmplx.Rect(1, 2*a)
			s.w3[j] = cmplx.Rect(1, 3*a)
		}
		if haveAVX512 && q%4 == 0 {
			s.xf = splitTwiddles([][]complex128{s.w1, s.w2, s.w3}, false)
			s.xi = splitTwiddles([][]complex128{s.w1, s.w2, s.w3}, true)
		}
		if haveAVX512 && q%8 == 0 {
			for g := 0; g < q; g += 8 {
				for _, w := range [][]complex128{s.w1, s.w2, s.w3} {
					for _, v := range w[g : g+8] {
						s.xs = append(s.xs, real(v))
					}
					for _, v := range w[g : g+8] {
						s.xs = append(s.xs, -imag(v))
					}
				}
			}
		}
		f.stages = append(f.stages, s)
	}
	return f
}

// transpose16 sets dst to x (len(x) a multiple of 16) with each group
// of 16 transposed as a 4 × 4 matrix: dst[16g+4b+a] = x[16g+4a+b], the
// order in which fftForwardTVec leaves the forward transform; it is its
// own inverse.
func transpose16(dst, x []complex128) {
	dst = dst[:len(x)]
	for g := 0; g+16 <= len(x); g += 16 {
		for a := range 4 {
			for b := range 4 {
				dst[g+4*b+a] = x[g+4*a+b]
			}
		}
	}
}

// splitTwiddles lays out the factors w of the arrays ws (of equal length,
// a multiple of 4) for the AVX-512 complex products x·w (conj false) or
// x·conj(w) (conj true): for each group of four j, for each array in
// order, the four (c, c) and then the four (−d, d) (conj: (d, −d)) of
// w[j] = c + d·i. A product is then (xr·c, xi·c) + (xi·(−d), xr·d), which
// is Go's (xr·c − xi·d, xr·d + xi·c) operation for operation (xi·(−d) is
// −(xi·d) exactly), with two multiplies by memory operands and no
// shuffles of w.
func splitTwiddles(ws [][]complex128, conj bool) []complex128 {
	q := len(ws[0])
	out := make([]complex128, 0, 2*q*len(ws))
	for g := 0; g < q; g += 4 {
		for _, w := range ws {
			for _, v := range w[g : g+4] {
				out = append(out, complex(real(v), real(v)))
			}
			for _, v := range w[g : g+4] {
				d := imag(v)
				if conj {
					out = append(out, complex(d, -d))
				} else {
					out = append(out, complex(-d, d))
				}
			}
		}
	}
	return out
}

func bitsLen(n int) int {
	b := 0
	for n > 1 {
		n >>= 1
		b++
	}
	return b + 1
}

// forward transforms x (length n) in place; the result is X[σ(p)] at
// position p, σ the base-4 digit reversal.
func (f *fft4) forward(x []complex128) {
	if !fftForwardVec(f, x) {
		f.forwardGo(x)
	}
}

// forwardGo is forward in Go, the reference of the vector kernels.
func (f *fft4) forwardGo(x []complex128) {
	x = x[:f.n]
	for _, s := range f.stages {
		q := s.q
		w1, w2, w3 := s.w1[:q], s.w2[:q], s.w3[:q]
		for b := 0; b < f.n; b += 4 * q {
			x0 := x[b : b+q]
			x1 := x[b+q : b+2*q][:len(x0)]
			x2 := x[b+2*q : b+3*q][:len(x0)]
			x3 := x[b+3*q : b+4*q][:len(x0)]
			for j, a0 := range x0 {
				a1, a2, a3 := x1[j], x2[j], x3[j]
				t0, t1 := a0+a2, a0-a2
				t2, d := a1+a3, a1-a3
				t3 := complex(imag(d), -real(d)) // −i·d
				x0[j] = t0 + t2
				x1[j] = (t1 + t3) * w1[j]
				x2[j] = (t0 - t2) * w2[j]
				x3[j] = (t1 - t3) * w3[j]
			}
		}
	}
	for b := 0; b < f.n; b += 4 {
		y := x[b : b+4]
		a0, a1, a2, a3 := y[0], y[1], y[2], y[3]
		t0, t1 := a0+a2, a0-a2
		t2, d := a1+a3, a1-a3
		t3 := complex(imag(d), -real(d))
		y[0], y[1], y[2], y[3] = t0+t2, t1+t3, t0-t2, t1-t3
	}
}

// inverse undoes forward up to the factor n: digit-reversed spectrum in,
// natural-order sequence out, in place.
func (f *fft4) inverse(x []complex128) {
	if !fftInverseVec(f, x) {
		f.inverseGo(x)
	}
}

// inverseGo is inverse in Go, the reference of the vector kernels.
func (f *fft4) inverseGo(x []complex128) {
	x = x[:f.n]
	for b := 0; b < f.n; b += 4 {
		y := x[b : b+4]
		a0, a1, a2, a3 := y[0], y[1], y[2], y[3]
		t0, t1 := a0+a2, a0-a2
		t2, d := a1+a3, a1-a3
		t3 := complex(-imag(d), real(d)) // +i·d
		y[0], y[1], y[2], y[3] = t0+t2, t1+t3, t0-t2, t1-t3
	}
	for i := len(f.stages) - 1; i >= 0; i-- {
		s := f.stages[i]
		q := s.q
		w1, w2, w3 := s.w1[:q], s.w2[:q], s.w3[:q]
		for b := 0; b < f.n; b += 4 * q {
			x0 := x[b : b+q]
			x1 := x[b+q : b+2*q][:len(x0)]
			x2 := x[b+2*q : b+3*q][:len(x0)]
			x3 := x[b+3*q : b+4*q][:len(x0)]
			for j, a0 := range x0 {
				a1 := x1[j] * cmplx.Conj(w1[j])
				a2 := x2[j] * cmplx.Conj(w2[j])
				a3 := x3[j] * cmplx.Conj(w3[j])
				t0, t1 := a0+a2, a0-a2
				t2, d := a1+a3, a1-a3
				t3 := complex(-imag(d), real(d))
				x0[j] = t0 + t2
				x1[j] = t1 + t3
				x2[j] = t0 - t2
				x3[j] = t1 - t3
			}
		}
	}
}
