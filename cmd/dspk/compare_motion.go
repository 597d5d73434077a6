package main

import (
	"encoding/json"
	"io"

	"dspk/compare"
	"dspk/phy"
)

// compareMotion scores the drift estimate of dir (drift.npy) against the
// true motion of truthDir (compare.ScoreMotionDir) and prints its
// warnings. It returns nil when dir holds no estimate.
func compareMotion(truthDir, dir string) (*compare.MotionReport, error) {
	if !phy.HasDrift(dir) {
		return nil, nil
	}
	d, err := phy.ReadDrift(dir)
	if err != nil {
		return nil, err
	}
	est := compare.MotionEstimate{Times: d.Times, Depths: d.Depths, Dshift: d.Dshift}
	if d.Windows > 1 {
		est.Span = d.Times[1] - d.Times[0]
	}
	r, err := compare.ScoreMotionDir(truthDir, dir, est)
	if err == nil {
		printWarnings(cmdErr, r.Warnings)
	}
	return r, err
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
