package pipeline

import (
	"dspk/compute"
	"dspk/linalg"
	"dspk/probe"
	"dspk/recording"
)

// WarmUp starts, on a device of its own opened on dev's GPU (the same
// context; its own stream, cuBLAS handle and lock), the whitening pass's
// first product — the second moment of one window of a pipeline of rec,
// pr and cfg — on scratch memory, and returns a function that waits for it
// to end and its device to close. Where cuBLAS forms the product
// (linalg.GramGEMM, the default on GPUs without full-rate FP64), the first
// of its kind in a process costs 40–60 ms (cuBLAS chooses and loads its
// kernel) against 0.5 ms later; run beside [Plan.New], it leaves the
// whitening pass a loaded kernel. Where dspk's own kernel forms it
// (linalg.GramTiles, SecondMoment's method on full-rate FP64 GPUs such as the H200),
// it only loads that module ahead. The scratch window's contents are never read back. On the CPU,
// or where anything fails, it does nothing and the pass pays the cost
// itself. Call the returned function before closing dev.
func WarmUp(dev *compute.Device, rec recording.Recording, pr *probe.Probe, cfg Config) (wait func()) {
	if dev == nil || dev.Kind() != compute.CUDA || cfg.validate() != nil || pr.Len() == 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		side, _, err := compute.Open(dev.Spec())
		if err != nil {
			return
		}
		defer side.Close()
		T := recording.Schedule{BatchSize: cfg.BatchSize, Pad: cfg.NT}.Len() // New's windows
		win, err := side.NewWindow(pr.Len(), T, rec.Channels())
		if err != nil {
			return
		}
		defer win.Close()
		sm := linalg.NewSecondMoment(side, pr.Len())
		defer sm.Close()
		sm.AddWindow(win, cfg.NT, cfg.NT+cfg.BatchSize) // as Whitening adds a whole window
	}()
	return func() { <-done }
}
