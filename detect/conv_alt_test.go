package detect

// Alternatives to the production correlator, kept to measure the choice
// (BenchmarkConv) and as independent implementations in tests.

import (
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// gonumSpectra returns, for each template k, conj(FFT(w_k zero-padded to
// n))/n: multiplying a block's spectrum by it and inverting gives the
// correlation Σ_j seg[o+j]·w_k[j] for o ≤ n−nt without wrap-around.
// Layout: spec[k*(n/2+1)+f].
func gonumSpectra(wtemp []float32, k, nt, n int) []complex128 {
	fft := fourier.NewFFT(n)
	nh := n/2 + 1
	spec := make([]complex128, k*nh)
	seq := make([]float64, n)
	for i := range k {
		clear(seq)
		for j := range nt {
			seq[j] = float64(wtemp[i*nt+j])
		}
		c := fft.Coefficients(nil, seq)
		for f, v := range c {
			spec[i*nh+f] = cmplx.Conj(v) / complex(float64(n), 0)
		}
	}
	return spec
}

// gonumCorrelator computes B[c,k,t] = Σ_j x[c, t+j−nt/2]·w_k[j] (zeros outside
// the row) for a range of columns of one channel, by float64 FFT
// overlap-save, rounding the result to float32. The alternative measured in BenchmarkConv (gonum's real FFT).
type gonumCorrelator struct {
	n, nt, k, half, l int
	fft               *fourier.FFT
	spec              []complex128 // shared, read-only
	seg, out          []float64
	coef, prod        []complex128
}

func newGonumCorrelator(spec []complex128, k, nt, n int) *gonumCorrelator {
	nh := n/2 + 1
	return &gonumCorrelator{
		n: n, nt: nt, k: k, half: nt / 2, l: n - nt + 1,
		fft:  fourier.NewFFT(n),
		spec: spec,
		seg:  make([]float64, n), out: make([]float64, n),
		coef: make([]complex128, nh), prod: make([]complex128, nh),
	}
}

// correlate writes B for columns e0 … e0+w−1 of row into dst[i*K+k]
// (i = column − e0) and m[i] = max_k B[i,k]².
func (c *gonumCorrelator) correlate(dst, m []float32, row []float32, e0, w int) {
	K := c.k
	dst = dst[:w*K]
	m = m[:w]
	nh := c.n/2 + 1
	T := len(row)
	for b0 := 0; b0 < w; b0 += c.l {
		nout := min(c.l, w-b0)
		base := e0 + b0 - c.half // column of seg[0]
		need := nout + c.nt - 1
		clear(c.seg)
		lo, hi := max(0, -base), min(need, T-base)
		for j := lo; j < hi; j++ {
			c.seg[j] = float64(row[base+j])
		}
		c.fft.Coefficients(c.coef, c.seg)
		for k := range K {
			sp := c.spec[k*nh : (k+1)*nh]
			prod := c.prod[:len(sp)]
			for f, v := range c.coef[:len(sp)] {
				prod[f] = v * sp[f]
			}
			c.fft.Sequence(c.out, c.prod)
			out := c.out[:nout]
			d := dst[b0*K+k:]
			for i, v := range out {
				d[i*K] = float32(v)
			}
		}
	}
	for i := range m {
		b := dst[i*K : (i+1)*K]
		var mx float32
		for _, v := range b {
			mx = max(mx, v*v)
		}
		m[i] = mx
	}
}

// correlateDirect is the register-blocked direct float32 correlation
// (two columns × six templates per inner loop), kept to measure against
// the FFT path (BenchmarkConv); same output layout as
// [correlator.correlate], without m. wt is the transposed template bank,
// wt[j][k]; xp is the row with nt/2 zeros on each side.
func correlateDirect(dst []float32, xp []float32, wt [][6]float32, e0, w int) {
	nt := len(wt)
	dst = dst[:w*6]
	i := 0
	for ; i+1 < w; i += 2 {
		var a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5 float32
		xs := xp[e0+i : e0+i+nt+1]
		x0 := xs[0]
		for j, wj := range wt {
			x1 := xs[j+1]
			a0 += x0 * wj[0]
			b0 += x1 * wj[0]
			a1 += x0 * wj[1]
			b1 += x1 * wj[1]
			a2 += x0 * wj[2]
			b2 += x1 * wj[2]
			a3 += x0 * wj[3]
			b3 += x1 * wj[3]
			a4 += x0 * wj[4]
			b4 += x1 * wj[4]
			a5 += x0 * wj[5]
			b5 += x1 * wj[5]
			x0 = x1
		}
		d := dst[i*6 : i*6+12]
		d[0], d[1], d[2], d[3], d[4], d[5] = a0, a1, a2, a3, a4, a5
		d[6], d[7], d[8], d[9], d[10], d[11] = b0, b1, b2, b3, b4, b5
	}
	for ; i < w; i++ {
		var a [6]float32
		for j, wj := range wt {
			x := xp[e0+i+j]
			for k := range a {
				a[k] += x * wj[k]
			}
		}
		copy(dst[i*6:], a[:])
	}
}
