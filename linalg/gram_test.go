package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// window draws a C×ld float32 window whose columns [c0, c0+n) hold
// correlated data with per-channel offsets: x_c(t) = o_c + a_c·s(t) + e_c(t)
// with a shared source s and independent unit noise e. Columns outside the
// range hold NaN, so a kernel that reads them fails.
func window(rng *rand.Rand, C, ld, c0, n int) []float32 {
	x := nan32((C-1)*ld + c0 + n)
	off := make([]float64, C)
	gain := make([]float64, C)
	for c := range off {
		off[c] = 3 * rng.NormFloat64()
		gain[c] = rng.NormFloat64()
	}
	for t := 0; t < n; t++ {
		s := rng.NormFloat64()
		for c := 0; c < C; c++ {
			x[c*ld+c0+t] = float32(off[c] + gain[c]*s + rng.NormFloat64())
		}
	}
	return x
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// refGram is the plain float64 reference: for each row i in rows and every
// j, (1/n) Σ_t (x_i − μ_i)(x_j − μ_j), with μ = 0 unless centred. The result
// is len(rows)×C.
func refGram(x []float64, C, ld, c0, c1 int, centred bool, rows []int) []float64 {
	n := c1 - c0
	mu := make([]float64, C)
	if centred {
		for c := range mu {
			var s float64
			for t := c0; t < c1; t++ {
				s += x[c*ld+t]
			}
			mu[c] = s / float64(n)
		}
	}
	out := make([]float64, len(rows)*C)
	xi := make([]float64, n)
	for r, i := range rows {
		for t := range xi {
			xi[t] = x[i*ld+c0+t] - mu[i]
		}
		for j := 0; j < C; j++ {
			xj := x[j*ld+c0 : j*ld+c1]
			var s float64
			for t, v := range xj {
				s += xi[t] * (v - mu[j])
			}
			out[r*C+j] = s / float64(n)
		}
	}
	return out
}

// testRows returns all rows when the reference is affordable and otherwise
// a fixed spread of rows including the first and last two.
func testRows(rng *rand.Rand, C, n int) []int {
	if C*C*n <= 64*64*60122 {
		rows := make([]int, C)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	rows := []int{0, 1, C / 3, C / 2, C - 2, C - 1}
	for range 6 {
		rows = append(rows, rng.IntN(C))
	}
	return rows
}

// relErr returns ‖got[rows] − ref‖_F / ‖ref‖_F, or ‖got[rows] − ref‖_F
// when ref is zero (a centred single sample).
func relErr(got []float64, C int, rows []int, ref []float64) float64 {
	var d, r float64
	for k, i := range rows {
		for j := 0; j < C; j++ {
			e := got[i*C+j] - ref[k*C+j]
			d += e * e
			r += ref[k*C+j] * ref[k*C+j]
		}
	}
	if r == 0 {
		return math.Sqrt(d)
	}
	return math.Sqrt(d / r)
}

func nan64(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = math.NaN()
	}
	return x
}

func checkSymmetric(t *testing.T, a []float64, C int) {
	t.Helper()
	for i := 0; i < C; i++ {
		for j := 0; j < C; j++ {
			if a[i*C+j] != a[j*C+i] || math.IsNaN(a[i*C+j]) {
				t.Fatalf("a[%d,%d] = %v, a[%d,%d] = %v", i, j, a[i*C+j], j, i, a[j*C+i])
			}
		}
	}
}

// TestGramAgainstReference checks Covariance32/64 and SecondMoment
// Add32/Add64 (one window) against refGram on the same (float32) values:
// relative Frobenius error ≤ 1e-6 for float32 and ≤ 1e-12 for float64,
// every output written (NaN-filled beforehand) and symmetric. Windows start
// at an odd column of a wider row so every split is misaligned.
func TestGramAgainstReference(t *testing.T) {
	const tol32, tol64 = 1e-6, 1e-12
	for _, C := range []int{1, 4, 64, 384} {
		for _, n := range []int{1, 4095, 4096, 4097, 60122} {
			t.Run(fmt.Sprintf("C%d_n%d", C, n), func(t *testing.T) {
				if testing.Short() && C*n > 64*60122 {
					t.Skip("large case skipped in -short")
				}
				rng := rand.New(rand.NewPCG(uint64(C), uint64(n)))
				c0, ld := 3, n+7
				x := window(rng, C, ld, c0, n)
				x64 := to64(x)
				rows := testRows(rng, C, n)
				for _, centred := range []bool{true, false} {
					ref := refGram(x64, C, ld, c0, c0+n, centred, rows)
					for _, prec := range []int{32, 64} {
						got := nan64(C * C)
						switch {
						case centred && prec == 32:
							Covariance32(got, x, C, ld, c0, c0+n)
						case centred:
							Covariance64(got, x64, C, ld, c0, c0+n)
						case prec == 32:
							m := NewSecondMoment(nil, C)
							m.Add32(x, ld, c0, c0+n)
							m.ResultTo(got)
						default:
							m := NewSecondMoment(nil, C)
							m.Add64(x64, ld, c0, c0+n)
							m.ResultTo(got)
						}
						checkSymmetric(t, got, C)
						tol := tol32
						if prec == 64 {
							tol = tol64
						}
						e := relErr(got, C, rows, ref)
						t.Logf("centred=%v float%d: relative error %.3g", centred, prec, e)
						if !(e <= tol) {
							t.Errorf("centred=%v float%d: relative error %.3g > %g", centred, prec, e, tol)
						}
					}
				}
			})
		}
	}
}

// TestGramMisaligned checks that a window read at any column offset and row
// stride gives bit-for-bit the result of the same values copied to a
// contiguous, aligned slice, and that the result does not depend on
// GOMAXPROCS.
func TestGramMisaligned(t *testing.T) {
	for _, C := range []int{1, 5, 33} {
		for _, n := range []int{1, 17, 4097, 9000} {
			rng := rand.New(rand.NewPCG(uint64(C), uint64(n)+99))
			contig := window(rng, C, n, 0, n)
			contig64 := to64(contig)
			want32, want64 := make([]float64, C*C), make([]float64, C*C)
			Covariance32(want32, contig, C, n, 0, n)
			Covariance64(want64, contig64, C, n, 0, n)
			wantM := NewSecondMoment(nil, C)
			wantM.Add32(contig, n, 0, n)
			for _, c0 := range []int{1, 2, 3, 5, 4095} {
				ld := c0 + n + c0%3
				x := nan32((C-1)*ld + c0 + n)
				for c := 0; c < C; c++ {
					copy(x[c*ld+c0:], contig[c*n:(c+1)*n])
				}
				got32, got64 := nan64(C*C), nan64(C*C)
				Covariance32(got32, x, C, ld, c0, c0+n)
				Covariance64(got64, to64(x), C, ld, c0, c0+n)
				m := NewSecondMoment(nil, C)
				m.Add32(x, ld, c0, c0+n)
				if !slices.Equal(got32, want32) || !slices.Equal(got64, want64) ||
					!slices.Equal(result(m), result(wantM)) {
					t.Errorf("C=%d n=%d c0=%d ld=%d: result differs from the contiguous copy", C, n, c0, ld)
				}
			}
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				got := nan64(C * C)
				Covariance32(got, contig, C, n, 0, n)
				if !slices.Equal(got, want32) {
					t.Errorf("C=%d n=%d: GOMAXPROCS=1 differs", C, n)
				}
			}()
		}
	}
}

// TestGramSplitError shows the point of split products: the float32 error
// of a 60000-sample window is no more than twice that of a 4096-sample
// window with the same statistics (a single float32 running sum would grow
// its error with n).
func TestGramSplitError(t *testing.T) {
	const C = 64
	errOf := func(n int) float64 {
		rng := rand.New(rand.NewPCG(11, uint64(n)))
		x := window(rng, C, n, 0, n)
		rows := testRows(rng, C, n)
		ref := refGram(to64(x), C, n, 0, n, false, rows)
		m := NewSecondMoment(nil, C)
		m.Add32(x, n, 0, n)
		return relErr(result(m), C, rows, ref)
	}
	e4096, e60000 := errOf(4096), errOf(60000)
	t.Logf("relative error: n=4096 %.3g, n=60000 %.3g", e4096, e60000)
	if !(e60000 <= 2*e4096) {
		t.Errorf("n=60000 error %.3g > 2 × n=4096 error %.3g", e60000, e4096)
	}
}

// TestSecondMomentWindows checks the mean over windows of X Xᵀ/n with
// windows of different lengths, Windows, Reset, and the NaN result of no
// windows.
func TestSecondMomentWindows(t *testing.T) {
	const C = 7
	rng := rand.New(rand.NewPCG(21, 22))
	m := NewSecondMoment(nil, C)
	if got := result(m); !math.IsNaN(got[0]) || !math.IsNaN(got[C*C-1]) || m.Windows() != 0 {
		t.Fatalf("empty: Result[0] = %v, Windows = %d", got[0], m.Windows())
	}
	rows := testRows(rng, C, 1)
	want := make([]float64, C*C)
	lens := []int{1, 5000, 4096, 300}
	for _, n := range lens {
		ld := n + 2
		x := window(rng, C, ld, 1, n)
		m.Add32(x, ld, 1, 1+n)
		ref := refGram(to64(x), C, ld, 1, 1+n, false, rows)
		for i := range want {
			want[i] += ref[i] / float64(len(lens))
		}
	}
	if m.Windows() != len(lens) {
		t.Errorf("Windows = %d, want %d", m.Windows(), len(lens))
	}
	if e := relErr(result(m), C, rows, want); !(e <= 1e-6) {
		t.Errorf("relative error %.3g", e)
	}
	m.Reset()
	if m.Windows() != 0 || !math.IsNaN(result(m)[0]) {
		t.Error("Reset did not empty the accumulator")
	}
	x := window(rng, C, 10, 0, 10)
	m.Add64(to64(x), 10, 0, 10)
	if e := relErr(result(m), C, rows, refGram(to64(x), C, 10, 0, 10, false, rows)); !(e <= 1e-12) {
		t.Errorf("after Reset: relative error %.3g", e)
	}
}

func TestGramPanics(t *testing.T) {
	x := make([]float32, 40)
	cases := map[string]func(){
		"empty range":  func() { Covariance32(make([]float64, 4), x, 2, 20, 5, 5) },
		"c1 > ld":      func() { Covariance32(make([]float64, 4), x, 2, 20, 0, 21) },
		"negative c0":  func() { Covariance32(make([]float64, 4), x, 2, 20, -1, 3) },
		"short x":      func() { Covariance64(make([]float64, 4), make([]float64, 39), 2, 20, 0, 20) },
		"short dst":    func() { Covariance32(make([]float64, 3), x, 2, 20, 0, 20) },
		"zero C":       func() { NewSecondMoment(nil, 0) },
		"add short x":  func() { NewSecondMoment(nil, 3).Add32(x, 20, 0, 1) },
		"result short": func() { NewSecondMoment(nil, 2).ResultTo(make([]float64, 3)) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

func ExampleSecondMoment() {
	// Two channels, two windows of a longer row-major buffer (ld = 6).
	x := []float32{
		1, 2, 3, 4, 5, 6,
		1, 0, 1, 0, 1, 0,
	}
	m := NewSecondMoment(nil, 2)
	m.Add32(x, 6, 0, 2) // columns 0, 1: X Xᵀ/2 = [[2.5, 0.5], [0.5, 0.5]]
	m.Add32(x, 6, 2, 6) // columns 2…5: X Xᵀ/4 = [[21.5, 2], [2, 0.5]]
	fmt.Println(m.Windows(), result(m))
	// Output: 2 [12 1.25 1.25 0.5]
}

// result returns m's Result, panicking on a device error.
func result(m *SecondMoment) []float64 {
	r, err := m.Result()
	if err != nil {
		panic(err)
	}
	return r
}
