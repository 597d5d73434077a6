package preprocess

import (
	"fmt"
	"math"
)

// normalize returns copies of b and a, zero-padded to a common length n,
// divided by a[0]. It panics if a[0] is zero or either is empty.
func normalize(b, a []float64) (bn, an []float64) {
	if len(a) == 0 || len(b) == 0 {
		panic("preprocess: empty filter coefficients")
	}
	if a[0] == 0 {
		panic("preprocess: filter with a[0] = 0")
	}
	n := max(len(a), len(b))
	bn, an = make([]float64, n), make([]float64, n)
	for i, v := range b {
		bn[i] = v / a[0]
	}
	for i, v := range a {
		an[i] = v / a[0]
	}
	return bn, an
}

// LFilter filters x by the rational transfer function b/a in the
// transposed direct form II, as scipy.signal.lfilter(b, a, x, zi=zi)
// does, and returns the output and the final state. zi holds
// max(len(a), len(b)) − 1 initial conditions, or is nil for zero state.
// It panics if a[0] = 0 or zi has the wrong length.
func LFilter(b, a, x, zi []float64) (y, zf []float64) {
	b, a = normalize(b, a)
	m := len(a) - 1
	z := make([]float64, m)
	if zi != nil {
		if len(zi) != m {
			panic(fmt.Sprintf("preprocess: LFilter: %d initial conditions, want %d", len(zi), m))
		}
		copy(z, zi)
	}
	y = make([]float64, len(x))
	if m == 0 {
		for n, v := range x {
			y[n] = b[0] * v
		}
		return y, z
	}
	for n, v := range x {
		out := b[0]*v + z[0]
		for i := 0; i < m-1; i++ {
			z[i] = b[i+1]*v + z[i+1] - a[i+1]*out
		}
		z[m-1] = b[m]*v - a[m]*out
		y[n] = out
	}
	return y, z
}

// LFilterZi returns the steady-state initial conditions of LFilter for a
// unit step input, as scipy.signal.lfilter_zi: the solution of
// (I − Aᵀ)·zi = b[1:] − a[1:]·b[0] with A the companion matrix of a
// (after normalising by a[0]).
func LFilterZi(b, a []float64) []float64 {
	b, a = normalize(b, a)
	m := len(a) - 1
	if m == 0 {
		return nil
	}
	// Companion matrix: first row −a[1:], ones on the subdiagonal.
	// M = I − Aᵀ, row-major m×m.
	M := make([]float64, m*m)
	for i := range m {
		M[i*m+i] = 1
		// Aᵀ[i][0] = A[0][i] = −a[i+1]; Aᵀ[i][i+1] = A[i+1][i] = 1.
		M[i*m+0] += a[i+1]
		if i+1 < m {
			M[i*m+i+1] -= 1
		}
	}
	rhs := make([]float64, m)
	for i := range m {
		rhs[i] = b[i+1] - a[i+1]*b[0]
	}
	return solve(M, rhs, m)
}

// solve solves the m×m row-major system M·x = r by Gaussian elimination
// with partial pivoting, overwriting M and r. It panics if M is singular.
func solve(M, r []float64, m int) []float64 {
	for k := range m {
		p := k
		for i := k + 1; i < m; i++ {
			if math.Abs(M[i*m+k]) > math.Abs(M[p*m+k]) {
				p = i
			}
		}
		if M[p*m+k] == 0 {
			panic("preprocess: singular system in LFilterZi")
		}
		if p != k {
			for j := range m {
				M[k*m+j], M[p*m+j] = M[p*m+j], M[k*m+j]
			}
			r[k], r[p] = r[p], r[k]
		}
		for i := k + 1; i < m; i++ {
			f := M[i*m+k] / M[k*m+k]
			for j := k; j < m; j++ {
				M[i*m+j] -= f * M[k*m+j]
			}
			r[i] -= f * r[k]
		}
	}
	x := make([]float64, m)
	for i := m - 1; i >= 0; i-- {
		s := r[i]
		for j := i + 1; j < m; j++ {
			s -= M[i*m+j] * x[j]
		}
		x[i] = s / M[i*m+i]
	}
	return x
}

// FiltFilt applies b/a forward and backward to x as
// scipy.signal.filtfilt(b, a, x) does with its defaults: x is extended at
// each end by an odd reflection of padlen = 3·max(len(a), len(b)) samples,
// filtered forward from the initial state LFilterZi·x_ext[0], the result
// filtered backward from LFilterZi·(its last value), and the extension
// cut off again. It panics if len(x) ≤ padlen.
func FiltFilt(b, a, x []float64) []float64 {
	edge := 3 * max(len(a), len(b))
	n := len(x)
	if n <= edge {
		panic(fmt.Sprintf("preprocess: FiltFilt: %d samples, need more than padlen = %d", n, edge))
	}
	ext := make([]float64, n+2*edge)
	for i := range edge {
		// odd_ext: 2·x[0] − x[edge−i] on the left, 2·x[n−1] − x[n−2−i] on the right.
		ext[i] = 2*x[0] - x[edge-i]
		ext[n+edge+i] = 2*x[n-1] - x[n-2-i]
	}
	copy(ext[edge:], x)
	zi := LFilterZi(b, a)
	z := make([]float64, len(zi))
	for i, v := range zi {
		z[i] = v * ext[0]
	}
	y, _ := LFilter(b, a, ext, z)
	reverse(y)
	for i, v := range zi {
		z[i] = v * y[0]
	}
	y, _ = LFilter(b, a, y, z)
	reverse(y)
	return y[edge : edge+n]
}

// reverse reverses x in place.
func reverse(x []float64) {
	for i, j := 0, len(x)-1; i < j; i, j = i+1, j-1 {
		x[i], x[j] = x[j], x[i]
	}
}
