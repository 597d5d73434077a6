package linalg

import (
	"fmt"
	"math"
)

// SecondMoment accumulates Kilosort4's whitening statistic, the mean over
// windows of the uncentred second moment of each window:
//
//	CC = (1/k) Σ_w X_w X_wᵀ / n_w
//
// where X_w is the C×n_w block of window w (no centring). Each window's
// product is formed as in [Covariance32] (split products, float64
// accumulation of partial sums), divided by n_w and added in float64 to the
// running sum. The zero value is not usable; call [NewSecondMoment]. A
// SecondMoment reuses its scratch between windows and is not safe for
// concurrent use.
type SecondMoment struct {
	c   int
	k   int
	sum []float64 // Σ_w X_w X_wᵀ / n_w, upper triangle
	acc []float64 // one window's X Xᵀ, upper triangle
	w32 *gramWork[float32]
	w64 *gramWork[float64]
}

// NewSecondMoment returns an empty accumulator for C channels. It panics if
// C < 1.
func NewSecondMoment(C int) *SecondMoment {
	if C < 1 {
		panic(fmt.Sprintf("linalg: NewSecondMoment: C = %d", C))
	}
	return &SecondMoment{c: C, sum: make([]float64, C*C), acc: make([]float64, C*C)}
}

// C returns the number of channels.
func (m *SecondMoment) C() int { return m.c }

// Windows returns the number of windows added since creation or the last
// Reset.
func (m *SecondMoment) Windows() int { return m.k }

// Reset forgets all windows; scratch is kept.
func (m *SecondMoment) Reset() {
	clear(m.sum)
	m.k = 0
}

func (m *SecondMoment) addAcc(n int) {
	inv := 1 / float64(n)
	for i := 0; i < m.c; i++ {
		s := m.sum[i*m.c+i : i*m.c+m.c]
		for j, v := range m.acc[i*m.c+i : i*m.c+m.c] {
			s[j] += v * inv
		}
	}
	m.k++
}

// Add32 adds the window made of columns [c0, c1) of the C×ld row-major
// float32 slice x. Products are float32 over at most 256 samples, summed in
// float64 (see [Covariance32]). It panics unless 0 ≤ c0 < c1 ≤ ld and
// len(x) ≥ (C−1)·ld+c1.
func (m *SecondMoment) Add32(x []float32, ld, c0, c1 int) {
	checkWindow("SecondMoment.Add32", len(x), m.c, ld, c0, c1)
	if m.w32 == nil {
		m.w32 = newGramWork[float32](m.c)
	}
	clear(m.acc)
	m.w32.add(m.acc, x, ld, c0, c1, nil)
	m.addAcc(c1 - c0)
}

// Add64 is [SecondMoment.Add32] for float64 samples, computed in float64.
func (m *SecondMoment) Add64(x []float64, ld, c0, c1 int) {
	checkWindow("SecondMoment.Add64", len(x), m.c, ld, c0, c1)
	if m.w64 == nil {
		m.w64 = newGramWork[float64](m.c)
	}
	clear(m.acc)
	m.w64.add(m.acc, x, ld, c0, c1, nil)
	m.addAcc(c1 - c0)
}

// Result returns the C×C row-major mean second moment over the windows
// added. With no windows it is all NaN, as Kilosort4's 0/0 (a recording of
// one batch has no whitening windows); [LocalZCA] rejects it.
func (m *SecondMoment) Result() []float64 {
	dst := make([]float64, m.c*m.c)
	m.ResultTo(dst)
	return dst
}

// ResultTo writes [SecondMoment.Result] to dst, which must hold C*C values.
func (m *SecondMoment) ResultTo(dst []float64) {
	if len(dst) != m.c*m.c {
		panic(fmt.Sprintf("linalg: SecondMoment.ResultTo: len(dst) = %d, want C*C = %d", len(dst), m.c*m.c))
	}
	if m.k == 0 {
		for i := range dst {
			dst[i] = math.NaN()
		}
		return
	}
	mirror(dst, m.sum, m.c, 1/float64(m.k))
}
