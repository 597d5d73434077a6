package linalg

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

func benchGramFlops(b *testing.B, C, n int) {
	// Upper triangle: C(C+1)/2 dot products of n multiply-adds.
	flops := float64(C*(C+1)/2) * float64(n) * 2
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	// At 30 kHz: seconds of recording per second of compute.
	b.ReportMetric(float64(n)/30000/(b.Elapsed().Seconds()/float64(b.N)), "x_realtime")
}

func BenchmarkCovariance32(b *testing.B) {
	const C, n = 384, 60000
	rng := rand.New(rand.NewPCG(1, 2))
	x := randomFloat32(rng, C*n)
	dst := make([]float64, C*C)
	b.SetBytes(int64(4 * C * n))
	for b.Loop() {
		Covariance32(dst, x, C, n, 0, n)
	}
	benchGramFlops(b, C, n)
}

func BenchmarkCovariance64(b *testing.B) {
	const C, n = 384, 60000
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, C*n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	dst := make([]float64, C*C)
	b.SetBytes(int64(8 * C * n))
	for b.Loop() {
		Covariance64(dst, x, C, n, 0, n)
	}
	benchGramFlops(b, C, n)
}

func BenchmarkSecondMomentAdd32(b *testing.B) {
	const C, n = 384, 60000
	rng := rand.New(rand.NewPCG(1, 2))
	x := randomFloat32(rng, C*n)
	m := NewSecondMoment(nil, C)
	m.Add32(x, n, 0, n) // allocate scratch
	b.SetBytes(int64(4 * C * n))
	for b.Loop() {
		m.Add32(x, n, 0, n)
	}
	benchGramFlops(b, C, n)
}

// BenchmarkGemmBaseline is the comparison point of BenchmarkCovariance32:
// gonum's blas32.Gemm forming the full X·Xᵀ (twice the arithmetic of the
// upper triangle; GFLOP/s counts the full product).
func BenchmarkGemmBaseline(b *testing.B) {
	const C, n = 384, 60000
	rng := rand.New(rand.NewPCG(1, 2))
	x := blas32.General{Rows: C, Cols: n, Stride: n, Data: randomFloat32(rng, C*n)}
	c := blas32.General{Rows: C, Cols: C, Stride: C, Data: make([]float32, C*C)}
	for b.Loop() {
		blas32.Gemm(blas.NoTrans, blas.Trans, 1, x, x, 0, c)
	}
	b.ReportMetric(2*float64(C*C)*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
