package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"dspk/compare"
	"dspk/sim"
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
			"not single spikes; on by default for a sort folder (one with cluster_KSLabel.tsv), -units=false turns it off"),
		deltaTime: fs.Float64("delta-time", 0.4, "with -units: largest time difference of matching spikes in ms"),
		well:      fs.Float64("well-detected", 0.8, "with -units: least accuracy of a well-detected unit"),
	}
}

// sortMarker is the file whose presence makes a folder a sort (units,
// not provisional per-centre clusters).
const sortMarker = "cluster_KSLabel.tsv"

// wanted reports whether dir is to be scored unit by unit: -units as
// given, else whether dir is a sort folder.
func (u *unitFlags) wanted(dir string) bool {
	set := false
	u.fs.Visit(func(f *flag.Flag) { set = set || f.Name == "units" })
	if set {
		return *u.units
	}
	_, err := os.Stat(filepath.Join(dir, sortMarker))
	return err == nil
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
	ref, fs, samples, err := readReference(truthDir)
	if err != nil {
		return err
	}
	so, err := readSorting(dir)
	if err != nil {
		return err
	}
	opt := compare.DefaultUnitOptions(fs)
	opt.Delta = int64(*u.deltaTime / 1000 * fs)
	opt.WellDetected = *u.well
	r, err := compare.MatchUnits(ref, so, opt)
	if err != nil {
		return fmt.Errorf("compare: %s against %s: %w", dir, truthDir, err)
	}
	var warnings []string
	if start, end, ok := detectionRange(dir, so.Times); ok && samples > 0 {
		lo, hi := max(start, 0), min(end, samples)
		union := max(end, samples) - min(start, 0)
		if union > 0 && float64(max(hi-lo, 0)) < RangeOverlapWarn*float64(union) {
			warnings = append(warnings, fmt.Sprintf("the truth in %s covers %.3f–%.3f s but the units in %s cover %.3f–%.3f s; "+
				"spikes outside the common range count against accuracy", truthDir, 0.0, float64(samples)/fs, dir,
				float64(start)/fs, float64(end)/fs))
		}
	}
	agree := spikeAgreement(r)
	printWarnings(cmdErr, warnings)
	if asJSON {
		enc := json.NewEncoder(cmdOut)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*compare.UnitReport
			Agreement float64  `json:"spike_agreement"`
			Warnings  []string `json:"warnings,omitempty"`
		}{r, agree, warnings})
	}
	ref1 := "truth"
	if ref.Units == nil {
		ref1 = "reference sort"
	}
	printUnitReport(cmdOut, r, ref1)
	fmt.Fprintf(cmdOut, "\n%.4f of the %s's spikes are in the corresponding units\n", agree, ref1)
	return nil
}

// spikeAgreement is the fraction of the reference's spikes that the
// one-to-one assignment of r pairs with a spike of the corresponding
// sorted unit: ΣTP / Σspikes over the reference units. Two sorts of one
// recording (the CPU's and the GPU's, two seeds) agree spike for spike
// at 1.
func spikeAgreement(r *compare.UnitReport) float64 {
	var tp, n int64
	for _, u := range r.Truth {
		tp += u.TP
		n += int64(u.Spikes)
	}
	if n == 0 {
		return 0
	}
	return float64(tp) / float64(n)
}

// readReference reads what -truth names: a simulator's truth folder, or
// another sort folder (spike_times.npy and spike_clusters.npy without the
// truth's truth.json, its sample rate from params.py), whose units then take the truth's place. It
// returns the reference's spikes, the sample rate and the recording's
// length in samples (0 when a sort folder does not say).
func readReference(dir string) (compare.Sorting, float64, int64, error) {
	_, noTruth := os.Stat(filepath.Join(dir, "truth.json"))
	if _, err := os.Stat(filepath.Join(dir, "spike_clusters.npy")); err == nil && noTruth != nil {
		so, err := readSorting(dir)
		if err != nil {
			return compare.Sorting{}, 0, 0, err
		}
		fs, err := paramsSampleRate(filepath.Join(dir, "params.py"))
		if err != nil {
			return compare.Sorting{}, 0, 0, err
		}
		return so, fs, 0, nil
	}
	truth, err := sim.ReadTruthDir(dir)
	if err != nil {
		return compare.Sorting{}, 0, 0, err
	}
	ids := make([]int32, truth.Units())
	for i := range ids {
		ids[i] = int32(i)
	}
	return compare.Sorting{Times: truth.SpikeTimes, Labels: truth.SpikeClusters, Units: ids}, truth.Config.SampleRate, truth.Samples, nil
}

// paramsSampleRate reads the sample_rate line of a Phy params.py.
func paramsSampleRate(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("compare: a sort folder given as -truth needs its params.py: %w", err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "sample_rate" {
			continue
		}
		fs, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(fs > 0) || math.IsInf(fs, 0) {
			return 0, fmt.Errorf("%s:%d: sample_rate %q is not a positive number", path, i+1, strings.TrimSpace(v))
		}
		return fs, nil
	}
	return 0, fmt.Errorf("%s: no sample_rate line", path)
}

// readSorting reads spike_times.npy and spike_clusters.npy of a folder.
func readSorting(dir string) (compare.Sorting, error) {
	read := func(name string) ([]int64, error) {
		a, err := readNPY(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		v, err := a.Int64()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		return v, nil
	}
	times, err := read("spike_times.npy")
	if err != nil {
		return compare.Sorting{}, err
	}
	cl, err := read("spike_clusters.npy")
	if err != nil {
		return compare.Sorting{}, err
	}
	if len(cl) != len(times) {
		return compare.Sorting{}, fmt.Errorf("%s: %d cluster labels for %d spikes in spike_times.npy",
			filepath.Join(dir, "spike_clusters.npy"), len(cl), len(times))
	}
	labels := make([]int32, len(cl))
	for i, c := range cl {
		if c < 0 || c > 1<<31-1 {
			return compare.Sorting{}, fmt.Errorf("%s: spike %d has cluster %d", filepath.Join(dir, "spike_clusters.npy"), i, c)
		}
		labels[i] = int32(c)
	}
	return compare.Sorting{Times: times, Labels: labels}, nil
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
