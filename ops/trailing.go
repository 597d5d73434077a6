package ops

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"dspk/compute"
	"dspk/internal/par"
)

// Storage is the set of element types the trailing mean accepts; it only fixes the stored rounding.
type Storage interface {
	float32 | Float16 | BFloat16
}

// TrailingMean is the causal trailing mean of [rows, n] arrays of T over windows of cf samples on
// a device: on the CPU CausalTrailingMean; on a CUDA GPU one launch per call in compensated
// float32, within a few float32 units of the magnitudes in its 2048-sample chunk. Non-finite
// samples act as in CausalTrailingMean. A TrailingMean is not safe for concurrent use.
type TrailingMean[T Storage] struct {
	dev         *compute.Device // nil for the CPU
	rows, n, cf int
	gpu         *cudaTrailing // the CUDA back end; nil on the CPU and after Close
}

// NewTrailingMean prepares the op on dev (nil: the CPU), compiling CUDA kernels once per device.
// It panics on negative rows, n or cf, cf = 0, or on a GPU a shape of over 2³¹−1 blocks.
func NewTrailingMean[T Storage](dev *compute.Device, rows, n, cf int) (*TrailingMean[T], error) {
	return newTrailingMean[T](dev, rows, n, cf, gpuKernelFor[T](cf))
}

// newTrailingMean is NewTrailingMean with the GPU kernel k, which must take cf.
func newTrailingMean[T Storage](dev *compute.Device, rows, n, cf int, k gpuKernel) (*TrailingMean[T], error) {
	checkShape("NewTrailingMean", rows*n, rows*n, rows, n, cf)
	m := &TrailingMean[T]{rows: rows, n: n, cf: cf}
	if dev == nil || dev.Kind() != compute.CUDA {
		return m, nil
	}
	checkCUDA[T](rows, n, cf, k)
	m.dev = dev
	err := dev.Do(func(c *compute.Ctx) error {
		var err error
		m.gpu, err = newCUDATrailing[T](c, rows, n, cf, k)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Device returns the CUDA device m runs on, or nil for the CPU.
func (m *TrailingMean[T]) Device() *compute.Device { return m.dev }

// Apply computes the mean of src into dst, host slices of rows·n elements (dst may be src). On a
// GPU it allocates and copies on every call (to stream, use ApplyDevice); not inside Do.
func (m *TrailingMean[T]) Apply(dst, src []T) error {
	if m.dev == nil {
		CausalTrailingMean(dst, src, m.rows, m.n, m.cf)
		return nil
	}
	checkShape("TrailingMean.Apply", len(dst), len(src), m.rows, m.n, m.cf)
	if m.rows*m.n == 0 {
		return nil
	}
	if &dst[0] != &src[0] && overlap(dst, src) {
		panic("ops: TrailingMean.Apply: dst and src overlap without being equal")
	}
	m.checkOpen("Apply")
	return m.dev.Do(func(c *compute.Ctx) error { return applyHost(m.gpu, c, dst, src, m.bytes()) })
}

// ApplyDevice enqueues on c's stream (inside the device's Do) the mean of the device array at src
// into dst, aligned to the element size; dst may equal src (through a scratch copy m keeps) but
// must not otherwise overlap it. It panics on the CPU and on null, misaligned or overlapping pointers.
func (m *TrailingMean[T]) ApplyDevice(c *compute.Ctx, dst, src compute.Ptr) error {
	if m.dev == nil {
		panic("ops: TrailingMean.ApplyDevice on the CPU")
	}
	if m.rows*m.n == 0 {
		return nil
	}
	es := compute.Ptr(elemSize[T]())
	switch b := compute.Ptr(m.bytes()); {
	case dst == 0 || src == 0:
		panic("ops: TrailingMean.ApplyDevice: null device pointer")
	case dst%es != 0 || src%es != 0:
		panic(fmt.Sprintf("ops: TrailingMean.ApplyDevice: pointers %#x, %#x not aligned to the %d-byte elements", dst, src, es))
	case dst != src && dst < src+b && src < dst+b:
		panic("ops: TrailingMean.ApplyDevice: dst and src overlap without being equal")
	}
	m.checkOpen("ApplyDevice")
	return m.gpu.apply(c, dst, src, m.bytes())
}

// Close releases m's device memory; m must not be used afterwards.
func (m *TrailingMean[T]) Close() error {
	g := m.gpu
	if g == nil {
		return nil
	}
	m.gpu = nil
	return m.dev.Do(func(c *compute.Ctx) error { return g.free(c) })
}

// checkOpen panics after Close on a GPU.
func (m *TrailingMean[T]) checkOpen(fn string) {
	if m.gpu == nil {
		panic("ops: TrailingMean." + fn + " after Close")
	}
}

// bytes returns the size of one [rows, n] array of T.
func (m *TrailingMean[T]) bytes() int { return m.rows * m.n * elemSize[T]() }

// kernelName names the back end m runs: "cpu", or the GPU kernel family.
func (m *TrailingMean[T]) kernelName() string {
	if m.gpu == nil {
		return "cpu"
	}
	return gpuKernelNames[m.gpu.kernel]
}

// Tuning constants of the CPU implementation.
const (
	parallelMin    = 1 << 15 // fewer elements run on the caller's goroutine
	tasksPerWorker = 4       // tasks per goroutine, so a slow core holds up little
	segmentMin     = 1 << 14 // shortest row segment of a task
	segmentPerCf   = 8       // segments ≥ 8·cf: re-reading cf samples adds ≤ 1/8
	inPlaceBlock   = 1 << 12 // block of the in-place path's history copies
)

// CausalTrailingMean writes into dst, for each of the rows rows of length n
// stored row-major in src, the causal trailing mean over cf samples:
//
//	dst[r*n+t] = (src[r*n+t-k+1] + … + src[r*n+t]) / k,  k = min(t+1, cf)
//
// for any n, cf ≥ 1. The window sum is carried in float64, updated by x[t] − x[t−cf], so float32
// outputs are correctly rounded for all practical lengths; 16-bit types on AVX-512 CPUs use
// float32 lanes at t ≥ cf and may be one unit off (trailing_lanes.go). A NaN or ±Inf makes outputs
// whose window holds it, and maybe later ones of its row, non-finite. dst may be src but must not
// otherwise overlap it. Work is spread over GOMAXPROCS goroutines. It panics on negative rows, n
// or cf, cf = 0, lengths other than rows·n, or overlap.
func CausalTrailingMean[T Storage](dst, src []T, rows, n, cf int) {
	checkShape("CausalTrailingMean", len(dst), len(src), rows, n, cf)
	if rows*n == 0 {
		return
	}
	inPlace := &dst[0] == &src[0]
	if !inPlace && overlap(dst, src) {
		panic("ops: CausalTrailingMean: dst and src overlap without being equal")
	}
	trailingMean(dst, src, rows, n, cf, inPlace, bestISA, runtime.GOMAXPROCS(0))
}

// isa names a kernel set; the fused pass uses the best one the CPU has.
type isa int

const (
	isaGo     isa = iota // plain Go, everywhere
	isaAVX2              // amd64 with AVX2 and F16C
	isaAVX512            // amd64 with AVX-512 F, BW and VL
)

// trailingMean runs the fused pass on up to workers goroutines with the kernels of level or less.
func trailingMean[T Storage](dst, src []T, rows, n, cf int, inPlace bool, level isa, workers int) {
	level = min(level, bestISA)
	switch d := any(dst).(type) {
	case []float32:
		run(kernelsF32[level], d, any(src).([]float32), rows, n, cf, inPlace, workers)
	case []Float16:
		run(kernelsF16[level], d, any(src).([]Float16), rows, n, cf, inPlace, workers)
	case []BFloat16:
		run(kernelsBF16[level], d, any(src).([]BFloat16), rows, n, cf, inPlace, workers)
	}
}

// checkShape panics on shape misuse.
func checkShape(fn string, ndst, nsrc, rows, n, cf int) {
	if rows < 0 || n < 0 {
		panic(fmt.Sprintf("ops: %s: negative shape [%d, %d]", fn, rows, n))
	}
	if cf < 1 {
		panic(fmt.Sprintf("ops: %s: window length cf = %d, want ≥ 1", fn, cf))
	}
	if rows != 0 && n > math.MaxInt/rows {
		panic(fmt.Sprintf("ops: %s: shape [%d, %d] overflows int", fn, rows, n))
	}
	if ndst != rows*n {
		panic(fmt.Sprintf("ops: %s: len(dst) = %d, want rows·n = %d", fn, ndst, rows*n))
	}
	if nsrc != rows*n {
		panic(fmt.Sprintf("ops: %s: len(src) = %d, want rows·n = %d", fn, nsrc, rows*n))
	}
}

// overlap reports whether the memory of a and b intersects.
func overlap[T any](a, b []T) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	var z T
	size := unsafe.Sizeof(z)
	a0 := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	b0 := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(len(b))*size && b0 < a0+uintptr(len(a))*size
}

// kernel holds the per-storage-type inner loops of the fused pass, each called on
// a block of one row (len(x), len(lag) ≥ len(y)) and returning the carried sum s.
type kernel[T Storage] struct {
	steady func(y, x, lag []T, s, inv float64) float64 // t ≥ cf: s += x[i] − lag[i]; y[i] = s·inv
	warm   func(y, x []T, t0 int, s float64) float64   // t < cf: s += x[i]; y[i] = s/(t0+i+1)
	sum    func(x []T) float64                         // the float64 sum of x
}

// task is a range [t0, t1) of rows r0 … r1−1 for one goroutine (one row's segment if t0 > 0).
type task[T Storage] struct {
	r0, r1 int
	t0, t1 int
	head   []T // in place: the segment's originals [max(0, t0−cf), t0)
}

// run plans the tasks and runs them on up to workers goroutines.
func run[T Storage](k *kernel[T], dst, src []T, rows, n, cf int, inPlace bool, workers int) {
	total := rows * n
	if total < parallelMin || workers == 1 {
		var hist []T
		for r := range rows {
			hist = rowPass(k, dst[r*n:(r+1)*n], src[r*n:(r+1)*n], 0, n, cf, inPlace, nil, hist)
		}
		return
	}
	tasks := plan[T](rows, n, cf, workers)
	if inPlace {
		for i := range tasks {
			tk := &tasks[i]
			if tk.t0 > 0 {
				row := src[tk.r0*n : (tk.r0+1)*n]
				tk.head = append([]T(nil), row[max(0, tk.t0-cf):tk.t0]...)
			}
		}
	}
	hists := make([][]T, max(1, min(workers, len(tasks)))) // each worker's history scratch
	par.Each(len(tasks), workers, func(w, i int) {
		tk := &tasks[i]
		for r := tk.r0; r < tk.r1; r++ {
			hists[w] = rowPass(k, dst[r*n:(r+1)*n], src[r*n:(r+1)*n], tk.t0, tk.t1, cf, inPlace, tk.head, hists[w])
		}
	})
}

// plan splits [rows, n] into ranges of rows or, for few rows, segments of rows as tasks.
func plan[T Storage](rows, n, cf, workers int) []task[T] {
	want := tasksPerWorker * workers
	if rows >= want {
		tasks := make([]task[T], 0, want)
		for i := range want {
			r0, r1 := i*rows/want, (i+1)*rows/want
			tasks = append(tasks, task[T]{r0: r0, r1: r1, t0: 0, t1: n})
		}
		return tasks
	}
	segs := (want + rows - 1) / rows
	minLen := segmentMin
	if cf <= n/segmentPerCf {
		minLen = max(minLen, segmentPerCf*cf)
	} else {
		minLen = n
	}
	segs = max(1, min(segs, n/minLen))
	tasks := make([]task[T], 0, rows*segs)
	for r := range rows {
		for j := range segs {
			tasks = append(tasks, task[T]{r0: r, r1: r + 1, t0: j * n / segs, t1: (j + 1) * n / segs})
		}
	}
	return tasks
}

// rowPass computes outputs [t0, t1) of row x into y; in place through hist, which it returns.
func rowPass[T Storage](k *kernel[T], y, x []T, t0, t1, cf int, inPlace bool, head, hist []T) []T {
	if !inPlace {
		s := k.sum(x[max(0, t0-cf):t0])
		w := min(t1, cf)
		if t0 < w {
			s = k.warm(y[t0:w], x[t0:w], t0, s)
			t0 = w
		}
		if t0 < t1 {
			k.steady(y[t0:t1], x[t0:t1], x[t0-cf:t1-cf], s, 1/float64(cf))
		}
		return hist
	}
	if t1 <= cf {
		// All warm: no history; blocks are copied only so a lane chunk can be redone.
		B := min(inPlaceBlock, t1-t0)
		if cap(hist) < B {
			hist = make([]T, B)
		}
		s := k.sum(head)
		for b := t0; b < t1; b += B {
			e := min(b+B, t1)
			cur := hist[:e-b]
			copy(cur, x[b:e])
			s = k.warm(y[b:e], cur, b, s)
		}
		return hist
	}
	// hist[:cf]: originals [b−cf, b); then the block, a multiple of laneChunk as out of place.
	B := min((max(inPlaceBlock, cf)+laneChunk-1)/laneChunk*laneChunk, t1-t0)
	if cap(hist) < cf+B {
		hist = make([]T, cf+B)
	}
	hist = hist[:cf+B]
	// hist[:cf] needs no clearing: only steady blocks (b ≥ cf) read it.
	copy(hist[cf-len(head):cf], head)
	s := k.sum(head)
	inv := 1 / float64(cf)
	// Blocks never straddle cf, so calls start, and group by eight, as out of place.
	w := min(t1, cf)
	for b := t0; b < t1; {
		e := min(b+B, t1)
		if b < w {
			e = min(e, w)
		}
		m := e - b
		cur := hist[cf : cf+m]
		copy(cur, x[b:e])
		if b < w {
			s = k.warm(y[b:e], cur, b, s)
		} else {
			s = k.steady(y[b:e], cur, hist[:m], s, inv)
		}
		if e < t1 {
			copy(hist[:cf], hist[m:m+cf])
		}
		b = e
	}
	return hist
}
