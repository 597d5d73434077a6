package detect

// convBlock is the FFT length of the overlap-save temporal correlation;
// each block yields convBlock−nt+1 output columns. Two channels share one
// complex transform (one as the real part, one as the imaginary part: the
// templates are real, so the two correlations come back separated). The
// choice was measured on the 2-core dev box (docs/perf-detect.md,
// BenchmarkConv): this beat gonum's real FFT at lengths 512–4096 and a
// register-blocked direct float32 correlation.
const convBlock = 1024

// convSpectra returns, for each template k, conj(FFT(w_k zero-padded to
// n))/n in fft4's digit-reversed order: multiplying a block's transform by
// it and inverting gives the correlation Σ_j seg[o+j]·w_k[j] for
// o ≤ n−nt without wrap-around. Layout: spec[k*n+p].
func convSpectra(wtemp []float32, k, nt, n int) []complex128 {
	fft := newFFT4(n)
	spec := make([]complex128, k*n)
	for i := range k {
		s := spec[i*n : (i+1)*n]
		for j := range nt {
			s[j] = complex(float64(wtemp[i*nt+j]), 0)
		}
		fft.forward(s)
		for p, v := range s {
			s[p] = complex(real(v), -imag(v)) / complex(float64(n), 0)
		}
	}
	return spec
}

// correlator computes B[c,k,t] = Σ_j x[c, t+j−nt/2]·w_k[j] (zeros outside
// the row) for a range of columns of two channels at a time, by float64
// FFT overlap-save, rounding the result to float32. One per goroutine.
type correlator struct {
	n, nt, k, half, l int
	fft               *fft4
	spec              []complex128 // shared, read-only
	// The spectra in transpose16 order for the AVX-512 path
	// (fftForwardTVec, mulInverseCvtVec; nil without it), specT[k*n:],
	// one copy per correlator.
	specT []complex128
	z, p  []complex128
}

func newCorrelator(spec []complex128, k, nt, n int) *correlator {
	c := &correlator{
		n: n, nt: nt, k: k, half: nt / 2, l: n - nt + 1,
		fft:  newFFT4(n),
		spec: spec,
		z:    make([]complex128, n), p: make([]complex128, n),
	}
	if haveAVX512 && n%16 == 0 {
		c.specT = make([]complex128, k*n)
		for i := range k {
			transpose16(c.specT[i*n:(i+1)*n], spec[i*n:(i+1)*n])
		}
	}
	return c
}

// correlate writes B for columns e0 … e0+w−1 of rowA into dstA[k*w+i]
// (i = column − e0; one row of w columns per template k) and mA[i] =
// max_k B[k,i]², and the same for rowB into dstB, mB unless rowB is nil.
func (c *correlator) correlate(dstA, mA, rowA, dstB, mB, rowB []float32, e0, w int) {
	K, n := c.k, c.n
	dstA, mA = dstA[:w*K], mA[:w]
	if rowB != nil {
		dstB, mB = dstB[:w*K], mB[:w]
	}
	T := len(rowA)
	z, p := c.z[:n], c.p[:n]
	for b0 := 0; b0 < w; b0 += c.l {
		nout := min(c.l, w-b0)
		base := e0 + b0 - c.half // column of z[0]
		need := nout + c.nt - 1
		lo, hi := max(0, -base), min(need, T-base)
		if lo < hi {
			// Zeros outside the samples filled in.
			clear(z[:lo])
			clear(z[hi:])
			za, ra := z[lo:hi], rowA[base+lo:base+hi]
			var rb []float32
			if rowB != nil {
				rb = rowB[base+lo : base+hi]
			}
			j := fillVec(za, ra, rb)
			if rb != nil {
				rb = rb[j:]
			}
			fillGo(za[j:], ra[j:], rb)
		} else {
			clear(z)
		}
		split := c.specT != nil && fftForwardTVec(c.fft, z)
		if !split {
			c.fft.forward(z)
		}
		for k := range K {
			sp := c.spec[k*n : (k+1)*n]
			da := dstA[k*w+b0 : k*w+b0+nout]
			var db []float32
			if rowB != nil {
				db = dstB[k*w+b0 : k*w+b0+nout]
			}
			if split && mulInverseCvtVec(c.fft, da, db, p, z, c.specT[k*n:(k+1)*n]) {
				continue
			}
			if !mulInverseVec(c.fft, p, z, sp) {
				if !cmulVec(p, z, sp) {
					cmulGo(p, z, sp)
				}
				c.fft.inverse(p)
			}
			out := p[:nout]
			i := cvtVec(da, db, out)
			if db != nil {
				db = db[i:]
			}
			cvtGo(da[i:], db, out[i:])
		}
	}
	maxSq(mA, dstA, K)
	if rowB != nil {
		maxSq(mB, dstB, K)
	}
}

// maxSq sets m[i] = max_k b[k*W+i]² (W = len(m)).
func maxSq(m, b []float32, K int) {
	W := len(m)
	i := maxSqVec(m, b, K, W)
	maxSqGo(m[i:], b[i:], K, W)
}
