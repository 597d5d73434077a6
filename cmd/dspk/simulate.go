package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"dspk/export"
	"dspk/probe"
	"dspk/sim"
)

// simBase is the SpikeGLX run name of simulated recordings.
const simBase = "sim_g0_t0"

func init() {
	register(&command{
		name:  "simulate",
		short: "write a synthetic SpikeGLX recording with ground truth",
		usage: "",
		example: `dspk simulate -o sim1 -duration 60s -units 120 -seed 1
dspk info sim1/sim_g0_t0.imec0.ap.bin`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			out := fs.String("o", "", "output folder (required); holds "+simBase+".imec0.ap.{bin,meta} and truth/")
			dur := fs.Duration("duration", 60*time.Second, "length of the recording")
			units := fs.Int("units", 120, "number of simulated units")
			seed := fs.Uint64("seed", 1, "random seed (equal seeds give identical files)")
			pr := fs.String("probe", "np1", "probe geometry: np1, np2 or a probe file (Kilosort or probeinterface JSON, .mat channel map);\n"+
				"the file gets one more channel, a sync channel, after the probe's")
			drift := fs.Float64("drift", 0, "rigid drift speed in µm/s")
			overwrite := fs.Bool("overwrite", false, "replace the output folder if it exists and is a folder dspk wrote, unchanged")
			return func(args []string) error {
				if len(args) != 0 {
					return usagef("simulate takes no arguments")
				}
				if *out == "" {
					return usagef("-o DIR is required")
				}
				if *dur <= 0 || *units < 0 {
					return usagef("-duration must be positive and -units non-negative")
				}
				if math.IsNaN(*drift) || math.IsInf(*drift, 0) {
					return usagef("-drift %g: must be finite", *drift)
				}
				p, err := probe.Preset(*pr)
				if _, serr := os.Stat(*pr); serr == nil {
					p, err = probe.Load(*pr) // a probe file: a custom layout (stereotrodes, tetrodes)
					if err != nil {
						return err
					}
				} else if err != nil {
					return usagef("%v", err)
				}
				cfg := sim.DefaultConfig()
				cfg.Seconds = dur.Seconds()
				cfg.Units = *units
				cfg.Seed = *seed
				cfg.Probe = p
				if strings.EqualFold(strings.TrimSpace(*pr), "np2") {
					cfg.MicrovoltsPerCount = sim.NP2MicrovoltsPerCount
				}
				cfg.DriftUmPerS = *drift
				setOutput(*out)
				setStage("the simulation")
				bin, truth, err := simulate(cmdCtx, *out, cfg, *overwrite)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmdOut, "wrote %s (%d units, %d spikes, %s) and %s\n", bin, *units,
					len(truth.SpikeTimes), dur, filepath.Join(*out, "truth"))
				return nil
			}
		},
	})
}

// simulate writes cfg as a SpikeGLX pair, its ground truth and dspk.json
// (the provenance) into the folder out, atomically.
func simulate(ctx context.Context, out string, cfg sim.Config, overwrite bool) (string, *sim.Truth, error) {
	od, err := export.NewOutputDir(out, overwrite)
	if err != nil {
		return "", nil, err
	}
	defer od.Abort()
	bin, truth, err := sim.WriteSpikeGLXContext(ctx, od.Dir(), simBase, cfg)
	if err != nil {
		return "", nil, err
	}
	prov := map[string]any{
		"dspk_version": version, "command": "simulate", "recording": filepath.Base(bin),
		"probe": cfg.Probe.Name, "seconds": cfg.Seconds, "units": cfg.Units, "seed": cfg.Seed,
		"drift_um_per_s": cfg.DriftUmPerS, "spikes": len(truth.SpikeTimes),
	}
	if err := export.WriteJSON(od.Path("dspk.json"), prov); err != nil {
		return "", nil, err
	}
	if err := os.Mkdir(od.Path("truth"), 0o755); err != nil {
		return "", nil, err
	}
	if err := truth.WriteDir(od.Path("truth")); err != nil {
		return "", nil, err
	}
	if err := od.Commit(); err != nil {
		return "", nil, err
	}
	return filepath.Join(out, filepath.Base(bin)), truth, nil
}
