package linalg

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"dspk/internal/par"
)

// gramBlockRows is the number of rows of x whose products one task sums
// in PCABasis. Partial sums are kept per block and added in block order,
// so the result does not depend on the number of goroutines.
const gramBlockRows = 4096

// PCABasis returns the k leading right singular vectors of the n×d
// row-major matrix x, without centring the columns (what sklearn's
// TruncatedSVD computes), as the rows of the k×d row-major slice basis,
// and sv2[i] = σᵢ², the squared singular values, in descending order.
//
// The vectors are the eigenvectors ([EigSym]) of the d×d Gram matrix
// xᵀx, which is accumulated in float64 in blocks of gramBlockRows rows (in
// parallel, summed in a fixed order, so the bits do not depend on
// GOMAXPROCS).
//
// Sign convention (EigSym's): each returned vector's entry of largest
// magnitude is positive (the lowest index decides among equal
// magnitudes). This is the convention of sklearn's svd_flip with
// u_based_decision=False, which TruncatedSVD uses.
//
// PCABasis panics if len(x) != n·d, d < 1, k < 1 or k > d. With n = 0 the
// Gram matrix is zero and the basis is an arbitrary orthonormal one; with
// NaN or Inf in x every returned value is NaN.
func PCABasis(x []float32, n, d, k int) (basis, sv2 []float64) {
	if d < 1 || n < 0 || len(x) != n*d {
		panic(fmt.Sprintf("linalg: PCABasis of %d values as %d×%d", len(x), n, d))
	}
	if k < 1 || k > d {
		panic(fmt.Sprintf("linalg: PCABasis asked for %d vectors of dimension %d", k, d))
	}
	g := gram32(x, n, d)
	vals, vecs := EigSym(g, d)
	return vecs[: k*d : k*d], vals[:k:k]
}

// gram32 returns xᵀx (d×d, row-major, both triangles filled) for the n×d
// row-major float32 matrix x, accumulated in float64. Rows are processed
// in blocks of gramBlockRows by up to GOMAXPROCS goroutines; the block
// sums are added in block order, so the result is the same for any
// number of goroutines. It panics if len(x) != n·d.
func gram32(x []float32, n, d int) []float64 {
	if d < 1 || n < 0 || len(x) != n*d {
		panic(fmt.Sprintf("linalg: gram32 of %d values as %d×%d", len(x), n, d))
	}
	nb := (n + gramBlockRows - 1) / gramBlockRows
	parts := make([][]float64, nb)
	nw := par.Workers(nb)
	bufs := make([][]float64, nw)
	par.Each(nb, nw, func(g, b int) {
		if bufs[g] == nil {
			bufs[g] = make([]float64, gramBlockRows*d)
		}
		r0, r1 := b*gramBlockRows, min((b+1)*gramBlockRows, n)
		rows := r1 - r0
		a := bufs[g][:rows*d]
		for i, v := range x[r0*d : r1*d] {
			a[i] = float64(v)
		}
		c := make([]float64, d*d)
		blas64.Syrk(blas.Trans, 1,
			blas64.General{Rows: rows, Cols: d, Stride: d, Data: a},
			0, blas64.Symmetric{N: d, Stride: d, Data: c, Uplo: blas.Upper})
		parts[b] = c
	})
	g := make([]float64, d*d)
	for _, p := range parts {
		for i := range d {
			for j := i; j < d; j++ {
				g[i*d+j] += p[i*d+j]
			}
		}
	}
	for i := range d {
		for j := i + 1; j < d; j++ {
			g[j*d+i] = g[i*d+j]
		}
	}
	return g
}
