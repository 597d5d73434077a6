package detect

import (
	"fmt"

	"dspk/compute"
)

// mark records stage event i when timing.
func (d *gpuDetector) mark(c *compute.Ctx, i int) error {
	if d.stages == nil {
		return nil
	}
	return c.Record(d.stages[i])
}

// SetTiming turns the recording of events between the stages on or off;
// [gpuDetector.StageTimes] then reads them. It must be called inside the
// device's Do.
func (d *gpuDetector) SetTiming(c *compute.Ctx, on bool) error {
	if !on {
		for _, e := range d.stages {
			if err := c.DestroyEvent(e); err != nil {
				return err
			}
		}
		d.stages = nil
		return nil
	}
	if d.stages != nil {
		return nil
	}
	for range len(GPUStageNames) + 1 {
		e, err := c.NewEvent()
		if err != nil {
			return err
		}
		d.stages = append(d.stages, e)
	}
	return nil
}

// StageTimes returns the milliseconds of each stage of the last
// DetectDevice (named by GPUStageNames), with timing on. The last run of
// a window that overflowed a list is the one timed.
func (d *gpuDetector) StageTimes(c *compute.Ctx) ([]float64, error) {
	if d.stages == nil {
		return nil, fmt.Errorf("detect: gpuDetector.StageTimes without SetTiming")
	}
	out := make([]float64, len(GPUStageNames))
	for i := range out {
		ms, err := c.Elapsed(d.stages[i], d.stages[i+1])
		if err != nil {
			return nil, err
		}
		out[i] = float64(ms)
	}
	return out, nil
}

// SetStageTiming turns on or off the recording of events between the GPU
// stages of DetectWindow; [Detector.StageTimes] reads them. It is an error
// on a detector that is not on a CUDA device.
func (d *Detector) SetStageTiming(on bool) error {
	if d.gpu == nil {
		return fmt.Errorf("detect: stage timing needs a detector on a CUDA device")
	}
	return d.dev.Do(func(c *compute.Ctx) error { return d.gpu.SetTiming(c, on) })
}

// StageTimes returns the milliseconds of each GPU stage (named by
// GPUStageNames) of the last DetectWindow, with stage timing on.
func (d *Detector) StageTimes() ([]float64, error) {
	if d.gpu == nil {
		return nil, fmt.Errorf("detect: stage timing needs a detector on a CUDA device")
	}
	var ms []float64
	err := d.dev.Do(func(c *compute.Ctx) error {
		var err error
		ms, err = d.gpu.StageTimes(c)
		return err
	})
	return ms, err
}
