package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"dspk/compare"
)

// The simulator's truth of the motion: the true tissue displacement in µm
// (positive where units appear at larger depth values) on a grid of times
// and depths.
const (
	truthMotionFile       = "motion.npy"        // [times, depths] float64 µm
	truthMotionTimesFile  = "motion_times.npy"  // [times] s
	truthMotionDepthsFile = "motion_depths.npy" // [depths] µm
)

// readTruthMotion reads the true motion of a ground-truth folder; ok is
// false when the folder has none (a simulation without motion).
func readTruthMotion(dir string) (g compare.GridMotion, ok bool, err error) {
	if _, err := os.Stat(filepath.Join(dir, truthMotionFile)); err != nil {
		return g, false, nil
	}
	read := func(name string) ([]float64, []int, error) {
		a, err := readNPY(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, err
		}
		v, err := a.Float64()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		return v, a.Shape, nil
	}
	var shape []int
	if g.Disp, shape, err = read(truthMotionFile); err != nil {
		return g, false, err
	}
	if g.Times, _, err = read(truthMotionTimesFile); err != nil {
		return g, false, err
	}
	if g.Depths, _, err = read(truthMotionDepthsFile); err != nil {
		return g, false, err
	}
	if len(shape) != 2 || shape[0] != len(g.Times) || shape[1] != len(g.Depths) {
		return g, false, fmt.Errorf("%s: shape %v for %d times and %d depths", filepath.Join(dir, truthMotionFile), shape, len(g.Times), len(g.Depths))
	}
	if err := g.Check(); err != nil {
		return g, false, fmt.Errorf("%s: %w", filepath.Join(dir, truthMotionFile), err)
	}
	return g, true, nil
}

// compareMotion scores the drift estimate of dir (drift.npy) against the
// true motion of truthDir. It returns nil when dir holds no estimate; an
// estimate without a true motion (a simulation without motion) is scored
// against zero motion.
func compareMotion(truthDir, dir string) (*compare.MotionReport, error) {
	if !hasDrift(dir) {
		return nil, nil
	}
	d, err := readDriftFiles(dir)
	if err != nil {
		return nil, err
	}
	g, ok, err := readTruthMotion(truthDir)
	if err != nil {
		return nil, err
	}
	truth := func(t, y float64) float64 { return 0 }
	if ok {
		truth = g.At
	}
	est := compare.MotionEstimate{Times: d.Times, Depths: d.Depths, Dshift: d.Dshift}
	if d.W > 1 {
		est.Span = d.Times[1] - d.Times[0]
	}
	r, err := compare.ScoreMotion(est, truth)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, driftFile), err)
	}
	return &r, nil
}

// hasSpikes reports whether dir holds detections (a detect folder, not a
// drift folder).
func hasSpikes(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "spike_times.npy"))
	return err == nil
}

// printMotionOnly prints the motion score of a drift folder.
func printMotionOnly(w io.Writer, r *compare.MotionReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Motion *compare.MotionReport `json:"motion"`
		}{r})
	}
	printMotionReport(w, r)
	return nil
}

// printMotionReport prints the motion score as a table: overall, then per
// block.
func printMotionReport(w io.Writer, r *compare.MotionReport) {
	fmt.Fprintf(w, "motion windows   %d × %d blocks (true motion spans %.1f µm; no correction would score %.2f µm RMS)\n",
		r.Windows, r.Blocks, r.TruthRange, r.Unscored)
	fmt.Fprintf(w, "motion RMS error %.2f µm (max %.2f µm), each block's constant offset removed\n", r.RMS, r.MaxAbs)
	if r.Blocks > 1 {
		for j := range r.Blocks {
			fmt.Fprintf(w, "  block %7.1f µm  RMS %.2f µm  max %.2f µm  offset %+.2f µm\n",
				r.BlockDepths[j], r.BlockRMS[j], r.BlockMaxAbs[j], r.BlockOffset[j])
		}
	}
}
