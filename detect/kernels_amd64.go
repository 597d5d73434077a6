//go:build amd64 && !noasm

package detect

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The AVX-512 kernels (kernels_avx512_*_amd64.s) need AVX-512 F and VL, AVX2 and
// BMI2 and an OS that saves the ZMM and opmask state; the AVX2 kernels
// (kernels_avx2_amd64.s) need AVX2 and an OS that saves the YMM state (x/sys/cpu
// checks XCR0). The AVX-512 ones are used where they run, the AVX2 ones
// elsewhere; both compute every output as the Go code does. The Go
// wrappers below check lengths, hand the kernels the part they handle
// (whole vectors) and report how much was done; the caller finishes with
// the Go kernel, which then does what it alone would have done.

// haveAsm reports whether this build and CPU have vector kernels (AVX2
// at least); haveAVX512 whether they have the AVX-512 ones.
var (
	haveAsm    = cpu.X86.HasAVX2
	haveAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX2 && cpu.X86.HasBMI2
)

// useAsm selects the vector kernels and useAVX512 the AVX-512 ones over
// the AVX2 ones; tests switch them to run every path on one machine.
var (
	useAsm    = haveAsm
	useAVX512 = haveAVX512
)

//go:noescape
func fftFwdStageAVX512(x *complex128, n, q int, wx *complex128)

//go:noescape
func fftInvStageAVX512(x *complex128, n, q int, wx *complex128)

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
func resp5AVX512(dst, b *float32, offs *int, nc, K, W, n int, wt *float32, thr2 float32, noPrune bool)

// fftForwardVec runs f.forward on x with the vector kernels if it can.
func fftForwardVec(f *fft4, x []complex128) bool {
	if !useAsm || f.n < 16 {
		return false
	}
	x = x[:f.n]
	for i := range f.stages {
		fftFwdStageK(&x[0], f.n, &f.stages[i])
	}
	fftSpan4K(&x[0], f.n, false)
	return true
}

// fftInverseVec runs f.inverse on x with the vector kernels if it can.
func fftInverseVec(f *fft4, x []complex128) bool {
	if !useAsm || f.n < 16 {
		return false
	}
	x = x[:f.n]
	fftSpan4K(&x[0], f.n, true)
	for i := len(f.stages) - 1; i >= 0; i-- {
		fftInvStageK(&x[0], f.n, &f.stages[i])
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
	cmulK(&p[0], &z[0], &s[0], n)
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
	cvtK(&dA[0], pb, &p[0], n)
	return n
}

// maxSqVec does maxSqGo for the first multiple of 16 of m and returns it.
func maxSqVec(m, b []float32, K, W int) int {
	n := len(m) &^ 15
	if !useAsm || n == 0 || K < 1 {
		return 0
	}
	_ = b[(K-1)*W+n-1]
	maxSqK(&m[0], &b[0], K, W, n)
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
	rowSumK(&dst[0], &src[0], &offs[0], len(offs), n)
	return true
}

// rowSumOffs does rowSumGo(dst, src, offs.o) if it can.
func rowSumOffs(dst, src []float32, offs rowOffs) bool {
	n := len(dst)
	if !useAsm || n == 0 || len(offs.o) == 0 {
		return false
	}
	_ = src[offs.hi : offs.hi+n]
	rowSumK(&dst[0], &src[0], &offs.o[0], len(offs.o), n)
	return true
}

// respOffs does respGo(dst, b, offs.o, …) for S = 5 and K ≤ 64.
func respOffs(dst, b []float32, offs rowOffs, K, S, W, n int, wt []float32, thr2 float32, noPrune bool) bool {
	if !useAsm || n < 1 || n > respStride || K < 1 || K > 64 || S != 5 || len(offs.o) == 0 {
		return false
	}
	_ = dst[(K+K%2)*respRows*respStride-1]
	_ = wt[len(offs.o)*S-1]
	_ = b[offs.hi : offs.hi+(K-1)*W+n]
	resp5K(&dst[0], &b[0], &offs.o[0], len(offs.o), K, W, n, &wt[0], thr2, noPrune)
	return true
}

//go:noescape
func finePassAVX512(blks *int32, cols *uint32, pass *uint64, nw int, m *float32, offs *int, nrows, W int, thr2 float32, noPrune bool) int

// finePassVec does finePassGo(blks, cols, pass, m, offs.o, W, thr2,
// noPrune) with the AVX-512 kernel if it can and returns its count; blks
// and cols need room for one entry per block below W.
func finePassVec(blks []int32, cols []uint32, pass []uint64, m []float32, offs rowOffs, W int, thr2 float32, noPrune bool) (int, bool) {
	if !useAsm || !useAVX512 || W < 1 || len(pass) == 0 || len(offs.o) == 0 {
		return 0, false
	}
	nb := (W + boundBlock - 1) / boundBlock
	_ = blks[nb-1]
	_ = cols[nb-1]
	_ = m[offs.hi : offs.hi+W]
	return finePassAVX512(&blks[0], &cols[0], &pass[0], len(pass), &m[0], &offs.o[0], len(offs.o), W, thr2, noPrune), true
}

//go:noescape
func passBitsAVX512(bits *uint16, v *float32, n int, thr2 float32)

// passBitsVec does passBitsGo with the AVX-512 kernel if it can.
func passBitsVec(bits []uint64, v []float32, thr2 float32) bool {
	n := len(v)
	if !useAsm || !useAVX512 || n == 0 {
		return false
	}
	_ = bits[(n-1)/64]
	// Whole 64-bit words: the kernel writes 16 bits at a time, and the
	// words past the last 16 of v are cleared here.
	nw := (n + 63) / 64
	bits[nw-1] = 0
	passBitsAVX512((*uint16)(unsafe.Pointer(&bits[0])), &v[0], n, thr2)
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
	if useAVX512 {
		chooseAVX512(&out[0], &resp[0], K, thr2, c, noPrune)
	} else {
		chooseAVX2(&out[0], &resp[0], K, thr2, c, noPrune)
	}
	return true
}

//go:noescape
func chooseAVX512(out, resp *float32, K int, thr2, c float32, noPrune bool)

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
	fillK(&z[0], &a[0], pb, n)
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
	mulSpan4InvK(&p[0], &z[0], &s[0], f.n)
	for i := len(f.stages) - 1; i >= 0; i-- {
		fftInvStageK(&p[0], f.n, &f.stages[i])
	}
	return true
}

//go:noescape
func fftInvStageSplitAVX512(x *complex128, n, q int, ws *float64, in bool)

//go:noescape
func cvtSplitAVX512(dA, dB *float32, p *complex128, n int)

//go:noescape
func fftSpan4FwdTAVX512(x *complex128, n int)

//go:noescape
func mulSpan4InvTAVX512(p, z, s *complex128, n int, w4 *complex128)

// splitInverse reports whether the AVX-512 path of the correlation
// (fftForwardTVec, then mulInverseCvtVec) runs for f.
func splitInverse(f *fft4) bool {
	return useAsm && useAVX512 && f.n >= 64 && f.stages[len(f.stages)-1].xi != nil && f.stages[0].xs != nil
}

// fftForwardTVec runs f.forward on x with the AVX-512 kernels, the
// result left in transpose16 order, if splitInverse(f).
func fftForwardTVec(f *fft4, x []complex128) bool {
	if !splitInverse(f) {
		return false
	}
	x = x[:f.n]
	for i := range f.stages {
		fftFwdStageK(&x[0], f.n, &f.stages[i])
	}
	fftSpan4FwdTAVX512(&x[0], f.n)
	return true
}

// mulInverseCvtVec does cmulGo(p, z, s), f.inverse(p) and then cvtGo(da,
// db, p[:len(da)]) (db nil or as long as da) with the AVX-512 kernels, z
// and s in transpose16 order (z as fftForwardTVec leaves it): the inverse's stages of
// quarter span q ≥ 16 run in the split layout, the first of them
// converting to it, and the rounding to float32 reads it (p is left in
// it). It does nothing and reports false unless splitInverse(f), or for
// len(da) not in [1, n].
func mulInverseCvtVec(f *fft4, da, db []float32, p, z, s []complex128) bool {
	n, nout := f.n, len(da)
	if !splitInverse(f) || nout < 1 || nout > n {
		return false
	}
	p, z, s = p[:n], z[:n], s[:n]
	var pb *float32
	if db != nil {
		_ = db[nout-1]
		pb = &db[0]
	}
	// The product, the span-4 stage and the stage of quarter span 4,
	// then the others split.
	last := len(f.stages) - 1
	mulSpan4InvTAVX512(&p[0], &z[0], &s[0], n, &f.stages[last].xi[0])
	for i := last - 1; i >= 0; i-- {
		st := &f.stages[i]
		fftInvStageSplitAVX512(&p[0], n, st.q, &st.xs[0], i == last-1)
	}
	cvtSplitAVX512(&da[0], pb, &p[0], nout)
	return true
}

//go:noescape
func fftFwdStageAVX2(x *complex128, n, q int, w1, w2, w3 *complex128)

// fftFwdStageK runs stage s of the forward transform of x[0:n] by
// fftFwdStageAVX512, or fftFwdStageAVX2 without AVX-512.
func fftFwdStageK(x *complex128, n int, s *fftStage) {
	if useAVX512 && s.xf != nil {
		fftFwdStageAVX512(x, n, s.q, &s.xf[0])
		return
	}
	fftFwdStageAVX2(x, n, s.q, &s.w1[0], &s.w2[0], &s.w3[0])
}

//go:noescape
func fftInvStageAVX2(x *complex128, n, q int, w1, w2, w3 *complex128)

// fftInvStageK runs stage s of the inverse transform of x[0:n] by
// fftInvStageAVX512, or fftInvStageAVX2 without AVX-512.
func fftInvStageK(x *complex128, n int, s *fftStage) {
	if useAVX512 && s.xi != nil {
		fftInvStageAVX512(x, n, s.q, &s.xi[0])
		return
	}
	fftInvStageAVX2(x, n, s.q, &s.w1[0], &s.w2[0], &s.w3[0])
}

//go:noescape
func fftSpan4AVX2(x *complex128, n int, inv bool)

// fftSpan4K runs fftSpan4AVX512, or fftSpan4AVX2 without AVX-512.
func fftSpan4K(x *complex128, n int, inv bool) {
	if useAVX512 {
		fftSpan4AVX512(x, n, inv)
		return
	}
	fftSpan4AVX2(x, n, inv)
}

//go:noescape
func cmulAVX2(p, z, s *complex128, n int)

// cmulK runs cmulAVX512, or cmulAVX2 without AVX-512.
func cmulK(p, z, s *complex128, n int) {
	if useAVX512 {
		cmulAVX512(p, z, s, n)
		return
	}
	cmulAVX2(p, z, s, n)
}

//go:noescape
func cvtAVX2(dA, dB *float32, p *complex128, n int)

// cvtK runs cvtAVX512, or cvtAVX2 without AVX-512.
func cvtK(dA, dB *float32, p *complex128, n int) {
	if useAVX512 {
		cvtAVX512(dA, dB, p, n)
		return
	}
	cvtAVX2(dA, dB, p, n)
}

//go:noescape
func maxSqAVX2(m, b *float32, K, W, n int)

// maxSqK runs maxSqAVX512, or maxSqAVX2 without AVX-512.
func maxSqK(m, b *float32, K, W, n int) {
	if useAVX512 {
		maxSqAVX512(m, b, K, W, n)
		return
	}
	maxSqAVX2(m, b, K, W, n)
}

//go:noescape
func rowSumAVX2(dst, src *float32, offs *int, nrows, n int)

// rowSumK runs rowSumAVX512, or rowSumAVX2 without AVX-512.
func rowSumK(dst, src *float32, offs *int, nrows, n int) {
	if useAVX512 {
		rowSumAVX512(dst, src, offs, nrows, n)
		return
	}
	rowSumAVX2(dst, src, offs, nrows, n)
}

//go:noescape
func resp5AVX2(dst, b *float32, offs *int, nc, K, W, n int, wt *float32, thr2 float32, noPrune bool)

// resp5K runs resp5AVX512, or resp5AVX2 without AVX-512.
func resp5K(dst, b *float32, offs *int, nc, K, W, n int, wt *float32, thr2 float32, noPrune bool) {
	if useAVX512 {
		resp5AVX512(dst, b, offs, nc, K, W, n, wt, thr2, noPrune)
		return
	}
	resp5AVX2(dst, b, offs, nc, K, W, n, wt, thr2, noPrune)
}

//go:noescape
func fillAVX2(z *complex128, a, b *float32, n int)

// fillK runs fillAVX512, or fillAVX2 without AVX-512.
func fillK(z *complex128, a, b *float32, n int) {
	if useAVX512 {
		fillAVX512(z, a, b, n)
		return
	}
	fillAVX2(z, a, b, n)
}

//go:noescape
func mulSpan4InvAVX2(p, z, s *complex128, n int)

// mulSpan4InvK runs mulSpan4InvAVX512, or mulSpan4InvAVX2 without AVX-512.
func mulSpan4InvK(p, z, s *complex128, n int) {
	if useAVX512 {
		mulSpan4InvAVX512(p, z, s, n)
		return
	}
	mulSpan4InvAVX2(p, z, s, n)
}

//go:noescape
func prefetchLines(p *float32, n int)

// prefetch asks the processor to bring x into cache ahead of its use.
func prefetch(x []float32) {
	if !useAsm || len(x) == 0 {
		return
	}
	prefetchLines(&x[0], (len(x)+15)/16)
}
