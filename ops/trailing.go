package ops

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"dspk/compute"
)

// Storage is the set of element types the causal trailing mean accepts:
// float32, Float16 and BFloat16. Arithmetic is never done in the storage
// type; it only fixes the rounding of the stored result.
type Storage interface {
	float32 | Float16 | BFloat16
}

// TrailingMean is the causal trailing mean of [rows, n] arrays of T over
// windows of cf samples on a device, built once by NewTrailingMean and
// applied to many arrays. On the CPU it is CausalTrailingMean. On a CUDA
// GPU it is one kernel launch per call (cuda.go, kernels/trailing_mean.cu)
// in float32 arithmetic, compensated where errors would grow along the
// row: a mean is within a few float32 units of the magnitudes summed in
// its own 2048-sample chunk whatever the row length, rounded once to T, so
// not always the correctly rounded mean of the CPU. On both, a non-finite
// sample makes every output whose window holds it non-finite and may do
// the same to later outputs of its row. A TrailingMean is not safe for
// concurrent use.
type TrailingMean[T Storage] struct {
	dev         *compute.Device // nil for the CPU
	rows, n, cf int
	gpu         *cudaTrailing // the CUDA back end; nil on the CPU and after Close
}

// NewTrailingMean prepares the causal trailing mean of [rows, n] arrays of
// T over windows of cf samples on dev (nil or a CPU device for the CPU).
// On a CUDA device it compiles the kernels (once per process and device)
// and prepares the launch. It panics if rows, n or cf is negative, cf is
// zero, or on a GPU the shape needs more than 2³¹−1 blocks of 2048 samples.
func NewTrailingMean[T Storage](dev *compute.Device, rows, n, cf int) (*TrailingMean[T], error) {
	return newTrailingMean[T](dev, rows, n, cf, gpuKernelFor[T](cf))
}

// newTrailingMean is NewTrailingMean with the GPU kernel k, which must
// take cf (the tests run every kernel that takes a window).
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

// Apply computes the causal trailing mean of src into dst, host slices of
// rows·n elements, and returns when dst holds it. dst may be src (in
// place) but must not otherwise overlap it. On a GPU it uploads src,
// launches and downloads dst, allocating the device arrays on every call:
// to stream, keep the data on the device and use ApplyDevice. It must not
// be called inside the device's Do. It panics if a length is not rows·n or
// dst and src overlap without being equal.
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

// ApplyDevice enqueues on c's stream the causal trailing mean of the
// [rows, n] array of T at src into the array at dst, both in the memory of
// m's CUDA device and aligned to the element size. dst may equal src (in
// place: the input is first copied to a scratch array that m allocates on
// first use and keeps) but must not otherwise overlap it. It must be called
// inside the device's Do, on the Ctx Do hands out. It panics on a CPU
// TrailingMean and on null, misaligned or partially overlapping pointers.
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

// Close releases m's device memory; m must not be used afterwards. On the
// CPU it does nothing.
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
	// parallelMin is the number of elements (rows·n) below which the whole
	// call runs on the caller's goroutine: starting goroutines costs more.
	parallelMin = 1 << 15
	// tasksPerWorker is how many tasks each goroutine gets on average, so
	// that a slow core does not hold up the whole call.
	tasksPerWorker = 4
	// segmentMin is the shortest row segment handed to a goroutine when
	// there are too few rows to keep every core busy.
	segmentMin = 1 << 14
	// segmentPerCf: a segment must be at least this many window lengths
	// long, so that re-reading the cf samples before it (its carried-in
	// window sum) adds at most 1/segmentPerCf to the reads.
	segmentPerCf = 8
	// inPlaceBlock is the block length of the in-place path, which copies
	// each block's original samples into a history buffer before
	// overwriting them.
	inPlaceBlock = 1 << 12
)

// CausalTrailingMean writes into dst, for each of the rows rows of length n
// stored row-major in src, the causal trailing mean over cf samples:
//
//	dst[r*n+t] = (src[r*n+t-k+1] + … + src[r*n+t]) / k,  k = min(t+1, cf)
//
// Any n ≥ 1 and cf ≥ 1 are allowed: cf = 1 copies, cf ≥ n gives the
// running prefix mean. The window sum is carried in float64 and updated
// with the difference x[t] − x[t−cf], exact for samples whose exponents
// differ by less than 29 (always for data converted from integers of up
// to 24 bits), so every float32 output is the correctly rounded mean for
// all practical lengths; the mean is rounded to the storage type once.
// For Float16 and BFloat16 on CPUs with AVX-512 (DQ, and BF16 for
// BFloat16) the positions t ≥ cf are computed in float32 lanes
// (trailing_lanes.go) and may differ from the correctly rounded mean by
// one 16-bit unit (0.04 % of float16 and 0.007 % of bfloat16 outputs of
// N(0, 1) data with cf = 100; none with a DC offset).
//
// Samples are expected to be finite: a NaN or ±Inf makes every output whose
// window holds it non-finite, and may do the same to later outputs of its
// row. dst and src may be the same slice (in place), but must not otherwise
// overlap. Rows, and for few long rows segments of rows, are spread over
// GOMAXPROCS goroutines. CausalTrailingMean panics if rows, n or cf is
// negative, cf is zero, len(dst) or len(src) is not rows·n, or dst and src
// overlap without being equal.
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

// trailingMean runs the fused pass on up to workers goroutines with the
// kernels of the given instruction set (capped at the best available).
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

// kernel holds the per-storage-type inner loops of the fused pass. Each is
// called on a block of one row, never per element.
type kernel[T Storage] struct {
	// steady handles positions t ≥ cf: for each i, s += x[i] − lag[i] and
	// y[i] = round(s·inv), where lag[i] is the sample cf positions before
	// x[i]. len(x) and len(lag) are at least len(y). It returns s.
	steady func(y, x, lag []T, s, inv float64) float64
	// warm handles positions t0 … t0+len(y)−1 < cf, which have no sample to
	// drop: s += x[i] and y[i] = round(s/(t0+i+1)). It returns s.
	warm func(y, x []T, t0 int, s float64) float64
	// sum returns the float64 sum of x.
	sum func(x []T) float64
}

// task is a range [t0, t1) of rows r0 … r1−1 handled by one goroutine; a
// task with r1 = r0+1 and t0 > 0 is a segment of one row.
type task[T Storage] struct {
	r0, r1 int
	t0, t1 int
	// head holds a copy of the original samples [max(0, t0−cf), t0) of a
	// segment, taken before any goroutine writes, for the in-place path.
	head []T
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
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(tasks)) {
		wg.Go(func() {
			var hist []T
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) {
					return
				}
				tk := &tasks[i]
				for r := tk.r0; r < tk.r1; r++ {
					hist = rowPass(k, dst[r*n:(r+1)*n], src[r*n:(r+1)*n], tk.t0, tk.t1, cf, inPlace, tk.head, hist)
				}
			}
		})
	}
	wg.Wait()
}

// plan splits [rows, n] into about tasksPerWorker·workers tasks: ranges of
// whole rows when there are enough rows, otherwise equal segments of each
// row, as many as keep a segment at least max(segmentMin, segmentPerCf·cf)
// long (possibly one: then rows is the only parallelism).
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

// rowPass computes outputs [t0, t1) of one row x into y. Out of place, the
// lagged samples are read from x itself. In place, each block's original
// samples are first copied into hist (after the cf samples before the
// block), so that the lagged reads see originals; head holds the originals
// before t0 for a segment. It returns hist for reuse.
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
		// Every position is warm and reads no lagged sample, so no history
		// is kept; each block is copied first only so that a lane kernel's
		// chunk can be redone from the originals (blocks of inPlaceBlock, a
		// multiple of laneChunk, start where the out-of-place chunks do).
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
	// hist[0:cf] holds the original samples [b−cf, b) (those before the row
	// start are never read), hist[cf:cf+B] the block [b, b+B) being
	// processed.
	// B is a multiple of laneChunk (inPlaceBlock is one), so that the lane
	// kernels' chunks start where they start out of place.
	B := min((max(inPlaceBlock, cf)+laneChunk-1)/laneChunk*laneChunk, t1-t0)
	if cap(hist) < cf+B {
		hist = make([]T, cf+B)
	}
	hist = hist[:cf+B]
	// hist[:cf] needs no clearing: only steady blocks (b ≥ cf) read it, as
	// the originals [b−cf, b), which head and the blocks before have put
	// there.
	copy(hist[cf-len(head):cf], head)
	s := k.sum(head)
	inv := 1 / float64(cf)
	// Blocks never straddle position cf, so that warm and steady calls
	// start where the out-of-place path starts them and the two give
	// identical sums (the kernels group positions by eight from the start
	// of each call).
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
