package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"

	"dspk/compute"
	"dspk/figure"
	"dspk/motion"
	"dspk/phy"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
)

func init() {
	register(&command{
		name:  "drift",
		short: "estimate the probe's motion (Kilosort4's datashift) and write it with a plot and the raster after correction",
		usage: "REC",
		example: `dspk drift -o drift1 run_g0_t0.imec0.ap.bin
dspk drift -o drift1 -nblocks 5 run_g0_t0.imec0.ap.bin
dspk compare -truth sim1/truth drift1`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			var in inputFlags
			in.register(fs)
			var pf pipelineFlags
			pf.register(fs)
			var f driftFlags
			f.register(fs)
			return func(args []string) error {
				if err := checkRunArgs("drift", args, f.out); err != nil {
					return err
				}
				if f.motion.nblocks < 1 {
					return usagef("drift needs -nblocks of at least 1 (1: one rigid shift per window)")
				}
				setOutput(f.out)
				rec, pr, err := in.open(args...)
				if err != nil {
					return err
				}
				defer rec.Close()
				printWarnings(cmdErr, in.warnings)
				inputs := in.runInputs(args, rec)
				d, sum, err := runDrift(cmdCtx, rec, pr, &pf, &f, inputs, in.warnings, cmdErr)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmdOut, "Estimated the motion of %d windows × %d blocks (displacement %.1f to %.1f µm); %s; results in %s.\n",
					d.Windows, d.Blocks, d.MinDisplacement(), d.MaxDisplacement(), sum.Speed(), f.out)
				return nil
			}
		},
	})
}

// motionFlags are the motion settings of detect and drift.
type motionFlags struct {
	nblocks      int
	sigInterp    float64
	binningDepth float64
	correction   string
	registration string
	defaultReg   string // the configuration's registration ("" is Kilosort4's)
}

// register adds -nblocks, -sig_interp, -binning_depth and -correction to
// fs, with the defaults of the command's configuration d.
func (f *motionFlags) register(fs *flag.FlagSet, d pipeline.Config) {
	fs.IntVar(&f.nblocks, "nblocks", d.NBlocks, "motion correction (Kilosort4's nblocks): 0 none, 1 one rigid shift per window,\n"+
		"k > 1 a shift per block of 2k − 1 half-overlapping blocks along the probe")
	fs.Float64Var(&f.sigInterp, "sig_interp", d.SigInterp, "σ in µm of the kriging kernel that corrects the windows (Kilosort4's sig_interp)")
	fs.Float64Var(&f.binningDepth, "binning_depth", d.BinningDepth, "depth bin in µm of the motion histograms (Kilosort4's binning_depth)")
	fs.StringVar(&f.correction, "correction", d.Correction, "how windows are corrected: kilosort (Kilosort4's kriging), smooth (wider, regularised kriging;\n"+
		"docs/motion.md) or auto (smooth when the estimate moves by 10 µm or more, else kilosort; docs/sort.md)")
	f.defaultReg = d.Registration
	fs.StringVar(&f.registration, "registration", registrationName(d.Registration), "how the motion estimate registers the windows: kilosort (Kilosort4's, to one reference iterated\n"+
		"from the middle window) or pairwise (every pair of windows within 300 s, solved together; docs/motion.md)")
}

// registrationName is the flag value of a configuration's registration.
func registrationName(r string) string { return cmp.Or(r, motion.RegisterKilosort.String()) }

// apply sets the motion settings of c.
func (f *motionFlags) apply(c *pipeline.Config) {
	c.NBlocks, c.SigInterp, c.BinningDepth, c.Correction = f.nblocks, f.sigInterp, f.binningDepth, f.correction
	c.Registration = f.registration
	if f.registration == registrationName(f.defaultReg) {
		c.Registration = f.defaultReg
	}
}

// driftFlags are the flags of drift.
type driftFlags struct {
	out       string
	device    string
	threshold float64
	overwrite bool
	motion    motionFlags
}

func (f *driftFlags) register(fs *flag.FlagSet) {
	d := pipeline.DefaultDriftConfig()
	fs.StringVar(&f.out, "o", "", "output folder (required)")
	fs.StringVar(&f.device, "device", "auto", "compute device: auto, cpu or cuda:N")
	fs.Float64Var(&f.threshold, "threshold", d.ThUniversal, "detection threshold in whitened SD (Kilosort4's Th_universal)")
	fs.BoolVar(&f.overwrite, "overwrite", false, "replace the output folder if it exists and is a folder dspk wrote, unchanged, holding no input of this run")
	f.motion.register(fs, d)
}

// runDrift estimates the motion of rec and writes the drift folder
// f.out (see [phy.DriftWriter]). The folder is reserved before any work
// and appears only when complete.
func runDrift(ctx context.Context, rec recording.Recording, pr *probe.Probe, pf *pipelineFlags, f *driftFlags,
	inputs, warnings []string, log io.Writer) (*figure.Drift, *pipeline.Summary, error) {
	dev, reason, err := compute.Open(f.device)
	if err != nil {
		return nil, nil, err
	}
	defer dev.Close()
	fmt.Fprintf(log, "device: %s (%s)\n", dev, reason)
	cfg := pf.configOf(pipeline.DefaultDriftConfig())
	cfg.ThUniversal = f.threshold
	f.motion.apply(&cfg)
	p, err := pipeline.New(dev, rec, pr, cfg)
	if err != nil {
		return nil, nil, err
	}
	defer p.Close() // before dev.Close
	w, err := phy.CreateDrift(f.out, phy.Options{Overwrite: f.overwrite, Inputs: inputs, Warnings: warnings, Context: ctx})
	if err != nil {
		return nil, nil, err
	}
	defer w.Close()
	p.Progress = trackProgress(newBar())
	sum, err := p.Run(ctx, w, pipeline.RunOptions{Device: useDevice(dev, log)})
	if err != nil {
		return nil, nil, err
	}
	printWarnings(log, sum.Warnings)
	return w.Drift(), sum, nil
}
