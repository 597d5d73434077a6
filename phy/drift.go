package phy

import (
	"fmt"
	"os"
	"path/filepath"

	"dspk/export"
	"dspk/figure"
	"dspk/pipeline"
)

// The files of a drift estimate, in a folder of a run with motion
// correction (nblocks > 0: a detect folder, a sort folder, a drift
// folder).
const (
	DriftFile       = "drift.npy"        // dshift [windows, blocks] µm, float64
	DriftTimesFile  = "drift_times.npy"  // window centre times [windows] s, float64
	DriftDepthsFile = "drift_depths.npy" // block depths (yblk) [blocks] µm, float64
)

// DriftOf returns the drift estimate of the run info describes as its
// files hold it, or nil where the run estimated no motion.
func DriftOf(info *pipeline.RunInfo) *figure.Drift {
	m := info.Motion
	if m == nil {
		return nil
	}
	return &figure.Drift{Windows: m.Windows, Blocks: m.Blocks, Dshift: m.Dshift, Times: info.WindowTimes, Depths: m.Yblk}
}

// WriteDrift writes the drift files of d (drift.npy, drift_times.npy and
// drift_depths.npy) into dir.
func WriteDrift(dir string, d *figure.Drift) error {
	if len(d.Dshift) != d.Windows*d.Blocks || len(d.Times) != d.Windows || len(d.Depths) != d.Blocks {
		return fmt.Errorf("drift estimate of %d shifts, %d times, %d depths for %d windows × %d blocks",
			len(d.Dshift), len(d.Times), len(d.Depths), d.Windows, d.Blocks)
	}
	if err := export.WriteNPYFile(filepath.Join(dir, DriftFile), []int{d.Windows, d.Blocks}, d.Dshift); err != nil {
		return err
	}
	if err := export.WriteNPYFile(filepath.Join(dir, DriftTimesFile), []int{d.Windows}, d.Times); err != nil {
		return err
	}
	return export.WriteNPYFile(filepath.Join(dir, DriftDepthsFile), []int{d.Blocks}, d.Depths)
}

// HasDrift reports whether dir holds a drift estimate.
func HasDrift(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, DriftFile))
	return err == nil
}

// ReadDrift reads the drift files of a folder.
func ReadDrift(dir string) (*figure.Drift, error) {
	read := func(name string) ([]float64, []int, error) {
		a, err := export.ReadNPYFile(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, err
		}
		v, err := a.Float64()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		return v, a.Shape, nil
	}
	d := &figure.Drift{}
	var shape []int
	var err error
	if d.Dshift, shape, err = read(DriftFile); err != nil {
		return nil, err
	}
	if len(shape) != 2 {
		return nil, fmt.Errorf("%s: shape (%v), want (windows, blocks)", filepath.Join(dir, DriftFile), shape)
	}
	d.Windows, d.Blocks = shape[0], shape[1]
	if d.Times, _, err = read(DriftTimesFile); err != nil {
		return nil, err
	}
	if d.Depths, _, err = read(DriftDepthsFile); err != nil {
		return nil, err
	}
	if len(d.Times) != d.Windows || len(d.Depths) != d.Blocks {
		return nil, fmt.Errorf("%s: %d window times and %d block depths for a drift of %d windows × %d blocks",
			dir, len(d.Times), len(d.Depths), d.Windows, d.Blocks)
	}
	return d, nil
}
