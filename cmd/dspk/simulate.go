package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"dspk/probe"
	"dspk/sim"
)

// simBase is the SpikeGLX run name of simulated recordings.
const simBase = sim.FolderBase

func init() {
	register(&command{
		name:  "simulate",
		short: "write a synthetic SpikeGLX recording with ground truth",
		usage: "",
		example: `dspk simulate -o sim1 -duration 60s -units 120 -seed 1
dspk simulate -o hard -preset ladder-hard
dspk simulate -o wobble -drift 0.1 -sine-um 3 -sine-hz 0.2 -steps 120:10,240:-15
dspk info sim1/sim_g0_t0.imec0.ap.bin`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			var o sim.Overrides
			out := fs.String("o", "", "output folder (required); holds "+simBase+".imec0.ap.{bin,meta} and truth/")
			dur := fs.Duration("duration", 60*time.Second, "length of the recording")
			fs.IntVar(&o.Units, "units", 120, "number of simulated units")
			fs.Uint64Var(&o.Seed, "seed", 1, "random seed (equal seeds give identical files)")
			pr := fs.String("probe", "np1", "probe geometry: np1, np2 or a probe file (Kilosort or probeinterface JSON, .mat channel map);\n"+
				"the file gets one more channel, a sync channel, after the probe's")
			fs.Float64Var(&o.DriftUmPerS, "drift", 0, "rigid drift speed in µm/s")
			overwrite := fs.Bool("overwrite", false, "replace the output folder if it exists and is a folder dspk wrote, unchanged")
			preset := fs.String("preset", "", "start from a named configuration ("+strings.Join(sim.PresetNames, ", ")+"; docs/sim.md); other flags given override it")
			fs.Float64Var(&o.SineUm, "sine-um", 0, "amplitude in µm of a sinusoidal motion (breathing)")
			fs.Float64Var(&o.SineHz, "sine-hz", 0, "frequency in Hz of the sinusoidal motion")
			fs.StringVar(&o.Steps, "steps", "", "sudden motion steps, TIME_S:UM[,TIME_S:UM…]")
			fs.Float64Var(&o.TopGain, "top-gain", 0, "non-rigid motion: the probe's top moves this many times as far as its bottom (0: rigid)")
			fs.Float64Var(&o.ZMinUm, "zmin", 0, "realistic unit distances: the nearest unit distance from the probe plane in µm (with -zmax)")
			fs.Float64Var(&o.ZMaxUm, "zmax", 0, "realistic unit distances: the largest distance in µm (0: units 2–10 µm from the plane)")
			fs.Float64Var(&o.AmpMin, "amp-min", 5, "smallest unit amplitude in noise SDs")
			fs.Float64Var(&o.AmpMax, "amp-max", 25, "largest unit amplitude in noise SDs")
			fs.IntVar(&o.Pairs, "pairs", 0, "pairs of nearby units with similar waveforms")
			fs.Float64Var(&o.Bursts, "bursts", 0, "fraction of units that fire bursts with decaying amplitude")
			fs.BoolVar(&o.MotionTruth, "motion-truth", false, "write the motion truth (motion.npy, spike_positions.npy) even without motion")
			return func(args []string) error {
				if len(args) != 0 {
					return usagef("simulate takes no arguments")
				}
				if *out == "" {
					return usagef("-o DIR is required")
				}
				if *dur <= 0 || o.Units < 0 {
					return usagef("-duration must be positive and -units non-negative")
				}
				if math.IsNaN(o.DriftUmPerS) || math.IsInf(o.DriftUmPerS, 0) {
					return usagef("-drift %g: must be finite", o.DriftUmPerS)
				}
				o.Given, o.Seconds = map[string]bool{}, dur.Seconds()
				fs.Visit(func(f *flag.Flag) { o.Given[f.Name] = true })
				cfg := sim.DefaultConfig()
				if *preset != "" {
					c, err := sim.Preset(*preset)
					if err != nil {
						return usagef("-preset: %v", err)
					}
					cfg = c
				}
				if cfg.Probe == nil || o.Given["probe"] {
					if err := simProbe(&cfg, *pr); err != nil {
						return err
					}
				}
				if err := o.Apply(&cfg, *preset != ""); err != nil {
					return usagef("%v", err)
				}
				if err := cfg.Check(); err != nil {
					return usagef("%v", err)
				}
				setOutput(*out)
				setStage("the simulation")
				bin, truth, err := sim.WriteFolder(cmdCtx, *out, cfg, sim.FolderOptions{Overwrite: *overwrite, Version: version})
				if err != nil {
					return err
				}
				fmt.Fprintf(cmdOut, "wrote %s (%d units, %d spikes, %s) and %s\n", bin, cfg.Units,
					len(truth.SpikeTimes), time.Duration(cfg.Seconds*float64(time.Second)), filepath.Join(*out, "truth"))
				return nil
			}
		},
	})
}

// simProbe sets cfg's probe to the -probe value pr: a preset name, or a
// probe file for a custom layout (stereotrodes, tetrodes). NP2 also sets
// NP2's gain.
func simProbe(cfg *sim.Config, pr string) error {
	p, err := probe.Preset(pr)
	if _, serr := os.Stat(pr); serr == nil {
		if p, err = probe.Load(pr); err != nil {
			return err
		}
	} else if err != nil {
		return usagef("%v", err)
	}
	cfg.Probe = p
	if strings.EqualFold(strings.TrimSpace(pr), "np2") {
		cfg.MicrovoltsPerCount = sim.NP2MicrovoltsPerCount
	}
	return nil
}
