package detect

import "dspk/compute"

// growStrong (re)allocates the strong list for n points.
func (d *gpuDetector) growStrong(c *compute.Ctx, n int) error {
	for _, b := range []*compute.Mem{&d.sf, &d.stp, &d.sa} {
		if err := c.Free(*b); err != nil {
			return err
		}
		*b = compute.Mem{}
	}
	n = max(n, 1)
	var err error
	for _, b := range []*compute.Mem{&d.sf, &d.stp, &d.sa} {
		if *b, err = c.Alloc(n * 4); err != nil {
			return err
		}
	}
	d.strongCap = n
	return nil
}

// growPairs (re)allocates the list of the pairs to evaluate for n pairs.
func (d *gpuDetector) growPairs(c *compute.Ctx, n int) error {
	if err := c.Free(d.pairs); err != nil {
		return err
	}
	d.pairs = compute.Mem{}
	n = max(n, 1)
	var err error
	if d.pairs, err = c.Alloc(n * 4); err != nil {
		return err
	}
	d.pairCap = n
	return nil
}

// growDets (re)allocates the detection list and every slot's records
// for n spikes.
func (d *gpuDetector) growDets(c *compute.Ctx, n int) error {
	n = max(n, 1)
	if err := c.Free(d.det); err != nil {
		return err
	}
	d.det = compute.Mem{}
	for i := range d.slots {
		sl := &d.slots[i]
		if err := c.Free(sl.rec); err != nil {
			return err
		}
		sl.rec = compute.Mem{}
		if sl.hRec != nil {
			if err := c.FreeHost(sl.hRec); err != nil {
				return err
			}
			sl.hRec = nil
		}
	}
	var err error
	if d.det, err = c.Alloc(n * 4); err != nil {
		return err
	}
	for i := range d.slots {
		sl := &d.slots[i]
		if sl.rec, err = c.Alloc(n * d.recWords * 4); err != nil {
			return err
		}
		if sl.hRec, err = c.AllocHost(n * d.recWords * 4); err != nil {
			return err
		}
	}
	d.detCap = n
	d.guess = min(max(d.guess, minGuess), n)
	return nil
}

// release frees everything d holds on the device; zero handles are
// skipped. It returns the first error.
func (d *gpuDetector) release(c *compute.Ctx) error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for _, b := range []*compute.Mem{&d.b, &d.m, &d.smap, &d.q, &d.counts, &d.ic, &d.ic2, &d.w, &d.chx, &d.chy,
		&d.wt, &d.wpca, &d.sf, &d.stp, &d.sa, &d.det, &d.pairs, &d.ulist, &d.ucnt, &d.umask} {
		keep(c.Free(*b))
		*b = compute.Mem{}
	}
	for i := range d.slots {
		sl := &d.slots[i]
		for _, b := range []*compute.Mem{&sl.xin, &sl.rec} {
			keep(c.Free(*b))
			*b = compute.Mem{}
		}
		for _, h := range []**compute.HostMem{&sl.hCounts, &sl.hRec} {
			if *h != nil {
				keep(c.FreeHost(*h))
				*h = nil
			}
		}
		if sl.done != (compute.Event{}) {
			keep(c.DestroyEvent(sl.done))
			sl.done = compute.Event{}
		}
	}
	for _, e := range d.stages {
		keep(c.DestroyEvent(e))
	}
	d.stages = nil
	for _, e := range []*compute.Event{&d.ready} {
		if *e != (compute.Event{}) {
			keep(c.DestroyEvent(*e))
			*e = compute.Event{}
		}
	}
	if d.stream != (compute.Stream{}) {
		keep(c.DestroyStream(d.stream))
		d.stream = compute.Stream{}
	}
	return first
}
