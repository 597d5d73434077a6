package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"dspk/export"
	"dspk/phy"
	"dspk/quality"
)

func init() {
	register(&command{
		name:  "metrics",
		short: "recompute a sort folder's quality metrics and Bombcell-style labels (after curation in Phy)",
		usage: "SORTDIR",
		example: `dspk metrics sort1
dspk metrics -pc-metrics -min-snr 4 -min-presence-ratio 0.9 sort1`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			var mf metricsFlags
			mf.register(fs)
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("metrics takes one sort folder")
				}
				return runMetrics(args[0], &mf)
			}
		},
	})
}

// metricsFlags are the flags of metrics: the main labelling thresholds,
// Bombcell's defaults ([quality.DefaultLabelOptions]).
type metricsFlags struct {
	overwrite                 bool
	pcMetrics                 bool
	minSpikes                 float64
	maxRP, minPresence        float64
	maxCutoff, minSNR, minAmp float64
	maxDrift                  float64
}

func (f *metricsFlags) register(fs *flag.FlagSet) {
	mua := quality.DefaultLabelOptions().MUA
	fs.BoolVar(&f.overwrite, "overwrite", false, "replace metric tables that dspk did not write (a Kilosort folder's, another tool's)")
	fs.BoolVar(&f.pcMetrics, "pc-metrics", false, "also compute nn_hit_rate and nn_miss_rate (a nearest-neighbour search in the PC features;\n"+
		"dspk sort leaves them out: they cost about a third of a sort on the CPU)")
	fs.Float64Var(&f.minSpikes, "min-spikes", mua["num_spikes"].Min, "a unit with fewer spikes is mua")
	fs.Float64Var(&f.maxRP, "max-rp-contamination", mua["rp_contamination"].Max, "a unit with more refractory-period contamination (Llobet et al.) is mua")
	fs.Float64Var(&f.minPresence, "min-presence-ratio", mua["presence_ratio"].Min, "a unit present in a smaller fraction of 60-s bins is mua")
	fs.Float64Var(&f.maxCutoff, "max-amplitude-cutoff", mua["amplitude_cutoff"].Max, "a unit missing a larger estimated fraction of its spikes below threshold is mua")
	fs.Float64Var(&f.minSNR, "min-snr", mua["snr"].Min, "a unit with a lower template peak over the channel's noise SD is mua")
	fs.Float64Var(&f.minAmp, "min-amplitude", mua["amplitude_median"].Min, "a unit with a smaller |median amplitude| (data units) is mua")
	fs.Float64Var(&f.maxDrift, "max-drift", mua["drift_ptp"].Max, "a unit whose depth moves more (peak to peak, µm) is mua")
}

// options returns the metrics' settings with the flags' thresholds.
func (f *metricsFlags) options() (quality.Options, error) {
	opt := phy.SortMetricsOptions()
	opt.SkipNN = !f.pcMetrics
	for _, v := range []struct {
		name string
		v    float64
	}{{"min-spikes", f.minSpikes}, {"max-rp-contamination", f.maxRP}, {"min-presence-ratio", f.minPresence},
		{"max-amplitude-cutoff", f.maxCutoff}, {"min-snr", f.minSNR}, {"min-amplitude", f.minAmp}, {"max-drift", f.maxDrift}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) || v.v < 0 {
			return opt, usagef("-%s %v: must be a finite number ≥ 0", v.name, v.v)
		}
	}
	mua := map[string]quality.Range{}
	for k, r := range opt.Labels.MUA {
		mua[k] = r
	}
	set := func(name string, min bool, v float64) {
		r := mua[name]
		if min {
			r.Min = v
		} else {
			r.Max = v
		}
		mua[name] = r
	}
	set("num_spikes", true, f.minSpikes)
	set("rp_contamination", false, f.maxRP)
	set("presence_ratio", true, f.minPresence)
	set("amplitude_cutoff", false, f.maxCutoff)
	set("snr", true, f.minSNR)
	set("amplitude_median", true, f.minAmp)
	set("drift_ptp", false, f.maxDrift)
	opt.Labels.MUA = mua
	return opt, nil
}

// runMetrics recomputes the metrics and labels of the sort folder dir,
// writes its tables (each whole) and its manifest, and prints the units
// per label.
func runMetrics(dir string, f *metricsFlags) error {
	opt, err := f.options()
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder; metrics takes a sort folder (Kilosort's or dspk sort's)", dir)
	}
	setOutput(dir)
	setStage("the quality metrics")
	t, err := phy.ComputeMetrics(dir, opt)
	if err != nil {
		return err
	}
	write, remove := phy.MetricsFiles(t)
	if !f.overwrite {
		for _, name := range append(append([]string{}, write...), remove...) {
			_, err := os.Lstat(filepath.Join(dir, name))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if !export.Lists(dir, name) {
				return fmt.Errorf("%s holds %s, which dspk did not write; metrics does not replace it — use -overwrite", dir, name)
			}
		}
	}
	if err := cmdCtx.Err(); err != nil {
		return err
	}
	if err := phy.WriteMetrics(dir, t); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, export.ManifestName)); err == nil {
		if err := export.RecordFiles(dir, append(write, remove...)...); err != nil {
			fmt.Fprintf(cmdErr, "warning: %s: the manifest was not updated (%v); sort -overwrite will refuse this folder\n", dir, err)
		}
	}
	fmt.Fprintf(cmdOut, "%s: %s; wrote %d tables (%s, %s).\n", dir, labelSummary(t.Labels), len(write), quality.LabelFile, quality.WideFile)
	return nil
}

// labelSummary says how many units carry each label, in Bombcell's order.
func labelSummary(labels []string) string {
	n := map[string]int{}
	for _, l := range labels {
		n[l]++
	}
	var parts []string
	for _, l := range []string{"good", "mua", "non_soma", "noise"} {
		parts = append(parts, fmt.Sprintf("%d %s", n[l], l))
		delete(n, l)
	}
	for l, k := range n {
		parts = append(parts, fmt.Sprintf("%d %s", k, l))
	}
	return fmt.Sprintf("%d units: %s", len(labels), strings.Join(parts, ", "))
}
