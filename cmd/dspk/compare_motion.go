package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"dspk/compare"
	"dspk/phy"
)

// compareMotion scores the drift estimate of dir (drift.npy) against the
// true motion of truthDir. It returns nil when dir holds no estimate; an
// estimate of a simulation without a motion field is scored against its
// rigid drift (DriftUmPerS·t, zero without drift).
func compareMotion(truthDir, dir string) (*compare.MotionReport, error) {
	if !phy.HasDrift(dir) {
		return nil, nil
	}
	d, err := phy.ReadDrift(dir)
	if err != nil {
		return nil, err
	}
	truth, err := compare.TrueMotion(truthDir)
	if err != nil {
		return nil, err
	}
	est := compare.MotionEstimate{Times: d.Times, Depths: d.Depths, Dshift: d.Dshift}
	if d.Windows > 1 {
		est.Span = d.Times[1] - d.Times[0]
	}
	r, err := compare.ScoreMotion(est, truth)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, phy.DriftFile), err)
	}
	return &r, nil
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
	r.WriteText(w)
	return nil
}
