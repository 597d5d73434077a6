package compute

import (
	"slices"
	"time"
)

// Sync waits until all work queued on a CUDA device has finished (a fault
// there is returned); on the CPU it does nothing. It must not be called
// inside Do.
func (d *Device) Sync() error {
	if d.gpu == nil {
		return nil
	}
	return d.Do(func(c *Ctx) error { return c.SyncDevice() })
}

// Median is the timing helper of dspk's benchmarks: it runs fn once to
// warm up (compilation, first-touch allocation), then reps times, and
// returns the median wall time of one run. Each timed run ends with
// [Device.Sync], so that on a GPU the time covers the work fn queued, not
// only its launch. It stops at fn's first error. reps < 1 counts as 1.
func (d *Device) Median(reps int, fn func() error) (time.Duration, error) {
	if err := fn(); err != nil {
		return 0, err
	}
	if err := d.Sync(); err != nil {
		return 0, err
	}
	ts := make([]time.Duration, max(reps, 1))
	for i := range ts {
		t := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		if err := d.Sync(); err != nil {
			return 0, err
		}
		ts[i] = time.Since(t)
	}
	slices.Sort(ts)
	return ts[len(ts)/2], nil
}
