package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// randomWhitening returns a sparse operator with random columns (repeats
// allowed) and values in [-1, 1).
func randomWhitening(rng *rand.Rand, C, K int) *Whitening {
	w := &Whitening{C: C, K: K, Index: make([]int32, C*K), Value: make([]float32, C*K)}
	for i := range w.Index {
		w.Index[i] = int32(rng.IntN(C))
		w.Value[i] = float32(2*rng.Float64() - 1)
	}
	return w
}

func randomFloat32(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

func nan32(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.NaN())
	}
	return x
}

// TestWhiteningApply compares Apply with the float64 product of the dense
// matrix (from Dense) and the same float32 input. Each output may differ
// from the exact sum by at most (K+1)·2⁻²⁴·Σ_j|v_j·s_j| (the float32 summation
// bound), and NaN-filled outputs must all be written.
func TestWhiteningApply(t *testing.T) {
	cases := []struct{ C, K, T int }{
		{1, 1, 1}, {1, 1, 7}, {2, 2, 1}, {5, 3, 9}, {7, 4, 1023}, {9, 5, 1024}, {17, 7, 1025},
		{33, 8, 2049}, {40, 32, 3001}, {64, 32, 1}, {384, 32, 300},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("C%d_K%d_T%d", tc.C, tc.K, tc.T), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.C), uint64(tc.T*100+tc.K)))
			w := randomWhitening(rng, tc.C, tc.K)
			src := randomFloat32(rng, tc.C*tc.T)
			dst := nan32(tc.C * tc.T)
			w.Apply(dst, src, tc.T)
			d := w.Dense()
			bound := float64(tc.K+1) * 0x1p-24
			for c := 0; c < tc.C; c++ {
				for tt := 0; tt < tc.T; tt++ {
					var ref, abs float64
					for i := 0; i < tc.C; i++ {
						ref += d[c*tc.C+i] * float64(src[i*tc.T+tt])
					}
					for j := 0; j < tc.K; j++ {
						abs += math.Abs(float64(w.Value[c*tc.K+j]) * float64(src[int(w.Index[c*tc.K+j])*tc.T+tt]))
					}
					got := float64(dst[c*tc.T+tt])
					if !(math.Abs(got-ref) <= bound*abs) {
						t.Fatalf("dst[%d,%d] = %v, want %v (bound %g)", c, tt, got, ref, bound*abs)
					}
				}
			}
		})
	}
}

// TestWhiteningApplyDeterministic checks that the result does not depend on
// the number of goroutines, and that extra capacity beyond C*T is untouched.
func TestWhiteningApplyDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	C, K, T := 100, 32, 2500
	w := randomWhitening(rng, C, K)
	src := randomFloat32(rng, C*T)
	a := nan32(C*T + 3)
	w.Apply(a, src, T)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	b := nan32(C * T)
	w.Apply(b, src, T)
	if !slices.Equal(a[:C*T], b) {
		t.Fatal("Apply with GOMAXPROCS=1 differs")
	}
	for _, v := range a[C*T:] {
		if !math.IsNaN(float64(v)) {
			t.Fatal("Apply wrote beyond C*T")
		}
	}
}

func TestWhiteningDenseRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, C := range []int{1, 2, 9, 50} {
		d := make([]float64, C*C)
		for i := range d {
			if rng.IntN(3) == 0 {
				d[i] = float64(float32(rng.NormFloat64()))
			}
		}
		w := NewWhiteningFromDense(d, C)
		if got := w.Dense(); !slices.Equal(got, d) {
			t.Errorf("C=%d: Dense(NewWhiteningFromDense(d)) != d", C)
		}
	}
	// An all-zero matrix still has K = 1.
	w := NewWhiteningFromDense(make([]float64, 4), 2)
	if w.K != 1 || !slices.Equal(w.Dense(), make([]float64, 4)) {
		t.Errorf("zero matrix: K = %d, Dense = %v", w.K, w.Dense())
	}
}

func TestWhiteningApplyPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	w := randomWhitening(rng, 4, 2)
	buf := make([]float32, 4*10+5)
	bad := &Whitening{C: 2, K: 1, Index: []int32{0, 2}, Value: []float32{1, 1}}
	cases := map[string]func(){
		"overlap":   func() { w.Apply(buf[5:], buf[:40], 10) },
		"same":      func() { w.Apply(buf[:40], buf[:40], 10) },
		"short dst": func() { w.Apply(make([]float32, 39), make([]float32, 40), 10) },
		"short src": func() { w.Apply(make([]float32, 40), make([]float32, 39), 10) },
		"bad index": func() { bad.Apply(make([]float32, 2), make([]float32, 2), 1) },
		"bad len":   func() { (&Whitening{C: 2, K: 2, Index: make([]int32, 3), Value: make([]float32, 4)}).Dense() },
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

func BenchmarkWhiteningApply(b *testing.B) {
	const C, K, T = 384, 32, 60122
	rng := rand.New(rand.NewPCG(1, 2))
	w := randomWhitening(rng, C, K)
	// Local structure like Kilosort4's: neighbours of c are near c.
	for c := 0; c < C; c++ {
		for j := 0; j < K; j++ {
			w.Index[c*K+j] = int32(min(max(c-K/2, 0), C-K) + j)
		}
	}
	src := randomFloat32(rng, C*T)
	dst := make([]float32, C*T)
	b.SetBytes(int64(2 * 4 * C * T))
	for b.Loop() {
		w.Apply(dst, src, T)
	}
	b.ReportMetric(float64(T)/30000/(b.Elapsed().Seconds()/float64(b.N)), "x_realtime")
	b.ReportMetric(2*float64(C*K*T)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// TestWhiteningApplyAllocs checks that Apply allocates nothing once warm,
// on one goroutine and on several, and that concurrent calls on one
// Whitening give each its own result.
func TestWhiteningApplyAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const C, K, T = 96, 16, 1500
	w := randomWhitening(rng, C, K)
	src := randomFloat32(rng, C*T)
	dst := make([]float32, C*T)
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		w.Apply(dst, src, T)
		if a := testing.AllocsPerRun(20, func() { w.Apply(dst, src, T) }); a != 0 {
			t.Errorf("GOMAXPROCS %d: Apply allocates %v times per call", procs, a)
		}
		runtime.GOMAXPROCS(old)
	}
	want := slices.Clone(dst)
	var wg sync.WaitGroup
	outs := make([][]float32, 4)
	for i := range outs {
		outs[i] = make([]float32, C*T)
		wg.Go(func() { w.Apply(outs[i], src, T) })
	}
	wg.Wait()
	for i, o := range outs {
		if !slices.Equal(o, want) {
			t.Errorf("concurrent call %d differs", i)
		}
	}
}
