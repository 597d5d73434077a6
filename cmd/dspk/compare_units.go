package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"dspk/compare"
)

// unitFlags are compare's flags for unit-level scoring.
type unitFlags struct {
	fs        *flag.FlagSet
	units     *bool
	deltaTime *float64
	well      *float64
}

// addUnitFlags registers -units, -delta-time and -well-detected on fs.
func addUnitFlags(fs *flag.FlagSet) *unitFlags {
	return &unitFlags{
		fs: fs,
		units: fs.Bool("units", false, "score units (spike_clusters.npy) as SpikeInterface's GroundTruthComparison does, "+
			"not single spikes; on by default for a sort folder (one with "+compare.SortMarker+"), -units=false turns it off"),
		deltaTime: fs.Float64("delta-time", 0.4, "with -units: largest time difference of matching spikes in ms"),
		well:      fs.Float64("well-detected", 0.8, "with -units: least accuracy of a well-detected unit"),
	}
}

// wanted reports whether dir is to be scored unit by unit: -units as
// given, else whether dir is a sort folder.
func (u *unitFlags) wanted(dir string) bool {
	set := false
	u.fs.Visit(func(f *flag.Flag) { set = set || f.Name == "units" })
	if set {
		return *u.units
	}
	return compare.IsSort(dir)
}

// run scores the units of dir against truthDir and prints the report
// (JSON with asJSON) on cmdOut, warnings on cmdErr.
func (u *unitFlags) run(truthDir, dir string, asJSON bool) error {
	if !(*u.deltaTime >= 0) {
		return fmt.Errorf("compare: -delta-time %g ms must be at least 0", *u.deltaTime)
	}
	if !(*u.well > 0 && *u.well <= 1) {
		return fmt.Errorf("compare: -well-detected %g must be in (0, 1]", *u.well)
	}
	r, err := compare.MatchUnitDirs(truthDir, dir, *u.deltaTime, *u.well)
	if err != nil {
		return err
	}
	printWarnings(cmdErr, r.Warnings)
	if asJSON {
		enc := json.NewEncoder(cmdOut)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	printUnitReport(cmdOut, r.UnitReport, r.Reference)
	fmt.Fprintf(cmdOut, "\n%.4f of the %s's spikes are in the corresponding units\n", r.SpikeAgreement, r.Reference)
	return nil
}

// printUnitReport writes r as a table; ref names what the units were
// scored against ("truth", or "reference sort" for two sorts).
func printUnitReport(w io.Writer, r *compare.UnitReport, ref string) {
	o := r.Options
	if ref != "truth" {
		fmt.Fprintf(w, "scored against a %s: its units take the truth's place below\n", ref)
	}
	fmt.Fprintf(w, "truth units      %d\n", r.NTruth)
	fmt.Fprintf(w, "sorted units     %d\n", r.NSorted)
	fmt.Fprintf(w, "well detected    %d (accuracy ≥ %.2f, spikes within ±%d samples)\n", r.WellDetected, o.WellDetected, o.Delta)
	fmt.Fprintf(w, "redundant        %d (over-split pieces)\n", r.Redundant)
	fmt.Fprintf(w, "over-merged      %d\n", r.Overmerged)
	fmt.Fprintf(w, "false positive   %d\n", r.FalsePositive)
	fmt.Fprintf(w, "bad (unmatched)  %d\n", r.Bad)
	fmt.Fprintf(w, "mean accuracy    %.3f (recall %.3f, precision %.3f)\n", r.MeanAccuracy, r.MeanRecall, r.MeanPrecision)
	fmt.Fprintf(w, "\n%6s %8s %8s %8s %9s %7s %9s %6s %9s\n", "truth", "spikes", "matched", "found", "accuracy", "recall", "precision", "best", "best acc")
	for _, u := range r.Truth {
		fmt.Fprintf(w, "%6d %8d %8d %8d %9.3f %7.3f %9.3f %6d %9.3f\n", u.Unit, u.Spikes, u.Matched, u.Found, u.Accuracy,
			u.Recall, u.Precision, u.Best, u.BestAccuracy)
	}
}
