//go:build !amd64 || noasm

package detect

// Without the amd64 assembly only the Go kernels exist: every vector entry
// point reports that it did nothing.

// haveAsm reports whether this build and CPU have the vector kernels.
const haveAsm = false

// haveAVX512 reports whether this build and CPU have the AVX-512 kernels.
const haveAVX512 = false

// useAsm selects the vector kernels and useAVX512 the AVX-512 ones;
// always false here.
var useAsm, useAVX512 = false, false

func fftForwardVec(f *fft4, x []complex128) bool    { return false }
func fftInverseVec(f *fft4, x []complex128) bool    { return false }
func cmulVec(p, z, s []complex128) bool             { return false }
func cvtVec(dA, dB []float32, p []complex128) int   { return 0 }
func maxSqVec(m, b []float32, K, W int) int         { return 0 }
func blockMaxVec(mb, m []float32) int               { return 0 }
func rowSumVec(dst, src []float32, offs []int) bool { return false }

func rowSumOffs(dst, src []float32, offs rowOffs) bool { return false }

func respOffs(dst, b []float32, offs rowOffs, K, S, W, n int, wt []float32, thr2 float32, noPrune bool) bool {
	return false
}

func finePassVec(blks []int32, cols []uint32, pass []uint64, m []float32, offs rowOffs, W int, thr2 float32, noPrune bool) (int, bool) {
	return 0, false
}

func passBitsVec(bits []uint64, v []float32, thr2 float32) bool { return false }

func chooseVec(out, resp []float32, K int, thr2, c float32, noPrune bool) bool { return false }

func fillVec(z []complex128, a, b []float32) int { return 0 }

func mulInverseVec(f *fft4, p, z, s []complex128) bool { return false }

func fftForwardTVec(f *fft4, x []complex128) bool { return false }

func mulInverseCvtVec(f *fft4, da, db []float32, p, z, s []complex128) bool { return false }

// prefetch does nothing without the assembly.
func prefetch(x []float32) {}
