package main

import (
	"flag"
	"fmt"

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
	overwrite bool
	pcMetrics bool
	th        quality.MUAThresholds
}

func (f *metricsFlags) register(fs *flag.FlagSet) {
	d := quality.MUAThresholdsOf(quality.DefaultLabelOptions())
	fs.BoolVar(&f.overwrite, "overwrite", false, "replace metric tables that dspk did not write (a Kilosort folder's, another tool's)")
	fs.BoolVar(&f.pcMetrics, "pc-metrics", false, "also compute nn_hit_rate and nn_miss_rate (a nearest-neighbour search in the PC features;\n"+
		"dspk sort leaves them out: they cost about a third of a sort on the CPU)")
	fs.Float64Var(&f.th.MinSpikes, "min-spikes", d.MinSpikes, "a unit with fewer spikes is mua")
	fs.Float64Var(&f.th.MaxRPContamination, "max-rp-contamination", d.MaxRPContamination, "a unit with more refractory-period contamination (fraction_rpvs: Bombcell's, Hill et al.) is mua")
	fs.Float64Var(&f.th.MinPresenceRatio, "min-presence-ratio", d.MinPresenceRatio, "a unit present in a smaller fraction of 60-s bins is mua")
	fs.Float64Var(&f.th.MaxAmplitudeCutoff, "max-amplitude-cutoff", d.MaxAmplitudeCutoff, "a unit missing a larger estimated fraction of its spikes below threshold is mua")
	fs.Float64Var(&f.th.MinSNR, "min-snr", d.MinSNR, "a unit with a lower raw_snr (Bombcell's: the mean raw waveform's peak over its baseline's MAD) is mua")
	fs.Float64Var(&f.th.MinAmplitude, "min-amplitude", d.MinAmplitude, "a unit with a smaller |median amplitude| (µV where the recording's gains are known, else its units) is mua")
	fs.Float64Var(&f.th.MaxDrift, "max-drift", d.MaxDrift, "a unit whose depth moves more (peak to peak, µm) is mua")
	fs.Float64Var(&f.th.MinMotionPresence, "min-motion-presence", d.MinMotionPresence, "a unit firing in a smaller fraction of the probe's 5-µm positions (under motion) is mua")
}

// runMetrics recomputes the metrics and labels of the sort folder dir,
// writes its tables and its manifest, and prints the units per label.
func runMetrics(dir string, f *metricsFlags) error {
	opt := phy.SortMetricsOptions()
	opt.SkipNN = !f.pcMetrics
	lo, err := opt.Labels.SetMUA(f.th)
	if err != nil {
		return usagef("%v", err)
	}
	opt.Labels = lo
	setOutput(dir)
	setStage("the quality metrics")
	t, written, warnings, err := phy.UpdateMetrics(cmdCtx, dir, opt, f.overwrite)
	if err != nil {
		return err
	}
	printWarnings(cmdErr, warnings)
	fmt.Fprintf(cmdOut, "%s: %s; wrote %d tables (%s, %s).\n", dir, quality.LabelSummary(t.Labels), len(written), quality.LabelFile, quality.WideFile)
	return nil
}
