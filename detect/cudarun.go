package detect

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"dspk/compute"
)

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
