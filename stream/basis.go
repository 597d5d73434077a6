package stream

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// The sort's templates are spikes through the zero-phase filter |H|²
// (Butterworth forward and back); the stream runs the filter forward
// twice, H², which passes every frequency as much as |H|² does (so the
// sort's whitening and thresholds hold) but shifts its phase. A template
// T = |H|²·S becomes H²·S = T·H/conj(H) in the stream: each temporal
// basis vector is taken through the all-pass G = H/conj(H). Matched
// against the zero-phase templates instead, the stream's spikes leave a
// residual that the matching takes for more spikes (each spike found two
// or three times, 0.5–1 ms apart); taken through H once and 1/conj(H),
// the low frequencies' noise weighs more than in the sort and the
// threshold lets through a sixth more spikes, all near it.

// basisFFT is the length of the transform; the template sits in its
// middle so that G's response on either side fits.
const basisFFT = 1024

// causalTemplates returns the templates u (N×C×P) on the basis w (P×nt)
// as the stream sees them: the basis rows taken through G, then
// made orthonormal again (Gram–Schmidt, W' = A·Q), the coefficients u·A
// on the new basis Q, and A (row p: basis vector p's coefficients on Q),
// which maps any feature vector on the sort's basis to the stream's. b and a are the high-pass's transfer function.
func causalTemplates(u, w []float32, N, C, P, nt int, b, a []float64) (u2, q []float32, A [][]float64) {
	f := fourier.NewCmplxFFT(basisFFT)
	g := make([]complex128, basisFFT)
	for k := range g {
		z := cmplx.Exp(complex(0, -2*math.Pi*float64(k)/basisFFT)) // e^{-iω}
		if h := poly(b, z) / poly(a, z); h != 0 {                  // H(1) = 0: no DC passes either way
			g[k] = h / cmplx.Conj(h)
		}
	}
	off := basisFFT/2 - nt/2
	rows := make([][]float64, P)
	buf := make([]complex128, basisFFT)
	for p := range P {
		clear(buf)
		for t := range nt {
			buf[off+t] = complex(float64(w[p*nt+t]), 0)
		}
		spec := f.Coefficients(nil, buf)
		for k := range spec {
			spec[k] *= g[k]
		}
		back := f.Sequence(nil, spec)
		rows[p] = make([]float64, nt)
		for t := range nt {
			rows[p][t] = real(back[off+t]) / basisFFT
		}
	}
	// Gram–Schmidt: rows[p] = Σ_{q≤p} A[p][q]·Q[q].
	A = make([][]float64, P)
	Q := make([][]float64, P)
	for p := range P {
		A[p] = make([]float64, P)
		v := append([]float64(nil), rows[p]...)
		for r := range p {
			d := dot(rows[p], Q[r])
			A[p][r] = d
			for t := range v {
				v[t] -= d * Q[r][t]
			}
		}
		n := math.Sqrt(dot(v, v))
		A[p][p] = n
		for t := range v {
			v[t] /= n
		}
		Q[p] = v
	}
	q = make([]float32, P*nt)
	for p := range P {
		for t := range nt {
			q[p*nt+t] = float32(Q[p][t])
		}
	}
	u2 = make([]float32, len(u))
	for k := range N * C {
		src := u[k*P : (k+1)*P]
		for r := range P {
			s := 0.0
			for p := r; p < P; p++ {
				s += float64(src[p]) * A[p][r]
			}
			u2[k*P+r] = float32(s)
		}
	}
	return u2, q, A
}

// poly returns Σ_i c[i]·z^i.
func poly(c []float64, z complex128) complex128 {
	s, zi := complex(0, 0), complex(1, 0)
	for _, v := range c {
		s += complex(v, 0) * zi
		zi *= z
	}
	return s
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
