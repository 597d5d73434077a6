package linalg

import (
	"fmt"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"

	"dspk/internal/par"
)

// Whitening is a sparse whitening operator with K non-zeros per row, as
// Kilosort4's local ZCA produces (K = 32): row c of the dense matrix has
// Value[c*K+j] in column Index[c*K+j].
type Whitening struct {
	// C is the number of channels (rows and columns of the dense matrix).
	C int
	// K is the number of non-zeros stored per row.
	K int
	// Index holds the column of each stored entry, C*K values.
	Index []int32
	// Value holds the stored entries, C*K values.
	Value []float32
}

// check panics unless w is well formed: C, K ≥ 0, C*K indices and values,
// every index in [0, C).
func (w *Whitening) check() {
	if w.C < 0 || w.K < 0 {
		panic(fmt.Sprintf("linalg: Whitening with C=%d K=%d", w.C, w.K))
	}
	if len(w.Index) != w.C*w.K || len(w.Value) != w.C*w.K {
		panic(fmt.Sprintf("linalg: Whitening C=%d K=%d has %d indices and %d values, want %d",
			w.C, w.K, len(w.Index), len(w.Value), w.C*w.K))
	}
	for i, v := range w.Index {
		if v < 0 || int(v) >= w.C {
			panic(fmt.Sprintf("linalg: Whitening index %d (row %d) is %d, outside [0, %d)", i, i/max(w.K, 1), v, w.C))
		}
	}
}

// Dense returns the C×C row-major dense matrix of w as float64. Entries that
// share a row and column are summed.
func (w *Whitening) Dense() []float64 {
	w.check()
	d := make([]float64, w.C*w.C)
	for c := 0; c < w.C; c++ {
		for j := 0; j < w.K; j++ {
			d[c*w.C+int(w.Index[c*w.K+j])] += float64(w.Value[c*w.K+j])
		}
	}
	return d
}

// NewWhiteningFromDense returns the sparse operator of the C×C row-major
// matrix d: K is the largest number of non-zeros in a row (at least 1), each
// row lists its non-zeros in increasing column order (rounded to float32)
// and is padded with zero values in its own column. It panics if
// len(d) != C*C.
func NewWhiteningFromDense(d []float64, C int) *Whitening {
	if C < 0 || len(d) != C*C {
		panic(fmt.Sprintf("linalg: NewWhiteningFromDense: len(d) = %d, want C*C = %d", len(d), C*C))
	}
	k := 1
	for c := 0; c < C; c++ {
		n := 0
		for _, v := range d[c*C : c*C+C] {
			if v != 0 {
				n++
			}
		}
		k = max(k, n)
	}
	w := &Whitening{C: C, K: k, Index: make([]int32, C*k), Value: make([]float32, C*k)}
	for c := 0; c < C; c++ {
		j := 0
		for i, v := range d[c*C : c*C+C] {
			if v != 0 {
				w.Index[c*k+j] = int32(i)
				w.Value[c*k+j] = float32(v)
				j++
			}
		}
		for ; j < k; j++ {
			w.Index[c*k+j] = int32(c)
		}
	}
	return w
}

// Tuning constants of [Whitening.Apply].
const (
	// applyTile is the number of samples of one row processed at a time;
	// a block of applyRows output rows touches about applyRows+K source
	// rows of applyTile float32s, which should sit in L2.
	applyTile = 2048
	// applyRows is the number of output rows a goroutine takes at once.
	applyRows = 16
)

// Apply computes dst = W·src for data laid out [C][T] row-major:
//
//	dst[c*T+t] = Σ_j Value[c*K+j] · src[Index[c*K+j]*T+t]
//
// summed in float32 in the order j = 0, 1, …, K−1 (each product rounded,
// then added; no fused multiply-add), through gonum's SSE axpy kernel. Rows are shared out
// among GOMAXPROCS goroutines; each row is processed in tiles of samples so
// that the source rows it reads stay in cache. The result does not depend
// on the number of goroutines.
//
// dst and src must hold at least C*T values; only the first C*T are used.
// Apply panics if they overlap (in-place whitening is not supported: every
// output row reads up to K input rows), or if w is malformed.
func (w *Whitening) Apply(dst, src []float32, T int) {
	w.check()
	if T < 0 {
		panic(fmt.Sprintf("linalg: Whitening.Apply: T = %d", T))
	}
	n := w.C * T
	if len(dst) < n || len(src) < n {
		panic(fmt.Sprintf("linalg: Whitening.Apply: len(dst) = %d, len(src) = %d, want at least C*T = %d",
			len(dst), len(src), n))
	}
	if n == 0 {
		return
	}
	dst, src = dst[:n], src[:n]
	if overlap32(dst, src) {
		panic("linalg: Whitening.Apply: dst and src overlap")
	}
	if w.K == 0 {
		clear(dst)
		return
	}
	blocks := (w.C + applyRows - 1) / applyRows
	// The job comes from a pool and its loop's function is a method
	// value bound once, so that a call allocates nothing.
	j := applyJobs.Get().(*applyJob)
	j.w, j.dst, j.src, j.t = w, dst, src, T
	j.loop.Each(blocks, par.Workers(blocks), j.blockFn)
	j.w, j.dst, j.src = nil, nil, nil
	applyJobs.Put(j)
}

// applyJob is one Apply call, its blocks of rows taken in turn by the
// workers of its loop.
type applyJob struct {
	w        *Whitening
	dst, src []float32
	t        int
	loop     par.Loop
	blockFn  func(_, b int) // block, made once per job
}

var applyJobs = sync.Pool{New: func() any {
	j := new(applyJob)
	j.blockFn = j.block
	return j
}}

// block computes block b of applyRows output rows, tile by tile.
func (j *applyJob) block(_, b int) {
	w, T := j.w, j.t
	r0, r1 := b*applyRows, min((b+1)*applyRows, w.C)
	for t0 := 0; t0 < T; t0 += applyTile {
		t1 := min(t0+applyTile, T)
		for c := r0; c < r1; c++ {
			w.applyRow(j.dst[c*T+t0:c*T+t1], j.src, T, t0, c)
		}
	}
}

// applyRow computes samples [t0, t0+len(d)) of output row c into d: one
// gonum (SSE) axpy per stored entry, in order; or, where the CPU has
// AVX-512, the same sums by whitening_amd64.s in one pass over d.
func (w *Whitening) applyRow(d, src []float32, T, t0, c int) {
	if w.combineVec(d, src, T, t0, c) {
		return
	}
	L := len(d)
	clear(d)
	dv := blas32.Vector{N: L, Inc: 1, Data: d}
	for j := c * w.K; j < (c+1)*w.K; j++ {
		o := int(w.Index[j])*T + t0
		blas32.Axpy(w.Value[j], blas32.Vector{N: L, Inc: 1, Data: src[o : o+L : o+L]}, dv)
	}
}

// overlap32 reports whether the memory of a and b overlaps.
func overlap32(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b))*4 && pb < pa+uintptr(len(a))*4
}
