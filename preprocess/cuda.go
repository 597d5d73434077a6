package preprocess

import (
	_ "embed"
	"fmt"
	"math"
	"sync"

	"dspk/compute"
)

//go:embed kernels/preprocess.cu
var gpuSource string

// Sizes shared with kernels/preprocess.cu.
const (
	gpuBlock     = 256 // threads of the CAR and direct-filter blocks
	sumThreads   = 128 // threads (channels) of a chan_sums block
	sumRows      = 256 // rows of the window one chan_sums block adds
	carTile      = 32  // CAR_TILE
	hpWarps      = 4   // HP_WARPS
	defaultSmem  = 48 << 10
	maxGPUChan   = 1024 // 32 values per lane in the CAR kernel
	maxGPUDirect = 8192 // longest window filtered by the direct O(n²) kernel
)

// gpuTailTol is the share of the summed absolute impulse response of the
// Butterworth cascade that the GPU's chunked high-pass neglects at the
// start of every chunk, in each direction: 1e-8, below the float32
// rounding of the result (6e-8); Kilosort4's filter then warms up over
// 576 samples instead of 736 for 1e-10 (docs/perf-gpu-preprocess.md).
const gpuTailTol = 1e-8

// gpuConfig selects among the kernel variants (measured in
// docs/perf-gpu-preprocess.md); every variant computes the same result.
type gpuConfig struct {
	carCPW    int     // CAR: columns a warp takes at once (1 or 2)
	carBits   int     // CAR: key bits found per warp reduction (1 or 2)
	whiteCols int     // sparse whitening: columns per lane (1, 2 or 4)
	whiteRows int     // sparse whitening: rows per group (0: whiteGroupRows where its input band fits, < 0: one group)
	chunk     int     // high-pass chunk length, a multiple of 32; 0: one warp per scheduler
	tailTol   float64 // high-pass warm-up for this share of the impulse response's tail (0: gpuTailTol)
	dense     bool    // whiten by a dense cuBLAS SGEMM instead
}

// defaultGPUConfig is the fastest configuration measured on an H200 for
// one NP1 window (docs/perf-gpu-preprocess.md): CAR 0.232 ms with two
// columns per warp and one key bit per reduction (0.246–0.285 ms for the
// others), high-pass 0.293 ms with 512-sample chunks (0.380 ms with one
// warp per scheduler, 0.515 ms with 2048), sparse whitening 0.371 ms with
// four columns per lane (0.547 and 0.970 ms with two and one; dense SGEMM
// 0.410 ms).
var defaultGPUConfig = gpuConfig{carCPW: 2, carBits: 1, whiteCols: 4, chunk: 512}

// whiteGroupRows is the number of output rows of a group of the sparse
// whitening kernel, and whiteBandShared the most shared memory the input
// band of one group may take (a local whitening's band for NP1, 32
// channels against their nearest 32, is about 70 rows: 36 kB at four
// columns per lane); a wider band whitens the window in one group of all
// C rows.
const (
	whiteGroupRows  = 32
	whiteBandShared = 64 << 10
)

// carQs are the per-lane value counts the CAR kernel is built for.
var carQs = []int{1, 2, 4, 8, 12, 16, 24, 32}

// cudaPreprocessor is the CUDA back end of [Preprocessor] (see there for
// how its results compare with the CPU's).
//
// It is built once per shape by newCUDA, owns every device buffer it
// needs and allocates nothing per window. A pipeline hands it windows that
// a [compute.Window] uploaded (Preprocessor.Window). For its own Run and
// for benchmarks, windows travel as int16 from pinned host memory (see
// [cudaPreprocessor.PinnedWindows]) into one of two device input buffers,
// allocated by the first Upload into each, on a copy stream of its own, so
// the upload of the next window overlaps the processing of the current
// one:
//
//	dev.Do(func(c *compute.Ctx) error {
//		g.Upload(c, win[0])
//		for i := range win {
//			if i+1 < len(win) {
//				g.Upload(c, win[i+1]) // copy stream
//			}
//			out, err := g.Process(c) // c's stream; win[i] reusable on return
//			… // use out ([C][T] float32 on the device) on c's stream
//		}
//	})
//
// [cudaPreprocessor.Run] does one window synchronously from and to host
// slices, as [cpuPreprocessor.Run] does. The methods that take a *compute.Ctx
// must be called inside the device's Do; a cudaPreprocessor is not safe for
// concurrent use.
type cudaPreprocessor struct {
	dev        *compute.Device
	p          Params
	c, t, cf   int
	cfg        gpuConfig
	fast       bool    // chunked IIR high-pass; else the direct correlation
	warm, hpL  int     // warm-up and chunk length of the chunked high-pass
	gain       float64 // squared gain of the cascade
	whiteCols  int     // columns per lane of the whitening kernel in use
	carThreads int     // threads of a CAR block

	copyStream compute.Stream
	uploaded   [2]compute.Event // upload into in[slot] finished
	consumed   [2]compute.Event // in[slot] no longer read
	in         [2]compute.Mem
	head       int // slot of the oldest upload not yet processed
	pending    int // uploads not yet processed (0, 1 or 2)

	cmap, sums, mean, x, f, y, z, coef, taps compute.Mem
	wPairs, wDense, wGroups                  compute.Mem
	white                                    bool // a whitening is set
	out                                      compute.Ptr

	fSums, fMeans, fCAR, fFwd, fBwd, fDirect, fWhite *compute.Prepared
	whiteFn                                          *compute.Kernel

	pinMu  sync.Mutex
	pinned []*compute.HostMem

	stages []compute.Event // when not nil, recorded between the stages (benchmarks)
	closed bool
}

// newCUDA returns a cudaPreprocessor on the CUDA device dev for the windows
// that [New] accepts for p: it compiles the kernels for the shape (once per
// process), allocates the device buffers (up to five [C][T] float32
// arrays and two raw windows) and creates its copy stream and events. It
// returns an error if New(p) would, if dev is not a CUDA device, if C
// exceeds 1024 (or the device's shared memory), if the high-pass needs Kilosort4's cropped taps (short
// windows) and T exceeds 8192, or if the device fails.
//
// cfg selects among the kernel variants (defaultGPUConfig in the product).
func newCUDA(dev *compute.Device, p Params, cfg gpuConfig) (*cudaPreprocessor, error) {
	pp, err := newCPU(p)
	if err != nil {
		return nil, err
	}
	return newCUDAFrom(dev, pp, cfg, -1)
}

// newCUDAFrom is newCUDA on the parameters and high-pass of the CPU back
// end pp, which it only reads (a Preprocessor shares one between both);
// tail, if not negative, is tailLength of pp's high-pass for cfg's
// tolerance, computed ahead (see gpuTail).
func newCUDAFrom(dev *compute.Device, pp *cpuPreprocessor, cfg gpuConfig, tail int) (*cudaPreprocessor, error) {
	p := pp.p
	if p.Groups != nil && p.DoCAR {
		return nil, fmt.Errorf("preprocess: CAR within groups runs on the CPU only (use -device cpu with -groups)")
	}
	var err error
	if dev == nil || dev.Kind() != compute.CUDA {
		name := "nil"
		if dev != nil {
			name = dev.String()
		}
		return nil, fmt.Errorf("preprocess: CUDA: device %s is not a CUDA GPU", name)
	}
	C, T := pp.c, pp.t
	if C > maxGPUChan {
		return nil, fmt.Errorf("preprocess: CUDA: %d channels, more than the %d the GPU path supports", C, maxGPUChan)
	}
	if int64(T)*int64(max(C, p.NChanFile)) > math.MaxInt32 {
		return nil, fmt.Errorf("preprocess: CUDA: window of %d samples × %d channels is too large", T, max(C, p.NChanFile))
	}
	flt := pp.Filter()
	g := &cudaPreprocessor{
		dev: dev, p: pp.Params(), c: C, t: T, cf: p.NChanFile, cfg: cfg,
		fast: flt.fast, gain: flt.g2,
	}
	if g.fast {
		if tail < 0 {
			tail = gpuTail(pp, cfg)
		}
		g.warm = min(roundUp(tail, 32), T)
	} else if T > maxGPUDirect {
		return nil, fmt.Errorf("preprocess: CUDA: the %v-Hz high-pass over %d samples needs Kilosort4's cropped taps, which the GPU applies only to windows of at most %d samples", p.HighpassCutoff, T, maxGPUDirect)
	}
	if C > 1023 {
		g.cfg.carBits = 1 // packed counts hold at most 1023
	}
	info := dev.GPU()
	if need := C * (carTile + 1) * 4; need > info.MaxSharedPerBlock {
		return nil, fmt.Errorf("preprocess: CUDA: %d channels need %d bytes of shared memory per block, %s has %d", C, need, dev, info.MaxSharedPerBlock)
	}
	g.carThreads = carThreadsFor(C, max(1, g.cfg.carCPW))
	g.whiteCols = max(1, g.cfg.whiteCols)
	for g.whiteCols > 1 && C*32*g.whiteCols*4 > info.MaxSharedPerBlock {
		g.whiteCols /= 2
	}
	err = dev.Do(func(c *compute.Ctx) error {
		if err := g.init(c, flt, info.SMs); err != nil {
			g.release(c)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// gpuTail is the length of the GPU high-pass's warm-up for the
// high-pass of pp and cfg's tolerance (0 where the high-pass has no
// recursive form).
func gpuTail(pp *cpuPreprocessor, cfg gpuConfig) int {
	flt := pp.Filter()
	if !flt.fast {
		return 0
	}
	tol := cfg.tailTol
	if tol == 0 {
		tol = gpuTailTol
	}
	return tailLength(flt.secs, tol)
}

// roundUp rounds n up to a multiple of m.
func roundUp(n, m int) int { return (n + m - 1) / m * m }

// tailLength returns the smallest W such that the causal impulse response
// of the cascade secs from sample W on sums in absolute value to at most
// tol of the whole (maxImpulse if it never does).
func tailLength(secs []section, tol float64) int {
	h := make([]float64, maxImpulse)
	h[0] = 1
	for _, s := range secs {
		s.forward(h)
	}
	var total float64
	for _, v := range h {
		total += math.Abs(v)
	}
	var tail float64
	for k := len(h) - 1; k >= 0; k-- {
		tail += math.Abs(h[k])
		if tail > tol*total {
			return k + 1
		}
	}
	return 0
}

// carThreadsFor returns the threads of a CAR block for C channels and
// cpw columns per warp: one warp per cpw of the block's CAR_TILE columns,
// so that each warp searches its medians once (at most 12 values per lane
// keep the kernel within 64 registers), else gpuBlock.
func carThreadsFor(C, cpw int) int {
	if carQ(C) <= 12 {
		return 32 * carTile / cpw
	}
	return gpuBlock
}

// carMinBlocks returns the blocks of n CAR threads each SM must hold at
// once (CAR_MINB): two of 512, which caps the kernel at 64 registers.
func carMinBlocks(n int) int {
	if n == 512 {
		return 2
	}
	return 1
}

// carQ returns the smallest instantiated per-lane count holding C values.
func carQ(C int) int {
	for _, q := range carQs {
		if 32*q >= C {
			return q
		}
	}
	panic(fmt.Sprintf("preprocess: %d channels for the CAR kernel", C))
}

// init compiles the kernels, allocates the buffers and prepares the
// launches.
func (g *cudaPreprocessor) init(c *compute.Ctx, flt *Filter, sms int) error {
	mod, err := g.compile(c)
	if err != nil {
		return err
	}
	if err := g.buffers(c, flt); err != nil {
		return err
	}
	return g.prepare(mod, sms)
}

// compile compiles the kernels for g's sizes and configuration.
func (g *cudaPreprocessor) compile(c *compute.Ctx) (*compute.Module, error) {
	C := g.c
	opts := []string{
		fmt.Sprintf("-DCAR_Q=%d", carQ(C)),
		fmt.Sprintf("-DCAR_CPW=%d", g.cfg.carCPW),
		fmt.Sprintf("-DCAR_BITS=%d", g.cfg.carBits),
		fmt.Sprintf("-DCAR_THREADS=%d", g.carThreads), fmt.Sprintf("-DCAR_MINB=%d", carMinBlocks(g.carThreads)),
		fmt.Sprintf("-DWHITE_NCOL=%d", g.whiteCols),
	}
	if g.fast {
		order := g.p.HighpassOrder
		opts = append(opts, fmt.Sprintf("-DHP_NB=%d", order/2), fmt.Sprintf("-DHP_ODD=%d", order%2))
	}
	return c.Compile("preprocess/kernels/preprocess.cu", gpuSource, opts...)
}

// buffers allocates the device buffers, uploads the channel map and the
// high-pass's coefficients or taps, and makes the copy stream and the
// double buffer's events.
func (g *cudaPreprocessor) buffers(c *compute.Ctx, flt *Filter) (err error) {
	C, T := g.c, g.t
	alloc := func(b *compute.Mem, bytes int) {
		if err == nil {
			*b, err = c.Alloc(bytes)
		}
	}
	alloc(&g.cmap, C*4)
	alloc(&g.sums, C*8)
	alloc(&g.mean, C*4)
	alloc(&g.x, C*T*4)
	alloc(&g.y, C*T*4)
	if g.fast {
		alloc(&g.f, C*T*4)
		alloc(&g.coef, len(flt.secs)*5*8)
	} else {
		alloc(&g.taps, T*8)
	}
	if err != nil {
		return err
	}
	cmap := make([]int32, C)
	for i, r := range g.p.ChanMap {
		cmap[i] = int32(r)
	}
	if err := compute.Upload(c, g.cmap.Ptr, cmap); err != nil {
		return err
	}
	if g.fast {
		coef := make([]float64, 0, len(flt.secs)*5)
		for _, s := range flt.secs {
			coef = append(coef, s.b0, s.b1, s.b2, s.a1, s.a2)
		}
		if err := compute.Upload(c, g.coef.Ptr, coef); err != nil {
			return err
		}
	} else {
		h := HighpassTaps(g.p.Fs, g.p.HighpassCutoff, g.p.HighpassOrder, T)
		if err := compute.Upload(c, g.taps.Ptr, h); err != nil {
			return err
		}
	}
	if g.copyStream, err = c.NewStream(); err != nil {
		return err
	}
	for i := range 2 {
		if g.uploaded[i], err = c.NewEvent(); err != nil {
			return err
		}
		if g.consumed[i], err = c.NewEvent(); err != nil {
			return err
		}
	}
	return nil
}

// prepare looks up the kernels of mod and prepares their launches on g's
// buffers; sms sizes the high-pass chunks when the configuration does not.
func (g *cudaPreprocessor) prepare(mod *compute.Module, sms int) (err error) {
	C, T, cf := g.c, g.t, g.cf
	fn := func(name string, smem int) *compute.Kernel {
		if err != nil {
			return nil
		}
		var f *compute.Kernel
		if f, err = mod.Kernel(name); err == nil && smem > defaultSmem {
			err = f.SetMaxDynamicShared(smem)
		}
		return f
	}
	carSmem := C * (carTile + 1) * 4
	fSums := fn("chan_sums", 0)
	fMeans := fn("chan_means", 0)
	fCAR := fn("car_entry", carSmem)
	g.whiteFn = fn("whiten", C*32*g.whiteCols*4)
	var fFwd, fBwd, fDirect *compute.Kernel
	if g.fast {
		fFwd = fn("hp_fwd", 0)
		fBwd = fn("hp_bwd", 0)
	} else {
		fDirect = fn("hp_direct", T*4)
	}
	if err != nil {
		return err
	}
	var null compute.Ptr
	g.fSums = fSums.Prepare(compute.Dim3{X: ceilDiv(T, sumRows), Y: ceilDiv(C, sumThreads)}, compute.D1(sumThreads), 0,
		g.sums, null, g.cmap, int32(C), int32(cf), int32(T), int32(sumRows))
	var inv, car int32
	if g.p.InvertSign {
		inv = 1
	}
	if g.p.DoCAR {
		car = 1
	}
	g.fMeans = fMeans.Prepare(compute.D1(ceilDiv(C, 128)), compute.D1(128), 0, g.mean, g.sums, int32(C), int32(T), inv)
	g.fCAR = fCAR.Prepare(compute.D1(ceilDiv(T, carTile)), compute.D1(g.carThreads), carSmem,
		g.x, null, g.cmap, g.mean, int32(C), int32(cf), int32(T), inv, car)
	if g.fast {
		ngroup := ceilDiv(C, 32)
		g.fFwd = fFwd.Prepare(compute.D1(1), compute.D1(hpWarps*32), 0,
			g.f, g.x, g.coef, int32(C), int32(T), int32(0), int32(g.warm), int32(0), int32(ngroup), float64(1))
		g.fBwd = fBwd.Prepare(compute.D1(1), compute.D1(hpWarps*32), 0,
			g.y, g.f, g.coef, int32(C), int32(T), int32(0), int32(g.warm), int32(0), int32(ngroup), g.gain)
		L := g.cfg.chunk
		if L == 0 {
			L = autoChunk(C, T, sms)
		}
		g.setChunk(L)
	} else {
		g.fDirect = fDirect.Prepare(compute.Dim3{X: ceilDiv(T, gpuBlock), Y: C}, compute.D1(gpuBlock), T*4,
			g.y, g.x, g.taps, int32(T))
	}
	g.out = g.y.Ptr
	return nil
}

// autoChunk returns the chunk length that gives the high-pass about one
// warp per scheduler (four per multiprocessor), so that no warp waits for
// another: the time is about (warm-up + chunk) steps of one warp.
func autoChunk(C, T, sms int) int {
	chunks := max(1, 4*max(sms, 1)/ceilDiv(C, 32))
	return max(64, roundUp(ceilDiv(T, chunks), 32))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// setChunk sets the chunk length L (a multiple of 32) of the chunked
// high-pass.
func (g *cudaPreprocessor) setChunk(L int) {
	if L < 32 || L%32 != 0 {
		panic(fmt.Sprintf("preprocess: chunk length %d", L))
	}
	g.hpL = L
	nchunk := ceilDiv(g.t, L)
	grid := compute.D1(ceilDiv(nchunk*ceilDiv(g.c, 32), hpWarps))
	for _, p := range []*compute.Prepared{g.fFwd, g.fBwd} {
		p.SetGrid(grid)
		p.Set(5, int32(L))
		p.Set(7, int32(nchunk))
	}
}

// release frees everything g holds on the device; zero handles are
// skipped. It returns the first error.
func (g *cudaPreprocessor) release(c *compute.Ctx) error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	bufs := []*compute.Mem{&g.in[0], &g.in[1], &g.cmap, &g.sums, &g.mean, &g.x, &g.f, &g.y, &g.z, &g.coef, &g.taps, &g.wPairs, &g.wDense, &g.wGroups}
	for _, b := range bufs {
		keep(c.Free(*b))
		*b = compute.Mem{}
	}
	for _, p := range []**compute.Prepared{&g.fSums, &g.fMeans, &g.fCAR, &g.fFwd, &g.fBwd, &g.fDirect, &g.fWhite} {
		if *p != nil {
			(*p).Free()
			*p = nil
		}
	}
	for i := range 2 {
		for _, e := range []*compute.Event{&g.uploaded[i], &g.consumed[i]} {
			if *e != (compute.Event{}) {
				keep(c.DestroyEvent(*e))
				*e = compute.Event{}
			}
		}
	}
	for _, e := range g.stages {
		keep(c.DestroyEvent(e))
	}
	g.stages = nil
	if g.copyStream != (compute.Stream{}) {
		keep(c.DestroyStream(g.copyStream))
		g.copyStream = compute.Stream{}
	}
	g.pinMu.Lock()
	for _, h := range g.pinned {
		keep(c.FreeHost(h))
	}
	g.pinned = nil
	g.pinMu.Unlock()
	return first
}

// Close waits for the device, then frees g's device buffers, pinned host
// buffers (slices from PinnedWindows and PinnedOutput must not be used
// afterwards), stream and events. Close may be called more than once.
func (g *cudaPreprocessor) Close() error {
	if g.closed {
		return nil
	}
	g.closed = true
	return g.dev.Do(func(c *compute.Ctx) error {
		err := c.SyncDevice()
		if err2 := g.release(c); err == nil {
			err = err2
		}
		return err
	})
}

// check panics if g was closed.
func (g *cudaPreprocessor) check(op string) {
	if g.closed {
		panic("preprocess: cudaPreprocessor." + op + " after Close")
	}
}

// Params returns the parameters g was built with.
func (g *cudaPreprocessor) Params() Params {
	p := g.p
	p.ChanMap = append([]int(nil), p.ChanMap...)
	return p
}

// Channels returns C, the number of channels in the output.
func (g *cudaPreprocessor) Channels() int { return g.c }

// Len returns T, the number of samples of a padded window.
func (g *cudaPreprocessor) Len() int { return g.t }

// Device returns the device g runs on.
func (g *cudaPreprocessor) Device() *compute.Device { return g.dev }
