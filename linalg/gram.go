package linalg

import (
	"fmt"
	"runtime"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"dspk/internal/par"
)

// SplitLen is the largest number of samples whose products one partial sum
// covers. A window's columns [c0, c1) are cut into splits of SplitLen
// samples counted from c0 (the last may be shorter); each split's product
// is formed on its own and the split products are added, in float64, in
// split order.
const SplitLen = 4096

// Tuning constants of the product kernels.
const (
	// tile32 and tile64 are the number of samples one float32 (float64)
	// dot product covers inside a split. A tile of all C channels is packed
	// contiguously (C·tile32·4 bytes, 384 KiB for 384 channels) so that it
	// stays in L2 while every row is dotted with the rows after it. The
	// tile partial sums are added in float64. Both divide SplitLen.
	tile32 = 256
	tile64 = 128
	// chunksPerWorker is how many row chunks of about equal work each
	// goroutine gets on average; more chunks balance better.
	chunksPerWorker = 4
	// packAlign is the byte alignment of packed tiles. The gonum dot
	// kernels peel leading elements until their second operand is 16-byte
	// aligned, which would make the order of the float32 sums (and so the
	// result) depend on addresses; packing every row at an aligned offset
	// makes the result depend on the values only.
	packAlign = 64
)

// checkWindow panics unless x holds C rows of stride ld with columns
// [c0, c1), c0 < c1.
func checkWindow(name string, n, C, ld, c0, c1 int) {
	if C < 1 || ld < 1 || c0 < 0 || c1 <= c0 || c1 > ld {
		panic(fmt.Sprintf("linalg: %s: C=%d ld=%d columns [%d, %d): need C ≥ 1 and 0 ≤ c0 < c1 ≤ ld", name, C, ld, c0, c1))
	}
	if n < (C-1)*ld+c1 {
		panic(fmt.Sprintf("linalg: %s: len(x) = %d, want at least (C-1)*ld+c1 = %d", name, n, (C-1)*ld+c1))
	}
}

// aligned returns a slice of n zeros whose first element is packAlign-byte
// aligned.
func aligned[T float32 | float64](n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	extra := packAlign / size
	buf := make([]T, n+extra)
	off := 0
	if r := int(uintptr(unsafe.Pointer(&buf[0])) % packAlign); r != 0 {
		off = (packAlign - r) / size
	}
	return buf[off : off+n : off+n]
}

// gramWork is the scratch of the split product X Xᵀ for one element type.
type gramWork[T float32 | float64] struct {
	C     int
	tile  int
	pack  []T       // one split packed as [tile][channel][tile sample]
	split []float64 // the current split's product, upper triangle
	tmp   [][]T     // per-chunk gemv output
	// chunk boundaries: rows [bounds[k], bounds[k+1]) of about equal work
	bounds []int
}

func newGramWork[T float32 | float64](C int) *gramWork[T] {
	var z T
	tile := tile64
	if unsafe.Sizeof(z) == 4 {
		tile = tile32
	}
	w := &gramWork[T]{C: C, tile: tile}
	w.split = make([]float64, C*C)
	// Row i of the upper triangle costs C−i dots; cut rows into chunks of
	// about equal cost.
	nch := min(C, chunksPerWorker*runtime.GOMAXPROCS(0))
	total := C * (C + 1) / 2
	w.bounds = []int{0}
	done := 0
	for i := 0; i < C; i++ {
		done += C - i
		if done*nch >= total*len(w.bounds) && i+1 < C {
			w.bounds = append(w.bounds, i+1)
		}
	}
	w.bounds = append(w.bounds, C)
	w.tmp = make([][]T, len(w.bounds)-1)
	for k := range w.tmp {
		w.tmp[k] = make([]T, C)
	}
	return w
}

// gemv sets y[:m] = A·x for the m×n row-major A of stride lda, through
// gonum's assembly dot kernels (float32 sums with eight partial
// accumulators for float32; four-row blocks for float64).
func gemv[T float32 | float64](m, n int, a []T, lda int, x, y []T) {
	switch a := any(a).(type) {
	case []float32:
		blas32.Gemv(blas.NoTrans, 1,
			blas32.General{Rows: m, Cols: n, Stride: lda, Data: a},
			blas32.Vector{N: n, Inc: 1, Data: any(x).([]float32)},
			0, blas32.Vector{N: m, Inc: 1, Data: any(y).([]float32)})
	case []float64:
		blas64.Gemv(blas.NoTrans, 1,
			blas64.General{Rows: m, Cols: n, Stride: lda, Data: a},
			blas64.Vector{N: n, Inc: 1, Data: any(x).([]float64)},
			0, blas64.Vector{N: m, Inc: 1, Data: any(y).([]float64)})
	}
}

// add adds the upper triangle of the product of columns [c0, c1) of the
// C×ld window x, centred by mean when mean is not nil, to acc (C×C, entry
// (i, j) at acc[i*C+j] for i ≤ j; the lower triangle is not touched).
//
// Columns are cut into splits of SplitLen samples from c0 and splits into
// tiles of w.tile samples. For each split, the tiles of all channels are
// packed (converted and centred) at aligned offsets; then for each tile and
// each row i, the dots of row i with rows i…C−1 are formed in the element
// type and added in float64 to the split's product, which is then added to
// acc. Every element is computed by the same sequence of operations
// whatever the goroutine count, c0 or ld.
func (w *gramWork[T]) add(acc []float64, x []T, ld, c0, c1 int, mean []float64) {
	C, tile := w.C, w.tile
	// Room for one split, or the whole range rounded up to tiles if shorter.
	if need := C * min(SplitLen, (c1-c0+tile-1)/tile*tile); len(w.pack) < need {
		w.pack = aligned[T](need)
	}
	for s0 := c0; s0 < c1; s0 += SplitLen {
		s1 := min(s0+SplitLen, c1)
		n := s1 - s0
		tiles := (n + tile - 1) / tile
		// Pack: tile k of channel c at pack[(k*C+c)*tile:].
		par.Each(len(w.bounds)-1, par.Workers(len(w.bounds)-1), func(_, ch int) {
			for c := w.bounds[ch]; c < w.bounds[ch+1]; c++ {
				row := x[c*ld+s0 : c*ld+s1]
				var m float64
				if mean != nil {
					m = mean[c]
				}
				for k := 0; k < tiles; k++ {
					t0 := k * tile
					t1 := min(t0+tile, n)
					p := w.pack[(k*C+c)*tile : (k*C+c)*tile+t1-t0]
					if mean == nil {
						copy(p, row[t0:t1])
						continue
					}
					for t, v := range row[t0:t1] {
						p[t] = T(float64(v) - m)
					}
				}
			}
		})
		// Products, chunk by chunk of rows.
		par.Each(len(w.bounds)-1, par.Workers(len(w.bounds)-1), func(_, ch int) {
			r0, r1 := w.bounds[ch], w.bounds[ch+1]
			tmp := w.tmp[ch]
			for k := 0; k < tiles; k++ {
				L := min(tile, n-k*tile)
				base := k * C * tile
				for i := r0; i < r1; i++ {
					m := C - i
					gemv(m, L, w.pack[base+i*tile:], tile, w.pack[base+i*tile:base+i*tile+L], tmp[:m])
					sp := w.split[i*C+i : i*C+C]
					if k == 0 {
						for j, v := range tmp[:m] {
							sp[j] = float64(v)
						}
					} else {
						for j, v := range tmp[:m] {
							sp[j] += float64(v)
						}
					}
				}
			}
			for i := r0; i < r1; i++ {
				a := acc[i*C+i : i*C+C]
				for j, v := range w.split[i*C+i : i*C+C] {
					a[j] += v
				}
			}
		})
	}
}

// mirror writes dst[i*C+j] = dst[j*C+i] = scale·acc[i*C+j] for i ≤ j.
func mirror(dst, acc []float64, C int, scale float64) {
	for i := 0; i < C; i++ {
		for j := i; j < C; j++ {
			v := acc[i*C+j] * scale
			dst[i*C+j] = v
			dst[j*C+i] = v
		}
	}
}

// means returns the float64 mean of columns [c0, c1) of each row.
func means[T float32 | float64](x []T, C, ld, c0, c1 int) []float64 {
	mu := make([]float64, C)
	for c := range mu {
		var s float64
		for _, v := range x[c*ld+c0 : c*ld+c1] {
			s += float64(v)
		}
		mu[c] = s / float64(c1-c0)
	}
	return mu
}

func covariance[T float32 | float64](name string, dst []float64, x []T, C, ld, c0, c1 int) {
	checkWindow(name, len(x), C, ld, c0, c1)
	if len(dst) != C*C {
		panic(fmt.Sprintf("linalg: %s: len(dst) = %d, want C*C = %d", name, len(dst), C*C))
	}
	w := newGramWork[T](C)
	acc := make([]float64, C*C)
	w.add(acc, x, ld, c0, c1, means(x, C, ld, c0, c1))
	mirror(dst, acc, C, 1/float64(c1-c0))
}

// Covariance32 writes to dst (C×C, row-major) the centred covariance of the
// columns [c0, c1) of the C×ld row-major window x:
//
//	dst[i*C+j] = (1/n) Σ_t (x[i*ld+t] − μ_i)(x[j*ld+t] − μ_j),  n = c1 − c0,
//
// with the means μ in float64. Centred samples are rounded to float32 and
// multiplied and summed in float32 over at most 256 samples at a time
// (eight partial accumulators, gonum's SSE kernel); those partial sums are
// added in float64 within each split of [SplitLen] samples, and the splits
// in order. Only the upper triangle is computed; it is mirrored. The result
// depends only on the values in the range, not on c0, ld or GOMAXPROCS.
// Relative Frobenius error against float64 arithmetic on the same inputs is
// a few 1e-8 in the tests (at most 1e-6 is required).
//
// Covariance32 panics unless C ≥ 1, 0 ≤ c0 < c1 ≤ ld, len(x) ≥ (C−1)·ld+c1
// and len(dst) == C*C. It allocates up to C·SplitLen float32s of scratch;
// a [SecondMoment] keeps its scratch for repeated uncentred products.
func Covariance32(dst []float64, x []float32, C, ld, c0, c1 int) {
	covariance("Covariance32", dst, x, C, ld, c0, c1)
}

// Covariance64 is [Covariance32] for float64 samples, computed in float64
// (tiles of 128 samples, gonum's four-row kernel). Relative error against a
// plain float64 sum is about 1e-15.
func Covariance64(dst []float64, x []float64, C, ld, c0, c1 int) {
	covariance("Covariance64", dst, x, C, ld, c0, c1)
}
