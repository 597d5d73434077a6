package detect

import (
	_ "embed"
	"fmt"
	"math"
	"slices"

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
	if err := d.kernels(c); err != nil {
		return err
	}
	return d.buffers(c)
}

// kernels compiles the kernels for d's sizes and looks up those d's
// configuration uses.
func (d *gpuDetector) kernels(c *compute.Ctx) error {
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
	return err
}

// buffers allocates the device buffers and the slots' host counts and
// events, and uploads the grid (and the channel unions where the bounds
// kernel uses them).
func (d *gpuDetector) buffers(c *compute.Ctx) (err error) {
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
