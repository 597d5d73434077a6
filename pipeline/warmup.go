package pipeline

import (
	"dspk/compute"
	"dspk/linalg"
	"dspk/probe"
	"dspk/recording"
)

// WarmUp starts, where the whitening pass's second moment is a cuBLAS
// product (linalg.SecondMomentUsesBLAS: GPUs without full-rate FP64), that
// pass's first product — the second moment of one window of a pipeline of
// rec, pr and cfg — on scratch memory, on a device of its own opened on
// dev's GPU (the same context; its own stream, cuBLAS handle and lock),
// and returns a function that waits for it to end and its device to
// close. The first cuBLAS product in a process costs 40–60 ms (cuBLAS
// loads, chooses and loads its kernel) against 0.5 ms later; run beside
// [Plan.New], it leaves the whitening pass a loaded kernel. The scratch
// window's contents are never read back. On the CPU, where dspk's own
// kernel forms the product (it loads in well under a millisecond, and a
// second device would only compete with the pipeline's set-up), or where
// anything fails, it does nothing. Call the returned function before
// closing dev.
func WarmUp(dev *compute.Device, rec recording.Recording, pr *probe.Probe, cfg Config) (wait func()) {
	if !linalg.SecondMomentUsesBLAS(dev) {
		return func() {}
	}
	return warmUp(dev, rec, pr, cfg)
}

// warmUp is WarmUp whatever forms the product on a GPU.
func warmUp(dev *compute.Device, rec recording.Recording, pr *probe.Probe, cfg Config) (wait func()) {
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
