package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"dspk/compare"
)

// unitFlags are compare's flags for unit-level scoring.
type unitFlags struct {
	fs        *flag.FlagSet
	units     *bool
	deltaTime *float64
	well      *float64
	rate      *float64
}

// addUnitFlags registers -units, -delta-time and -well-detected on fs.
func addUnitFlags(fs *flag.FlagSet) *unitFlags {
	return &unitFlags{
		fs: fs,
		units: fs.Bool("units", false, "score units (spike_clusters.npy) as SpikeInterface's GroundTruthComparison does, "+
			"not single spikes; on by default for a sort folder (one with "+compare.SortMarker+"), -units=false turns it off"),
		deltaTime: fs.Float64("delta-time", 0.4, "with -units: largest time difference of matching spikes in ms"),
		well:      fs.Float64("well-detected", 0.8, "with -units: least accuracy of a well-detected unit"),
		rate:      fs.Float64("rate", 0, "with -units: sample rate (Hz) of a -truth folder without params.py"),
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
	r, err := compare.MatchUnitDirs(truthDir, dir, *u.rate, *u.deltaTime, *u.well)
	if err != nil {
		return err
	}
	printWarnings(cmdErr, r.Warnings)
	if asJSON {
		enc := json.NewEncoder(cmdOut)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	r.UnitReport.WriteText(cmdOut, r.Reference)
	fmt.Fprintf(cmdOut, "\n%.4f of the %s's spikes are in the corresponding units\n", r.SpikeAgreement, r.Reference)
	return nil
}
