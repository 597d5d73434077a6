package ops

import (
	"fmt"
	"math"
	"unsafe"

	"dspk/internal/cuda"
)

// GPUTrailingMean is CausalTrailingMean on a CUDA device: an operation bound
// to a shape [rows, n], a window cf and the storage type T, built once by
// NewGPUTrailingMean and applied to arrays in device memory. It computes
// the same means in one kernel launch, each block (256 threads of 8 samples
// for float32, 128 threads of 16 samples for the 16-bit types) owning one
// chunk of 2048 samples of a row, so long rows use the whole GPU.
// Windows up to the samples of a warp (256 for float32, 512 for the 16-bit
// types) make every warp's share a chunk of its own, which takes its
// carried-in sum from the lagged samples its lanes load anyway (no
// barrier); windows up to TrailingMeanDirectMax do the same per block;
// longer windows chain the chunks of a row with a decoupled look-back
// scan. Kernel names the one in use.
//
// Arithmetic is float32, compensated where errors would otherwise grow
// along the row: a mean is within a few float32 units of the magnitudes
// summed in its own 2048-sample chunk, whatever the row length (10⁷
// samples of mean 1000 and SD 1: within one float32 unit of the mean), and
// is rounded once to T. It is therefore not always the correctly rounded
// mean CausalTrailingMean returns (float64 conversions are slow on the
// GPU); kernels/trailing_mean.cu states the numerics. As on the CPU, a
// non-finite sample makes every output whose window holds it non-finite,
// may do the same to later outputs of its row, and leaves earlier ones as
// they are.
//
// All methods must be called inside the device's Do, on the Ctx Do hands
// out; a GPUTrailingMean is not safe for concurrent use.
type GPUTrailingMean[T Storage] struct {
	rows, n, cf int
	chunks      int
	threads     int // of a block of the fused kernel
	lookback    bool
	warp        bool // the warp kernel (windows up to 32 times a thread's samples)
	mod         *cuda.Module
	fused       *cuda.Prepared
	state       cuda.Buffer // look-back state (look-back mode only)
	epoch       uint32
	scratch     cuda.Buffer // copy of the input for in-place calls
	eager       *gpuEager
}

// gpuTrailingOptions are knobs for tests and benchmarks.
type gpuTrailingOptions struct {
	// lookback forces the look-back kernel for windows the direct kernel
	// could take.
	lookback bool
	// warpItems, when > 0, is the number of samples per thread of the warp
	// kernels (8, 16 or 32 for the 16-bit types, 8 or 16 for float32)
	// instead of the default (CTM_WARP_ITEMS_F32 or CTM_WARP_ITEMS_16).
	warpItems int
	// block forces the block-wide direct kernel (one carried-in sum per
	// chunk, one barrier) for windows the warp kernel could take.
	block bool
	// minBlocks, when > 0, asks the compiler to fit minBlocks·256 threads
	// of the fused kernel on a multiprocessor (its register budget)
	// instead of the default (CTM_MIN_BLOCKS_F32 or CTM_MIN_BLOCKS_16).
	minBlocks int
	// group, when > 0, is the number of chunks per block of the direct
	// kernel instead of the default (CTM_GROUP_F32 or CTM_GROUP_16); the
	// look-back kernel always takes one.
	group int
	// items, when > 0, is the number of samples per thread of the fused
	// kernels (8 or 16; the block has TrailingMeanChunk/items threads)
	// instead of the default (CTM_ITEMS_F32 or CTM_ITEMS_16).
	items int
	// persist, when > 0, makes the direct kernel persistent (CTM_PERSIST):
	// persist blocks per multiprocessor, each taking every gridDim-th
	// group of chunks and loading the next group before it processes the
	// current one.
	persist int
	// defines are extra NVRTC options for benchmark variants ("-DNAME=V").
	defines []string
}

// Chunks per block of the fused kernels by default (CTM_GROUP_F32 and
// CTM_GROUP_16 in the CUDA source).
const (
	trailingMeanGroup32 = 1
	trailingMeanGroup16 = 1
)

// Samples per thread of the fused kernels by default (CTM_ITEMS_F32 and
// CTM_ITEMS_16 in the CUDA source).
const (
	trailingMeanItems32 = 8
	trailingMeanItems16 = 16
)

// Samples per thread of the warp kernels by default (CTM_WARP_ITEMS_F32
// and CTM_WARP_ITEMS_16 in the CUDA source): a warp takes 32 times as many,
// the longest window of the warp kernel.
const (
	trailingMeanWarpItems32 = 8
	trailingMeanWarpItems16 = 16
)

// warpItemsFor returns the samples per thread of the warp kernel for
// elements of elem bytes.
func (o gpuTrailingOptions) warpItemsFor(elem int) int {
	switch {
	case o.warpItems > 0:
		return o.warpItems
	case o.items > 0: // the CUDA default follows CTM_ITEMS_*
		return o.items
	case elem == 4:
		return trailingMeanWarpItems32
	}
	return trailingMeanWarpItems16
}

// itemsFor returns the samples per thread of the fused kernel for
// elements of elem bytes.
func (o gpuTrailingOptions) itemsFor(elem int) int {
	switch {
	case o.items > 0:
		return o.items
	case elem == 4:
		return trailingMeanItems32
	}
	return trailingMeanItems16
}

// groupFor returns the chunks per block of the fused kernel for elements
// of elem bytes.
func (o gpuTrailingOptions) groupFor(elem int) int {
	switch {
	case o.group > 0:
		return o.group
	case elem == 4:
		return trailingMeanGroup32
	}
	return trailingMeanGroup16
}

// storageSuffix returns the kernel-name suffix of T: "f32", "f16" or "bf16".
func storageSuffix[T Storage]() string {
	var z T
	switch any(z).(type) {
	case float32:
		return "f32"
	case Float16:
		return "f16"
	}
	return "bf16"
}

// elemSize returns the size of T in bytes.
func elemSize[T Storage]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// NewGPUTrailingMean compiles the kernels (once per process and device) and
// prepares a GPUTrailingMean for [rows, n] arrays of T and windows of cf
// samples. It panics if rows, n or cf is negative, cf is zero, or the shape
// needs more than 2³¹−1 blocks of 2048 samples.
func NewGPUTrailingMean[T Storage](c *cuda.Ctx, rows, n, cf int) (*GPUTrailingMean[T], error) {
	return newGPUTrailingMean[T](c, rows, n, cf, gpuTrailingOptions{})
}

func newGPUTrailingMean[T Storage](c *cuda.Ctx, rows, n, cf int, opt gpuTrailingOptions) (*GPUTrailingMean[T], error) {
	checkShape("NewGPUTrailingMean", rows*n, rows*n, rows, n, cf)
	chunks := (n + TrailingMeanChunk - 1) / TrailingMeanChunk
	if rows > 0 && chunks > math.MaxInt32/rows {
		panic(fmt.Sprintf("ops: NewGPUTrailingMean: shape [%d, %d] needs more than 2³¹−1 blocks", rows, n))
	}
	g := &GPUTrailingMean[T]{rows: rows, n: n, cf: cf, chunks: chunks,
		lookback: opt.lookback || cf > TrailingMeanDirectMax}
	var opts []string
	if opt.minBlocks > 0 {
		opts = append(opts, fmt.Sprintf("-DCTM_MIN_BLOCKS=%d", opt.minBlocks))
	}
	group := opt.groupFor(elemSize[T]())
	if opt.group > 0 {
		opts = append(opts, fmt.Sprintf("-DCTM_GROUP_F32=%d", group), fmt.Sprintf("-DCTM_GROUP_16=%d", group))
	}
	items := opt.itemsFor(elemSize[T]())
	if items != 8 && items != 16 {
		panic(fmt.Sprintf("ops: NewGPUTrailingMean: %d samples per thread, want 8 or 16", items))
	}
	if opt.items > 0 {
		opts = append(opts, fmt.Sprintf("-DCTM_ITEMS_F32=%d", items), fmt.Sprintf("-DCTM_ITEMS_16=%d", items))
	}
	threads := TrailingMeanChunk / items
	// Windows up to a warp's samples (32 times the warp kernel's samples
	// per thread) take the warp kernel: every warp of a block is a chunk of
	// its own, with no barrier.
	witems := opt.warpItemsFor(elemSize[T]())
	if opt.warpItems > 0 {
		opts = append(opts, fmt.Sprintf("-DCTM_WARP_ITEMS_F32=%d", min(witems, 16)), fmt.Sprintf("-DCTM_WARP_ITEMS_16=%d", witems))
	}
	g.warp = !g.lookback && !opt.block && group == 1 && opt.persist == 0 && cf <= 32*witems
	if g.warp {
		threads = TrailingMeanChunk / witems
	}
	g.threads = threads
	if opt.persist > 0 {
		opts = append(opts, "-DCTM_PERSIST=1")
	}
	opts = append(opts, opt.defines...)
	mod, err := c.Compile("ops/kernels/trailing_mean.cu", TrailingMeanCUDA, opts...)
	if err != nil {
		return nil, err
	}
	g.mod = mod
	total := rows * chunks
	if total == 0 {
		return g, nil
	}
	blocks := total // look-back: one chunk per block
	if !g.lookback {
		blocks = (total + group - 1) / group
		if opt.persist > 0 {
			blocks = min(blocks, opt.persist*c.Device().Info().SMs)
		}
	}
	var null cuda.DevicePtr
	sfx := storageSuffix[T]()
	if g.lookback {
		f, err := mod.Function("ctm_lookback_" + sfx)
		if err != nil {
			return nil, err
		}
		if g.state, err = c.Alloc(trailingMeanStateBytes(total)); err != nil {
			return nil, err
		}
		if err := c.Memset8(g.state.Ptr, 0, g.state.Bytes); err != nil {
			g.Free(c)
			return nil, err
		}
		g.fused = f.Prepare(cuda.D1(blocks), cuda.D1(threads), 0,
			null, null, int64(n), int64(cf), float32(1/float64(cf)), int64(chunks), int64(total), g.state, uint32(0))
	} else {
		kernel := "ctm_direct_"
		if g.warp {
			kernel = "ctm_warp_"
		}
		f, err := mod.Function(kernel + sfx)
		if err != nil {
			return nil, err
		}
		grid := cuda.D1(blocks)
		if group == 1 && opt.persist == 0 {
			// One chunk per block: chunk along x, row along y and z (the
			// kernel locates its chunk without a division).
			y := min(rows, 65535)
			grid = cuda.Dim3{X: chunks, Y: y, Z: (rows + y - 1) / y}
		}
		g.fused = f.Prepare(grid, cuda.D1(threads), 0,
			null, null, int64(n), int64(cf), float32(1/float64(cf)), int64(chunks), int64(total))
	}
	return g, nil
}

// Rows returns the number of rows.
func (g *GPUTrailingMean[T]) Rows() int { return g.rows }

// N returns the row length.
func (g *GPUTrailingMean[T]) N() int { return g.n }

// CF returns the window length.
func (g *GPUTrailingMean[T]) CF() int { return g.cf }

// Lookback reports whether the look-back kernel is used (windows longer
// than TrailingMeanDirectMax).
func (g *GPUTrailingMean[T]) Lookback() bool { return g.lookback }

// Kernel names the kernel g launches: "warp" (windows up to the samples of
// a warp, 256 for float32 and 512 for the 16-bit types: every warp
// carries its own window sum), "direct" (up to TrailingMeanDirectMax: one
// per block of 2048 samples) or "lookback" (longer windows).
func (g *GPUTrailingMean[T]) Kernel() string {
	switch {
	case g.lookback:
		return "lookback"
	case g.warp:
		return "warp"
	}
	return "direct"
}

// bytes returns the size of one [rows, n] array of T.
func (g *GPUTrailingMean[T]) bytes() int { return g.rows * g.n * elemSize[T]() }

// checkPtrs panics on null, misaligned or partially overlapping arrays.
func (g *GPUTrailingMean[T]) checkPtrs(fn string, dst, src cuda.DevicePtr) {
	es := uintptr(elemSize[T]())
	if dst == 0 || src == 0 {
		panic(fmt.Sprintf("ops: GPUTrailingMean.%s: null device pointer", fn))
	}
	if uintptr(dst)%es != 0 || uintptr(src)%es != 0 {
		panic(fmt.Sprintf("ops: GPUTrailingMean.%s: pointers %#x, %#x not aligned to the %d-byte elements", fn, dst, src, es))
	}
	b := cuda.DevicePtr(g.bytes())
	if dst != src && dst < src+b && src < dst+b {
		panic(fmt.Sprintf("ops: GPUTrailingMean.%s: dst and src overlap without being equal", fn))
	}
	if g.fused == nil && g.mod == nil {
		panic(fmt.Sprintf("ops: GPUTrailingMean.%s after Free", fn))
	}
}

// Apply enqueues on c's stream the causal trailing mean of the [rows, n]
// array of T at src into the array at dst (both in device memory, aligned
// to the element size). dst may equal src (in place: the input is first
// copied to a scratch buffer the GPUTrailingMean allocates on first use and
// keeps), but must not otherwise overlap it. It panics on null, misaligned
// or partially overlapping pointers.
func (g *GPUTrailingMean[T]) Apply(c *cuda.Ctx, dst, src cuda.DevicePtr) error {
	if g.rows*g.n == 0 {
		return nil
	}
	g.checkPtrs("Apply", dst, src)
	x := src
	if dst == src {
		if g.scratch.Ptr == 0 {
			var err error
			if g.scratch, err = c.Alloc(g.bytes()); err != nil {
				return err
			}
		}
		if err := c.CopyDtoD(g.scratch.Ptr, src, g.bytes()); err != nil {
			return err
		}
		x = g.scratch.Ptr
	}
	g.fused.Set(0, dst)
	g.fused.Set(1, x)
	if g.lookback {
		// A new epoch per launch: flags of earlier launches never match.
		g.epoch++
		if g.epoch >= 1<<30 {
			g.epoch = 1
		}
		g.fused.Set(8, g.epoch)
	}
	return g.fused.Launch(c)
}

// ApplyHost computes the causal trailing mean of src into dst (host slices
// of rows·n elements) on the device: it uploads src, applies, downloads dst
// and waits. dst may be src (then the device computes in place too) but
// must not otherwise overlap it. The device output buffer is filled with
// NaN first, so that an element the kernel failed to write reads back as
// NaN. It allocates and frees its device buffers on every call: a
// convenience for tests and small jobs, not for streaming.
func (g *GPUTrailingMean[T]) ApplyHost(c *cuda.Ctx, dst, src []T) error {
	N := g.rows * g.n
	if len(dst) != N || len(src) != N {
		panic(fmt.Sprintf("ops: GPUTrailingMean.ApplyHost: len(dst) = %d, len(src) = %d, want rows·n = %d", len(dst), len(src), N))
	}
	if N == 0 {
		return nil
	}
	inPlace := &dst[0] == &src[0]
	if !inPlace && overlap(dst, src) {
		panic("ops: GPUTrailingMean.ApplyHost: dst and src overlap without being equal")
	}
	in, err := c.Alloc(g.bytes())
	if err != nil {
		return err
	}
	defer c.Free(in)
	out := in
	if !inPlace {
		if out, err = c.Alloc(g.bytes()); err != nil {
			return err
		}
		defer c.Free(out)
		if err := c.Memset8(out.Ptr, 0xff, out.Bytes); err != nil {
			return err
		}
	}
	if err := cuda.Upload(c, in.Ptr, src); err != nil {
		return err
	}
	if err := g.Apply(c, out.Ptr, in.Ptr); err != nil {
		return err
	}
	return cuda.Download(c, dst, out.Ptr)
}

// Free releases the device buffers and launch blocks; g must not be used
// afterwards. The compiled module stays cached in the device.
func (g *GPUTrailingMean[T]) Free(c *cuda.Ctx) error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	keep(c.Free(g.state))
	keep(c.Free(g.scratch))
	g.state, g.scratch = cuda.Buffer{}, cuda.Buffer{}
	if g.fused != nil {
		g.fused.Free()
		g.fused = nil
	}
	if g.eager != nil {
		keep(g.eager.free(c))
		g.eager = nil
	}
	g.mod = nil
	return first
}

// gpuEager holds the eager formulation's launches and float32 workspace.
type gpuEager struct {
	work   cuda.Buffer // [a] c p w [m] (rows·n float32 each), count (n float32)
	widen  *cuda.Prepared
	cumsum *cuda.Prepared
	pad    *cuda.Prepared
	sub    *cuda.Prepared
	div    *cuda.Prepared
	narrow *cuda.Prepared
}

func (e *gpuEager) free(c *cuda.Ctx) error {
	for _, p := range []*cuda.Prepared{e.widen, e.cumsum, e.pad, e.sub, e.div, e.narrow} {
		if p != nil {
			p.Free()
		}
	}
	return c.Free(e.work)
}

// Grid sizes of the element-wise kernels (grid-stride loops).
func gridFlat(N int) cuda.Dim3 {
	return cuda.D1(max(1, min((N+TrailingMeanThreads-1)/TrailingMeanThreads, 1<<15)))
}

func gridRows(rows, n int) cuda.Dim3 {
	return cuda.Dim3{X: max(1, min((n+TrailingMeanThreads-1)/TrailingMeanThreads, 4096)), Y: max(1, min(rows, 65535)), Z: 1}
}

// ApplyEager enqueues the multi-pass eager formulation of the same mean, as
// an eager tensor library runs it (CausalTrailingMeanEager on the CPU): one
// kernel and one materialised float32 array per step — cast to float32
// (16-bit types), cumsum along rows (float32), pad (shift right by cf),
// subtract, divide by the window count, cast back. It exists as the
// baseline of the fused pass; its float32 prefix sums lose digits on long
// rows with an offset. Its workspace (about 4·rows·n float32) is allocated
// on first use and kept. dst may equal src.
func (g *GPUTrailingMean[T]) ApplyEager(c *cuda.Ctx, dst, src cuda.DevicePtr) error {
	if g.rows*g.n == 0 {
		return nil
	}
	g.checkPtrs("ApplyEager", dst, src)
	if g.eager == nil {
		if err := g.newEager(c); err != nil {
			return err
		}
	}
	e := g.eager
	if e.widen != nil { // 16-bit: a = float32(src), m → narrow → dst
		e.widen.Set(1, src)
		e.narrow.Set(0, dst)
		if err := e.widen.Launch(c); err != nil {
			return err
		}
	} else { // float32: the cumsum reads src, the division writes dst
		e.cumsum.Set(1, src)
		e.div.Set(0, dst)
	}
	for _, l := range []*cuda.Prepared{e.cumsum, e.pad, e.sub, e.div} {
		if err := l.Launch(c); err != nil {
			return err
		}
	}
	if e.narrow != nil {
		return e.narrow.Launch(c)
	}
	return nil
}

// newEager allocates the eager workspace and prepares its launches.
func (g *GPUTrailingMean[T]) newEager(c *cuda.Ctx) error {
	N, rows, n := g.rows*g.n, g.rows, g.n
	sixteen := elemSize[T]() == 2
	// Layout in float32 units of N: [a] c p w [m] then count (n floats).
	arrays := 3
	if sixteen {
		arrays = 5
	}
	work, err := c.Alloc(4 * (arrays*N + n))
	if err != nil {
		return err
	}
	e := &gpuEager{work: work}
	ws := work.Ptr
	f4 := func(i int) cuda.DevicePtr { return ws.Add(4 * i * N) }
	// a and m exist for 16-bit types only (float32 reads src and writes
	// dst directly).
	var a, cs, p, w, m, count cuda.DevicePtr
	if sixteen {
		a, cs, p, w, m, count = f4(0), f4(1), f4(2), f4(3), f4(4), f4(5)
	} else {
		cs, p, w, count = f4(0), f4(1), f4(2), f4(3)
	}
	var null cuda.DevicePtr
	fn := func(name string) *cuda.Function {
		if err != nil {
			return nil
		}
		var f *cuda.Function
		f, err = g.mod.Function(name)
		return f
	}
	fCount := fn("ctm_eager_count")
	fCumsum := fn("ctm_eager_cumsum")
	fPad := fn("ctm_eager_pad")
	fSub := fn("ctm_eager_sub")
	fDiv := fn("ctm_eager_div")
	var fWiden, fNarrow *cuda.Function
	if sixteen {
		fWiden = fn("ctm_eager_widen_" + storageSuffix[T]())
		fNarrow = fn("ctm_eager_narrow_" + storageSuffix[T]())
	}
	if err != nil {
		c.Free(work)
		return err
	}
	T256 := cuda.D1(TrailingMeanThreads)
	if err := c.Launch(fCount, gridFlat(n), T256, 0, count, int64(n), int64(g.cf)); err != nil {
		c.Free(work)
		return err
	}
	if sixteen {
		e.widen = fWiden.Prepare(gridFlat(N), T256, 0, a, null, int64(N))
		e.narrow = fNarrow.Prepare(gridFlat(N), T256, 0, null, m, int64(N))
	}
	e.cumsum = fCumsum.Prepare(cuda.D1(rows), T256, 0, cs, a, int64(n))
	e.pad = fPad.Prepare(gridRows(rows, n), T256, 0, p, cs, int64(rows), int64(n), int64(g.cf))
	e.sub = fSub.Prepare(gridFlat(N), T256, 0, w, cs, p, int64(N))
	e.div = fDiv.Prepare(gridRows(rows, n), T256, 0, m, w, count, int64(rows), int64(n))
	g.eager = e
	return nil
}

// fill writes N pseudo-normal values mean + sd·z (z from a hash of seed
// and the index) of type T to dst, for benchmarks.
func (g *GPUTrailingMean[T]) fill(c *cuda.Ctx, dst cuda.DevicePtr, N int, seed uint64, mean, sd float32) error {
	f, err := g.mod.Function("ctm_fill_" + storageSuffix[T]())
	if err != nil {
		return err
	}
	return c.Launch(f, gridFlat(N), cuda.D1(TrailingMeanThreads), 0, dst, int64(N), seed, mean, sd)
}

// kernelAttributes returns what the compiler gave the fused kernel and how
// many of its blocks fit on a multiprocessor (for benchmarks).
func (g *GPUTrailingMean[T]) kernelAttributes() (cuda.FuncAttributes, int, error) {
	if g.fused == nil {
		return cuda.FuncAttributes{}, 0, nil
	}
	f := g.fused.Function()
	a, err := f.Attributes()
	if err != nil {
		return a, 0, err
	}
	nb, err := f.MaxActiveBlocks(g.threads, 0)
	return a, nb, err
}
