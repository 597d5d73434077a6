package detect

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"dspk/compute"
)

//go:embed kernels/detect.cu
var gpuSource string

// Sizes shared with kernels/detect.cu.
const (
	tcThreads = 128 // TC_THREADS
	tcR       = 4   // TC_R, outputs per thread of tconv
	// tcMMAThreads and tcMMARows are the threads and output columns of a
	// block of tconv_mma (32·TC_WARPS, TC_BROWS) for TC_NG = 1.
	tcMMAThreads = 128
	tcMMARows    = 256
	cgF          = 32 // CG_F
	cgW          = 8  // CG_W
	unionGroup   = 4  // UG: adjacent centres of a warp of bounds_u, which reads the union of their channels
	recHead      = 6  // REC_HEAD
	// gpuGrid is the number of blocks of the grid-stride kernels
	// (centres, local_max, clear, emit), whose work is counted on the
	// device.
	gpuGrid = 1024
	// initPairs, initStrong and initDets are the first capacities of the
	// list of pairs to evaluate, the strong list and the detection list;
	// each grows when a window overflows it (and the window is redone).
	initPairs = 1 << 22
	// startPriority is the priority of Start's stream: the device's
	// highest, so that the detection's blocks go first and the next
	// window's preprocessing on the caller's stream fills the room they
	// leave (docs/perf.md: a 10-minute pass 0.70–0.79 s against 0.79–1.08
	// at equal priority).
	startPriority = -100
	// maxGridY is the largest grid height of a CUDA launch.
	maxGridY   = 65535
	initStrong = 1 << 22
	initDets   = 1 << 15
	// minGuess is the fewest spike records downloaded together with the
	// counts; the guess is otherwise 1.5 × the last window's spikes, and
	// a window with more downloads the rest after a second
	// synchronisation.
	minGuess = 1024
)

// gpuDetectConfig selects among kernel variants; every variant computes
// the same result.
type gpuDetectConfig struct {
	mma int // filter bank on the FP64 tensor cores: rows per product, 8 or 16 (TC_MMA); 0: on the FMA units
	ng  int // tensor-core filter bank: groups of 64 rows per warp (TC_NG; 0 means 1)
	// scalar bounds: one column per lane even where the window's columns
	// allow four (a multiple of 4: one vector load per channel)
	scalarBounds bool
	// noUnion: each centre's bound from its own channels' rows of M, not
	// from the rows of the union of unionGroup adjacent centres' channels
	noUnion bool
}

// defaultGPUDetectConfig is the fastest configuration measured on an
// H200 (docs/perf.md): the filter bank on the FP64 tensor cores in
// m16n8k4 products, four groups of 64 rows per warp (0.47 ms a window
// against 0.62 with one).
var defaultGPUDetectConfig = gpuDetectConfig{mma: 16, ng: 4}

// gpuDetectConfigFor returns the configuration for a GPU of compute
// capability major.minor: the m16n8k4 FP64 products exist from sm_90, the
// m8n8k4 ones from sm_80; older GPUs run the filter bank on the FMA units.
func gpuDetectConfigFor(major, minor int) gpuDetectConfig {
	cfg := defaultGPUDetectConfig
	switch cc := major*10 + minor; {
	case cc < 80:
		cfg.mma = 0
	case cc < 90:
		cfg.mma, cfg.ng = 8, 1
	}
	return cfg
}

// GPUStageNames name the GPU stages that [Detector.StageTimes] reports, in
// launch order.
var GPUStageNames = []string{"filter bank", "bounds", "centres", "local max", "clear", "records", "download"}

// gpuDetector is the CUDA back end of [Detector]: it finds the same spikes, in
// the same order, with the same amplitudes, positions and features, from
// a whitened window that stays on the device. Stages (kernels/detect.cu):
// the temporal filter bank in float64 rounded to float32 (as the CPU's
// float64 FFT; on the FP64 tensor cores from sm_80), the exact
// Cauchy–Schwarz bound of every (centre, column) pair with a list of the
// pairs that pass it, the per-centre combination of those pairs (one per
// thread) with the best template and sign chosen in registers and each
// strong point set in a map of the window (with the largest per bucket of
// columns), the local maximum over the nC2 nearest centres × ±nt0min
// columns read from that map, and one record per spike (template,
// sign, position, features) computed on the device; only the records are
// downloaded, then ordered by column and centre on the host. Every
// arithmetic step after the filter bank follows the CPU's order without
// fused multiply-adds, so results are bit for bit the CPU's except where
// a correlation value lies within ~1e-15 of a float32 rounding boundary.
//
// It owns about (K+1)·C·T' + F·T' float32 of device buffers (T' = T −
// 2·nt; 1.0 GB for NP1), the lists of pairs, strong points and spikes and, once Start
// or Detect is used, its own copy of a window (C·T float32). A
// gpuDetector is not safe for concurrent use; the methods that take a
// *compute.Ctx must be called inside the device's Do.
type gpuDetector struct {
	dev *compute.Device
	g   *Grid
	tm  *Templates

	c, t, ti, nt, nt0, half int
	k, s, nc, nc2, p, f     int
	supShift, nbk           int // bucket width 1<<supShift of the coarse map q and its buckets per centre
	th, thr2                float32
	recWords                int
	bvec                    int  // columns per lane of the bounds kernel
	union                   bool // bounds from the channel unions of adjacent centres (bounds_u)
	cfg                     gpuDetectConfig

	fConv, fBounds, fCentres, fLocal, fClear, fEmit *compute.Kernel

	// smap and q are the strong map P (F·T' words) and its bucket maxima Q
	// (kernels/detect.cu), all zeros between windows.
	b, m, smap, q, counts, ic, ic2, w, chx, chy, wt, wpca compute.Mem
	sf, stp, sa, det, pairs                               compute.Mem
	ulist, ucnt, umask                                    compute.Mem // bounds_u: channel unions and each centre's mask
	strongCap, detCap, pairCap                            int
	guess                                                 int // records to download with the counts next time

	// slots hold the windows in flight: DetectDevice uses slots[0];
	// the started windows awaiting Finish are slots[head], … (npend of
	// them, at most StartDepth).
	slots       [StartDepth]gpuSlot
	head, npend int

	// Start's stream and event: the detection of a started window runs
	// on its own stream, so that the next window's preprocessing on the
	// caller's stream shares the device with it; ready orders the
	// detection after the window's preprocessing.
	stream compute.Stream
	ready  compute.Event

	order []int32 // scratch of the host ordering

	stages []compute.Event // when not nil, recorded between the stages
	closed bool
}

// gpuSlot is what one window in flight holds until its spikes are
// decoded: the array of the window it detects (allocated on first
// use), the device records and their pinned download with the counts, the
// event recorded after the downloads, and the window's place.
type gpuSlot struct {
	xin, rec      compute.Mem
	hCounts, hRec *compute.HostMem
	done          compute.Event
	guess         int // records downloaded with the counts
	ownStart      int64
	owned         int
}

// newGPUDetector returns the CUDA back end of a [Detector] on dev for the
// windows that NewDetector(nil, g, tm, T, prm) accepts: it compiles the
// kernels for the sizes (K, nt, S, nC, nC2, P, nt0min as compile-time
// constants) and the variant cfg, uploads the grid and templates and
// allocates the device buffers. It returns an error if dev is not a CUDA
// device, the sizes do not fit the kernels, or the device fails; it panics
// where NewDetector does.
func newGPUDetector(dev *compute.Device, g *Grid, tm *Templates, T int, prm Params, cfg gpuDetectConfig) (*gpuDetector, error) {
	tm.check()
	if tm.NT != prm.NT {
		panic(fmt.Sprintf("detect: templates of %d samples for nt = %d", tm.NT, prm.NT))
	}
	d, err := newGPUDetectorSized(dev, g, tm.K, tm.P, T, prm, cfg)
	if err != nil {
		return nil, err
	}
	if err := d.setTemplates(tm); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// newGPUDetectorSized is newGPUDetector without the templates' values:
// for k templates and p features of prm.NT samples, given later by
// setTemplates.
func newGPUDetectorSized(dev *compute.Device, g *Grid, k, p, T int, prm Params, cfg gpuDetectConfig) (*gpuDetector, error) {
	if err := prm.Validate(); err != nil {
		panic(err.Error())
	}
	if T <= 2*prm.NT {
		panic(fmt.Sprintf("detect: window of %d columns with %d of padding on each side", T, prm.NT))
	}
	if k*g.S > math.MaxInt16 {
		panic(fmt.Sprintf("detect: %d templates × %d sizes", k, g.S))
	}
	if dev == nil || dev.Kind() != compute.CUDA {
		name := "nil"
		if dev != nil {
			name = dev.String()
		}
		return nil, fmt.Errorf("detect: GPU detector: device %s is not a CUDA GPU", name)
	}
	d := &gpuDetector{
		dev: dev, g: g,
		c: g.C(), t: T, ti: T - 2*prm.NT, nt: prm.NT, nt0: prm.NT0Min, half: prm.NT / 2,
		k: k, s: g.S, nc: g.NC, nc2: g.NC2, p: p, f: g.F(),
		th: float32(prm.ThUniversal), cfg: cfg,
		thr2: float32(prm.ThUniversal * prm.ThUniversal * (1 - boundSlack)),
	}
	d.recWords = recHead + d.nc*d.p
	d.supShift = supShiftFor(d.nt0)
	d.nbk = ceilDiv(d.ti, 1<<d.supShift)
	switch {
	case d.nc > 64:
		return nil, fmt.Errorf("detect: GPU detector: %d channels per centre, more than the 64 the GPU kernels hold in registers", d.nc)
	case int64(d.c)*int64(d.ti)*int64(d.k) > math.MaxInt32*4 || int64(d.f)*int64(d.ti) > math.MaxInt32:
		return nil, fmt.Errorf("detect: GPU detector: window of %d columns × %d centres is too large", d.ti, d.f)
	case d.ti > math.MaxInt32/cgF || ceilDiv(d.ti, 32) > maxGridY:
		return nil, fmt.Errorf("detect: GPU detector: window of %d columns is too large", d.ti)
	}
	err := dev.Do(func(c *compute.Ctx) error {
		if err := d.init(c); err != nil {
			d.release(c)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// init compiles the kernels, allocates the buffers and uploads the grid
// and templates.
func (d *gpuDetector) init(c *compute.Ctx) error {
	opts := []string{
		fmt.Sprintf("-DDK=%d", d.k), fmt.Sprintf("-DDNT=%d", d.nt), fmt.Sprintf("-DDS=%d", d.s),
		fmt.Sprintf("-DDNC=%d", d.nc), fmt.Sprintf("-DDNC2=%d", d.nc2), fmt.Sprintf("-DDP=%d", d.p),
		fmt.Sprintf("-DDR=%d", d.nt0), fmt.Sprintf("-DSUP_SHIFT=%d", d.supShift), fmt.Sprintf("-DTC_MMA=%d", max(d.cfg.mma, 8)), fmt.Sprintf("-DTC_NG=%d", max(d.cfg.ng, 1)),
	}
	mod, err := c.Compile("detect/kernels/detect.cu", gpuSource, opts...)
	if err != nil {
		return err
	}
	fn := func(name string) *compute.Kernel {
		if err != nil {
			return nil
		}
		var f *compute.Kernel
		f, err = mod.Kernel(name)
		return f
	}
	conv := "tconv"
	if d.cfg.mma != 0 {
		conv = "tconv_mma"
	}
	bounds := "bounds"
	if d.union = !d.cfg.noUnion && unionGroup*d.nc <= 64; d.union {
		bounds = "bounds_u"
	}
	if d.bvec = 1; d.ti%4 == 0 && !d.cfg.scalarBounds {
		bounds, d.bvec = bounds+"4", 4
	}
	d.fConv, d.fBounds, d.fCentres = fn(conv), fn(bounds), fn("centres")
	d.fLocal, d.fClear, d.fEmit = fn("local_max"), fn("clear"), fn("emit")
	if err != nil {
		return err
	}
	alloc := func(b *compute.Mem, bytes int) {
		if err == nil {
			*b, err = c.Alloc(max(bytes, 4))
		}
	}
	C, Ti := d.c, d.ti
	alloc(&d.b, C*Ti*d.k*4)
	alloc(&d.m, C*Ti*4)
	alloc(&d.smap, d.f*Ti*4)
	alloc(&d.q, d.f*d.nbk*4)
	alloc(&d.counts, 3*4)
	alloc(&d.ic, len(d.g.IC)*4)
	alloc(&d.ic2, len(d.g.IC2)*4)
	alloc(&d.w, len(d.g.Weights)*4)
	alloc(&d.chx, C*8)
	alloc(&d.chy, C*8)
	alloc(&d.wt, d.k*d.nt*8)
	alloc(&d.wpca, d.p*d.nt*4)
	var ulist, ucnt []int32
	var umask []uint64
	if d.union {
		ulist, ucnt, umask = d.channelUnions()
		alloc(&d.ulist, len(ulist)*4)
		alloc(&d.ucnt, len(ucnt)*4)
		alloc(&d.umask, len(umask)*8)
	}
	if err != nil {
		return err
	}
	if d.union {
		for _, e := range []error{compute.Upload(c, d.ulist.Ptr, ulist), compute.Upload(c, d.ucnt.Ptr, ucnt), compute.Upload(c, d.umask.Ptr, umask)} {
			if e != nil {
				return e
			}
		}
	}
	if err := d.growStrong(c, min(initStrong, d.f*Ti)); err != nil {
		return err
	}
	if err := d.growPairs(c, min(initPairs, d.f*Ti)); err != nil {
		return err
	}
	if err := d.growDets(c, initDets); err != nil {
		return err
	}
	for i := range d.slots {
		sl := &d.slots[i]
		if sl.hCounts, err = c.AllocHost(3 * 4); err != nil {
			return err
		}
		if sl.done, err = c.NewEvent(); err != nil {
			return err
		}
	}
	for _, e := range []error{
		compute.Upload(c, d.ic.Ptr, d.g.IC), compute.Upload(c, d.ic2.Ptr, d.g.IC2),
		compute.Upload(c, d.w.Ptr, d.g.Weights), compute.Upload(c, d.chx.Ptr, d.g.ChanX),
		compute.Upload(c, d.chy.Ptr, d.g.ChanY),
		c.Memset8(d.smap.Ptr, 0, d.smap.Bytes),
		c.Memset8(d.q.Ptr, 0, d.q.Bytes),
	} {
		if e != nil {
			return e
		}
	}
	return c.Sync()
}

// setTemplates uploads the templates (k×nt, as float64) and the feature
// basis (p×nt) of tm, whose sizes newGPUDetectorSized was given.
func (d *gpuDetector) setTemplates(tm *Templates) error {
	if tm.K != d.k || tm.P != d.p || tm.NT != d.nt {
		panic(fmt.Sprintf("detect: %d×%d×%d templates for a GPU detector of %d×%d×%d", tm.K, tm.P, tm.NT, d.k, d.p, d.nt))
	}
	wt := make([]float64, len(tm.WTEMP))
	for i, v := range tm.WTEMP {
		wt[i] = float64(v)
	}
	err := d.dev.Do(func(c *compute.Ctx) error {
		if err := compute.Upload(c, d.wt.Ptr, wt); err != nil {
			return err
		}
		if err := compute.Upload(c, d.wpca.Ptr, tm.WPCA); err != nil {
			return err
		}
		return c.Sync()
	})
	if err != nil {
		return err
	}
	d.tm = tm
	return nil
}

// Close waits for the device, then frees d's device and pinned buffers.
// Close may be called more than once.
func (d *gpuDetector) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	return d.dev.Do(func(c *compute.Ctx) error {
		err := c.SyncDevice()
		if err2 := d.release(c); err == nil {
			err = err2
		}
		return err
	})
}

// Detect is [Detector.Detect] on the GPU from a whitened window in host
// memory (for tests and benchmarks): it
// uploads x (pageable, about 7 GB/s), detects and appends the spikes to
// dst. It panics as Detector.Detect does.
func (d *gpuDetector) Detect(dst *Spikes, x []float32, ownStart int64, owned int) (Stats, error) {
	if len(x) != d.c*d.t {
		panic(fmt.Sprintf("detect: Detect of %d values for %d channels × %d columns", len(x), d.c, d.t))
	}
	d.checkIdle("Detect")
	var st Stats
	err := d.dev.Do(func(c *compute.Ctx) error {
		sl := &d.slots[0]
		if err := d.allocSlot(c, sl); err != nil {
			return err
		}
		if err := compute.Upload(c, sl.xin.Ptr, x); err != nil {
			return err
		}
		var err error
		st, err = d.DetectDevice(c, dst, sl.xin.Ptr, ownStart, owned)
		return err
	})
	return st, err
}

// DetectDevice is [Detector.Detect] of the whitened window at x on the
// device ([C][T] float32, channel-major), ordered after the work already
// on c's stream: it appends the spikes to dst and returns when they are
// there (x may then be overwritten). The counts it returns: Columns and
// ConvFlops as the CPU's for one chunk of T−2·nt columns; Strong is the
// number of (centre, column) pairs above Th in those columns; Spikes the
// spikes kept; the pruning counts are not kept (zero). It panics if owned
// is not in [1, T−2·nt] or if started windows await Finish.
func (d *gpuDetector) DetectDevice(c *compute.Ctx, dst *Spikes, x compute.Ptr, ownStart int64, owned int) (Stats, error) {
	d.checkOwned(owned)
	d.checkIdle("DetectDevice")
	sl := &d.slots[0]
	sl.ownStart, sl.owned = ownStart, owned
	if err := d.enqueue(c, sl, x); err != nil {
		return Stats{}, err
	}
	return d.finish(c, dst, sl, x, nil)
}

// Start enqueues the detection of win's working array (whitened, on the
// device), as DetectDevice, after the work already on c's stream, and
// returns at once. The detection runs on the detector's own stream,
// behind that of the windows started before it, on the array itself: the
// next slot takes it in exchange for its own ([compute.Window.SwapDataMem],
// no copy), and the work enqueued on c's stream after Start (which writes
// the window's new array) waits for the detection that last read that
// array. The caller may so reload and preprocess the window, which then
// runs on the device alongside the detection, and start it too. Finish
// waits for the oldest started window's spikes. At most StartDepth
// windows may await Finish.
func (d *gpuDetector) Start(c *compute.Ctx, win *compute.Window, ownStart int64, owned int) error {
	d.checkOwned(owned)
	if d.npend == StartDepth {
		panic(fmt.Sprintf("detect: gpuDetector.Start with %d windows awaiting Finish", StartDepth))
	}
	sl := &d.slots[(d.head+d.npend)%StartDepth]
	if err := d.allocSlot(c, sl); err != nil {
		return err
	}
	s, err := d.startStream(c)
	if err != nil {
		return err
	}
	// The detection waits for the work on c's stream (the window's
	// preprocessing); c's later work waits for the detection that used
	// the slot's array before (sl.done, not yet recorded again).
	if err := c.Record(d.ready); err != nil {
		return err
	}
	if err := s.Wait(d.ready); err != nil {
		return err
	}
	if err := c.Wait(sl.done); err != nil {
		return err
	}
	sl.xin = win.SwapDataMem(sl.xin)
	sl.ownStart, sl.owned = ownStart, owned
	if err := d.enqueue(s, sl, sl.xin.Ptr); err != nil {
		return err
	}
	d.npend++
	return nil
}

// startStream returns the context of Start's stream, creating the stream
// and its events on first use.
func (d *gpuDetector) startStream(c *compute.Ctx) (*compute.Ctx, error) {
	if d.stream == (compute.Stream{}) {
		var err error
		if d.stream, err = c.NewStreamPriority(startPriority); err != nil {
			return nil, err
		}
		if d.ready, err = c.NewEvent(); err != nil {
			return nil, err
		}
	}
	return c.WithStream(d.stream), nil
}

// Finish waits for the detection of the oldest started window, appends
// its spikes to dst and returns its counts (those of DetectDevice).
func (d *gpuDetector) Finish(c *compute.Ctx, dst *Spikes) (Stats, error) {
	if d.npend == 0 {
		panic("detect: gpuDetector.Finish without Start")
	}
	s, err := d.startStream(c)
	if err != nil {
		return Stats{}, err
	}
	sl := &d.slots[d.head]
	var later []*gpuSlot // started after it: redone after it if the lists grow
	for i := 1; i < d.npend; i++ {
		later = append(later, &d.slots[(d.head+i)%StartDepth])
	}
	d.head = (d.head + 1) % StartDepth
	d.npend--
	return d.finish(s, dst, sl, sl.xin.Ptr, later)
}

// allocSlot allocates, on first use, sl's array of a window (C·T
// float32), which Detect uploads into and Start exchanges for a window's.
func (d *gpuDetector) allocSlot(c *compute.Ctx, sl *gpuSlot) error {
	if sl.xin.Ptr != 0 {
		return nil
	}
	var err error
	sl.xin, err = c.Alloc(d.c * d.t * 4)
	return err
}

func (d *gpuDetector) checkOwned(owned int) {
	if d.closed {
		panic("detect: gpuDetector used after Close")
	}
	if owned < 1 || owned > d.ti {
		panic(fmt.Sprintf("detect: window owning %d of %d columns", owned, d.ti))
	}
}

func (d *gpuDetector) checkIdle(op string) {
	if d.npend != 0 {
		panic(fmt.Sprintf("detect: gpuDetector.%s with %d started windows awaiting Finish", op, d.npend))
	}
}

// finish waits for the work enqueued on the window at x in slot sl,
// redoes it with larger lists while a list overflowed, and decodes the
// spikes. The windows in later, enqueued after sl's on c's stream, share
// the lists: before the lists grow, finish waits for them as well, and it
// enqueues them again after sl's redo.
func (d *gpuDetector) finish(c *compute.Ctx, dst *Spikes, sl *gpuSlot, x compute.Ptr, later []*gpuSlot) (Stats, error) {
	for {
		if err := c.EventSync(sl.done); err != nil {
			return Stats{}, fmt.Errorf("detect: GPU detection: %w", err)
		}
		h := unsafe.Slice((*int32)(sl.hCounts.Ptr()), 3)
		n, nd, np := int(h[0]), int(h[1]), int(h[2])
		if np > d.pairCap || n > d.strongCap || nd > d.detCap {
			if err := c.SyncOp("detect: GPU detection"); err != nil {
				return Stats{}, err
			}
			if np > d.pairCap {
				if err := d.growPairs(c, np+np/4); err != nil {
					return Stats{}, err
				}
			} else if n > d.strongCap {
				if err := d.growStrong(c, n+n/4); err != nil {
					return Stats{}, err
				}
			} else if err := d.growDets(c, nd+nd/4); err != nil {
				return Stats{}, err
			}
			if err := d.enqueue(c, sl, x); err != nil {
				return Stats{}, err
			}
			for _, o := range later {
				if err := d.enqueue(c, o, o.xin.Ptr); err != nil {
					return Stats{}, err
				}
			}
			continue
		}
		if nd > sl.guess {
			// More spikes than the records downloaded with the counts.
			rb := d.recWords * 4
			if err := c.CopyDtoH(sl.hRec, sl.guess*rb, sl.rec.Ptr.Add(sl.guess*rb), (nd-sl.guess)*rb); err != nil {
				return Stats{}, err
			}
			if err := c.SyncOp("detect: GPU spike download"); err != nil {
				return Stats{}, err
			}
		}
		d.guess = min(d.detCap, max(minGuess, nd+nd/2))
		d.decode(dst, sl, nd)
		cols := int64(d.ti)
		return Stats{
			Columns: cols, ConvFlops: int64(2*d.c*d.k*d.nt) * cols,
			Strong: int64(n), Spikes: int64(nd),
		}, nil
	}
}

// enqueue enqueues the stages of the window at x on c's stream, then the
// download into sl of the counts (which may exceed the capacities:
// nothing beyond them is written, and the suppression maps are clean
// again) and of the first sl.guess records, and records sl.done.
func (d *gpuDetector) enqueue(c *compute.Ctx, sl *gpuSlot, x compute.Ptr) error {
	C, Ti, owned := d.c, d.ti, sl.owned
	cnt := d.counts.Ptr
	ndet, npairs := cnt.Add(4), cnt.Add(8)
	sl.guess = min(d.guess, d.detCap)
	steps := []func() error{
		func() error { return c.Memset32(cnt, 0, 3) },
		func() error { return d.mark(c, 0) },
		func() error {
			if d.cfg.mma != 0 {
				return c.Launch(d.fConv, compute.Dim3{X: ceilDiv(Ti, tcMMARows*max(d.cfg.ng, 1)), Y: C}, compute.D1(tcMMAThreads), 0,
					d.b, d.m, x, d.wt, int32(d.t), int32(Ti))
			}
			return c.Launch(d.fConv, compute.Dim3{X: ceilDiv(Ti, tcThreads*tcR), Y: C}, compute.D1(tcThreads), 0,
				d.b, d.m, x, d.wt, int32(d.t), int32(Ti))
		},
		func() error { return d.mark(c, 1) },
		func() error {
			grid, block := compute.Dim3{X: ceilDiv(d.f, cgF), Y: ceilDiv(Ti, 32*d.bvec)}, compute.Dim3{X: 32, Y: cgW}
			if d.union {
				return c.Launch(d.fBounds, grid, block, 0,
					d.pairs, npairs, int32(d.pairCap), d.m, d.ulist, d.ucnt, d.umask, int32(d.f), int32(Ti), d.thr2)
			}
			return c.Launch(d.fBounds, grid, block, 0,
				d.pairs, npairs, int32(d.pairCap), d.m, d.ic, int32(d.f), int32(Ti), d.thr2)
		},
		func() error { return d.mark(c, 2) },
		func() error {
			return c.Launch(d.fCentres, compute.D1(gpuGrid), compute.D1(256), 0,
				d.sf, d.stp, d.sa, cnt, int32(d.strongCap), d.pairs, npairs, int32(d.pairCap), d.b, d.ic, d.w, int32(Ti), d.thr2, d.th,
				d.smap, d.q, int32(d.nbk))
		},
		func() error { return d.mark(c, 3) },
		func() error {
			return c.Launch(d.fLocal, compute.D1(gpuGrid), compute.D1(256), 0,
				d.det, ndet, int32(d.detCap), d.sf, d.stp, d.sa, cnt, int32(d.strongCap), d.smap, d.q, int32(d.nbk),
				d.ic2, int32(Ti), int32(owned))
		},
		func() error { return d.mark(c, 4) },
		func() error {
			return c.Launch(d.fClear, compute.D1(gpuGrid), compute.D1(256), 0,
				d.smap, d.q, int32(d.nbk), d.sf, d.stp, cnt, int32(d.strongCap), int32(Ti))
		},
		func() error { return d.mark(c, 5) },
		func() error {
			return c.Launch(d.fEmit, compute.D1(gpuGrid), compute.D1(64), 0,
				sl.rec, d.det, ndet, int32(d.detCap), d.sf, d.stp, d.sa, d.b, x, d.ic, d.w, d.chx, d.chy, d.wpca,
				int32(d.t), int32(Ti), d.thr2)
		},
		func() error { return d.mark(c, 6) },
		func() error { return c.CopyDtoH(sl.hCounts, 0, cnt, 12) },
		func() error { return c.CopyDtoH(sl.hRec, 0, sl.rec.Ptr, sl.guess*d.recWords*4) },
		func() error { return d.mark(c, 7) },
		func() error { return c.Record(sl.done) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// decode appends the nd records downloaded into sl to dst in order of column, then
// centre (the CPU's order).
func (d *gpuDetector) decode(dst *Spikes, sl *gpuSlot, nd int) {
	ownStart := sl.ownStart
	rec := unsafe.Slice((*uint32)(sl.hRec.Ptr()), nd*d.recWords)
	rw := d.recWords
	d.order = d.order[:0]
	for i := range nd {
		d.order = append(d.order, int32(i))
	}
	slices.SortFunc(d.order, func(a, b int32) int {
		ra, rb := rec[int(a)*rw:], rec[int(b)*rw:]
		if ra[0] != rb[0] {
			return int(int32(ra[0]) - int32(rb[0]))
		}
		return int(int32(ra[1]) - int32(rb[1]))
	})
	if dst.Len() == 0 {
		dst.NC, dst.P = d.nc, d.p
	}
	shift := int64(d.half - d.nt0)
	for _, i := range d.order {
		r := rec[int(i)*rw : int(i+1)*rw]
		f := int32(r[1])
		dst.Sample = append(dst.Sample, ownStart+int64(int32(r[0]))-shift)
		dst.Center = append(dst.Center, f)
		dst.Template = append(dst.Template, int16(r[2]&0xffff))
		dst.Sign = append(dst.Sign, int8(int16(r[2]>>16)))
		dst.Amplitude = append(dst.Amplitude, math.Float32frombits(r[3]))
		dst.X = append(dst.X, math.Float32frombits(r[4]))
		dst.Y = append(dst.Y, math.Float32frombits(r[5]))
		dst.Channels = append(dst.Channels, d.g.IC[int(f)*d.nc:int(f+1)*d.nc]...)
		for _, v := range r[recHead:] {
			dst.Features = append(dst.Features, math.Float32frombits(v))
		}
	}
}

// channelUnions returns, for each group of unionGroup adjacent centres
// (the last one shorter), the union of their channels in order of first
// appearance (unionGroup·nC slots per group, ulist), its length (ucnt)
// and, per centre, the mask of its channels among them (umask, bit u:
// entry u), as bounds_u reads them.
func (d *gpuDetector) channelUnions() (ulist, ucnt []int32, umask []uint64) {
	umax := unionGroup * d.nc
	ngrp := ceilDiv(d.f, unionGroup)
	ulist = make([]int32, ngrp*umax)
	ucnt = make([]int32, ngrp)
	umask = make([]uint64, ngrp*unionGroup)
	for g := range ngrp {
		u := ulist[g*umax : g*umax]
		for r := range unionGroup {
			f := g*unionGroup + r
			if f >= d.f {
				break
			}
			for _, ch := range d.g.IC[f*d.nc : (f+1)*d.nc] {
				i := slices.Index(u, ch)
				if i < 0 {
					i = len(u)
					u = append(u, ch)
				}
				umask[g*unionGroup+r] |= 1 << i
			}
		}
		ucnt[g] = int32(len(u))
	}
	return ulist, ucnt, umask
}

// supShiftFor returns the bucket width, as a shift, of the coarse strong
// map for a suppression radius of r columns: the narrowest power of two
// from 32 up that is wider than 2·r, so that a ±r range meets at most two
// buckets (64 for Kilosort4's nt0min = 20).
func supShiftFor(r int) int {
	s := 5
	for 1<<s <= 2*r {
		s++
	}
	return s
}

// ceilDiv returns ⌈a/b⌉ for positive b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
