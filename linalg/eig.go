package linalg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// EigSym returns the eigenvalues and eigenvectors of the n×n symmetric
// row-major matrix a (only its upper triangle is read), computed by gonum's
// mat.EigenSym in float64.
//
// vals holds the n eigenvalues in descending order. vecs is n×n row-major
// with ROW k (vecs[k*n:(k+1)*n]) the unit eigenvector of vals[k], so that
// a = Σ_k vals[k]·v_k·v_kᵀ. Each vector's sign is fixed: its entry of
// largest magnitude is positive, and among entries of exactly equal
// magnitude the one of lowest index decides. (Near-equal magnitudes can
// flip the sign under rounding; the order of vectors of equal eigenvalues
// is unspecified.)
//
// EigSym panics unless n ≥ 1 and len(a) == n*n. If a holds NaN or Inf, or
// the factorization fails, every value of vals and vecs is NaN.
func EigSym(a []float64, n int) (vals, vecs []float64) {
	if n < 1 || len(a) != n*n {
		panic(fmt.Sprintf("linalg: EigSym: n = %d, len(a) = %d, want n ≥ 1 and n*n", n, len(a)))
	}
	vals, vecs = make([]float64, n), make([]float64, n*n)
	if !allFinite(a) || !eigSymTo(vals, vecs, a, n) {
		fillNaN(vals)
		fillNaN(vecs)
	}
	return vals, vecs
}

// eigSymTo is EigSym into vals and vecs; it reports false if the
// factorization fails.
func eigSymTo(vals, vecs, a []float64, n int) bool {
	return newEigWork(n).eigSym(vals, vecs, a)
}

// eigWork is the scratch of eigendecompositions of n×n symmetric
// matrices, reused from one to the next (a local whitening makes one per
// channel).
type eigWork struct {
	n    int
	a, w []float64
	work []float64
}

// newEigWork returns the scratch for n×n matrices, its LAPACK workspace of
// the size LAPACK asks for.
func newEigWork(n int) *eigWork {
	e := &eigWork{n: n, a: make([]float64, n*n), w: make([]float64, n)}
	q := []float64{0}
	lapack64.Syev(lapack.EVCompute, e.sym(), e.w, q, -1)
	e.work = make([]float64, int(q[0]))
	return e
}

// sym is the scratch matrix as LAPACK's upper-stored symmetric matrix.
func (e *eigWork) sym() blas64.Symmetric {
	return blas64.Symmetric{N: e.n, Stride: e.n, Uplo: blas.Upper, Data: e.a}
}

// eigSym is eigSymTo on e's scratch. It is gonum's mat.EigenSym step for
// step — the upper triangle copied below zeros, one LAPACK Dsyev with the
// workspace size it asks for, the eigenvectors the columns of the result
// — without allocating, so the results are the same bits.
func (e *eigWork) eigSym(vals, vecs, a []float64) bool {
	n := e.n
	for i := range n {
		row := e.a[i*n : (i+1)*n]
		clear(row[:i])
		copy(row[i:], a[i*n+i:(i+1)*n])
	}
	if !lapack64.Syev(lapack.EVCompute, e.sym(), e.w, e.work, len(e.work)) {
		return false
	}
	for k := range n {
		vals[k] = e.w[n-1-k]
		row := vecs[k*n : (k+1)*n]
		for i := range n {
			row[i] = e.a[i*n+n-1-k]
		}
		fixSign(row)
	}
	return true
}

// TopRightSingular returns the k leading right singular vectors of the n×d
// row-major matrix x (gonum's thin SVD, float64) as a k×d row-major slice,
// row r the vector of the r-th largest singular value, signs fixed as in
// [EigSym]. It panics unless 1 ≤ k ≤ min(n, d) and len(x) == n*d; if x
// holds NaN or Inf or the SVD fails, the result is all NaN.
func TopRightSingular(x []float64, n, d, k int) []float64 {
	if n < 1 || d < 1 || len(x) != n*d || k < 1 || k > min(n, d) {
		panic(fmt.Sprintf("linalg: TopRightSingular: n=%d d=%d k=%d len(x)=%d", n, d, k, len(x)))
	}
	out := make([]float64, k*d)
	var svd mat.SVD
	if !allFinite(x) || !svd.Factorize(mat.NewDense(n, d, append([]float64(nil), x...)), mat.SVDThinV) {
		fillNaN(out)
		return out
	}
	var v mat.Dense
	svd.VTo(&v)
	for r := 0; r < k; r++ {
		row := out[r*d : (r+1)*d]
		mat.Col(row, r, &v)
		fixSign(row)
	}
	return out
}

// fixSign negates v unless its first entry of largest magnitude is
// positive.
func fixSign(v []float64) {
	best := 0
	for i, e := range v {
		if math.Abs(e) > math.Abs(v[best]) {
			best = i
		}
	}
	if v[best] < 0 {
		for i := range v {
			v[i] = -v[i]
		}
	}
}

func allFinite(a []float64) bool {
	for _, v := range a {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func fillNaN(a []float64) {
	for i := range a {
		a[i] = math.NaN()
	}
}
