//go:build amd64 && !noasm

package detect

import "golang.org/x/sys/cpu"

// The AVX-512 kernels (kernels_amd64.s) need AVX-512 F and VL, AVX2 and
// BMI2 and
// an OS that saves the ZMM and opmask state (x/sys/cpu checks XCR0). The
// Go wrappers below check lengths, hand the kernels the part they handle
// (whole vectors) and report how much was done; the caller finishes with
// the Go kernel, which then does what it alone would have done.

// haveAsm reports whether this build and CPU have the vector kernels.
var haveAsm = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX2 && cpu.X86.HasBMI2

// useAsm selects the vector kernels; tests switch it off to run the Go
// path on the same machine.
var useAsm = haveAsm

//go:noescape
func fftFwdStageAVX512(x *complex128, n, q int, w1, w2, w3 *complex128)

//go:noescape
func fftInvStageAVX512(x *complex128, n, q int, w1, w2, w3 *complex128)

//go:noescape
func fftSpan4AVX512(x *complex128, n int, inv bool)

//go:noescape
func cmulAVX512(p, z, s *complex128, n int)

//go:noescape
func cvtAVX512(dA, dB *float32, p *complex128, n int)

//go:noescape
func maxSqAVX512(m, b *float32, K, W, n int)

//go:noescape
func blockMaxAVX2(mb, m *float32, nb int)

//go:noescape
func rowSumAVX512(dst, src *float32, offs *int, nrows, n int)

//go:noescape
func resp5AVX512(dst, b *float32, offs *int, nc, K, W, n int, wt *float32)

// fftForwardVec runs f.forward on x with the vector kernels if it can.
func fftForwardVec(f *fft4, x []complex128) bool {
	if !useAsm || f.n < 16 {
		return false
	}
	x = x[:f.n]
	for _, s := range f.stages {
		fftFwdStageAVX512(&x[0], f.n, s.q, &s.w1[0], &s.w2[0], &s.w3[0])
	}
	fftSpan4AVX512(&x[0], f.n, false)
	return true
}

// fftInverseVec runs f.inverse on x with the vector kernels if it can.
func fftInverseVec(f *fft4, x []complex128) bool {
	if !useAsm || f.n < 16 {
		return false
	}
	x = x[:f.n]
	fftSpan4AVX512(&x[0], f.n, true)
	for i := len(f.stages) - 1; i >= 0; i-- {
		s := f.stages[i]
		fftInvStageAVX512(&x[0], f.n, s.q, &s.w1[0], &s.w2[0], &s.w3[0])
	}
	return true
}

// cmulVec does cmulGo(p, z, s) if len(z) is a multiple of 4.
func cmulVec(p, z, s []complex128) bool {
	n := len(z)
	if !useAsm || n == 0 || n%4 != 0 {
		return false
	}
	_, _ = p[n-1], s[n-1]
	cmulAVX512(&p[0], &z[0], &s[0], n)
	return true
}

// cvtVec does cvtGo for the first multiple of 8 of p and returns it.
func cvtVec(dA, dB []float32, p []complex128) int {
	n := len(p) &^ 7
	if !useAsm || n == 0 {
		return 0
	}
	_ = dA[n-1]
	var pb *float32
	if dB != nil {
		_ = dB[n-1]
		pb = &dB[0]
	}
	cvtAVX512(&dA[0], pb, &p[0], n)
	return n
}

// maxSqVec does maxSqGo for the first multiple of 16 of m and returns it.
func maxSqVec(m, b []float32, K, W int) int {
	n := len(m) &^ 15
	if !useAsm || n == 0 || K < 1 {
		return 0
	}
	_ = b[(K-1)*W+n-1]
	maxSqAVX512(&m[0], &b[0], K, W, n)
	return n
}

// blockMaxVec does blockMaxGo for the whole blocks of m and returns
// their number.
func blockMaxVec(mb, m []float32) int {
	nb := min(len(mb), len(m)/boundBlock)
	if !useAsm || nb == 0 {
		return 0
	}
	blockMaxAVX2(&mb[0], &m[0], nb)
	return nb
}

// rowSumVec does rowSumGo.
func rowSumVec(dst, src []float32, offs []int) bool {
	n := len(dst)
	if !useAsm || n == 0 || len(offs) == 0 {
		return false
	}
	for _, o := range offs {
		_ = src[o : o+n]
	}
	rowSumAVX512(&dst[0], &src[0], &offs[0], len(offs), n)
	return true
}

// respVec does respGo for S = 5 (Kilosort4's sizes).
func respVec(dst, b []float32, offs []int, K, S, W, n int, wt []float32) bool {
	if !useAsm || n < 1 || n > respStride || K < 1 || S != 5 || len(offs) == 0 {
		return false
	}
	_ = dst[(K+K%2)*respRows*respStride-1]
	_ = wt[len(offs)*S-1]
	for _, o := range offs {
		_ = b[o : o+(K-1)*W+n]
	}
	resp5AVX512(&dst[0], &b[0], &offs[0], len(offs), K, W, n, &wt[0])
	return true
}

//go:noescape
func paintMaxAVX512(row *float32, n int, a float32)

// paintMaxVec does paintMaxGo(row, a) if a > 0.
func paintMaxVec(row []float32, a float32) bool {
	if !useAsm || len(row) == 0 || !(a > 0) {
		return false
	}
	paintMaxAVX512(&row[0], len(row), a)
	return true
}

//go:noescape
func chooseAVX2(out, resp *float32, K int, thr2, c float32, noPrune bool)

// chooseVec does chooseGo for all respStride columns.
func chooseVec(out, resp []float32, K int, thr2, c float32, noPrune bool) bool {
	if !useAsm || K < 1 {
		return false
	}
	_ = out[chooseRows*respStride-1]
	_ = resp[K*respRows*respStride-1]
	chooseAVX2(&out[0], &resp[0], K, thr2, c, noPrune)
	return true
}

//go:noescape
func fillAVX512(z *complex128, a, b *float32, n int)

// fillVec does fillGo for the first multiple of 8 of z and returns it.
func fillVec(z []complex128, a, b []float32) int {
	n := len(z) &^ 7
	if !useAsm || n == 0 {
		return 0
	}
	_ = a[n-1]
	var pb *float32
	if b != nil {
		_ = b[n-1]
		pb = &b[0]
	}
	fillAVX512(&z[0], &a[0], pb, n)
	return n
}

//go:noescape
func mulSpan4InvAVX512(p, z, s *complex128, n int)

// mulInverseVec does cmulGo(p, z, s) and then f.inverse(p) with the
// vector kernels if it can, the product fused into the first stage.
func mulInverseVec(f *fft4, p, z, s []complex128) bool {
	if !useAsm || f.n < 16 {
		return false
	}
	p, z, s = p[:f.n], z[:f.n], s[:f.n]
	mulSpan4InvAVX512(&p[0], &z[0], &s[0], f.n)
	for i := len(f.stages) - 1; i >= 0; i-- {
		st := f.stages[i]
		fftInvStageAVX512(&p[0], f.n, st.q, &st.w1[0], &st.w2[0], &st.w3[0])
	}
	return true
}
