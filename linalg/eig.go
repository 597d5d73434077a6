package linalg

import (
	"fmt"
	"math"

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
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(n, append([]float64(nil), a...)), true) {
		return false
	}
	asc := es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	for k := 0; k < n; k++ {
		vals[k] = asc[n-1-k]
		row := vecs[k*n : (k+1)*n]
		mat.Col(row, n-1-k, &v)
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
