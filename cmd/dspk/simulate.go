package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
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
dspk simulate -o hard -preset ladder-hard
dspk simulate -o wobble -drift 0.1 -sine-um 3 -sine-hz 0.2 -steps 120:10,240:-15
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
			preset := fs.String("preset", "", "start from a named configuration ("+strings.Join(sim.PresetNames, ", ")+"; docs/sim.md); other flags given override it")
			sineUm := fs.Float64("sine-um", 0, "amplitude in µm of a sinusoidal motion (breathing)")
			sineHz := fs.Float64("sine-hz", 0, "frequency in Hz of the sinusoidal motion")
			steps := fs.String("steps", "", "sudden motion steps, TIME_S:UM[,TIME_S:UM…]")
			topGain := fs.Float64("top-gain", 0, "non-rigid motion: the probe's top moves this many times as far as its bottom (0: rigid)")
			zMin := fs.Float64("zmin", 0, "realistic unit distances: the nearest unit distance from the probe plane in µm (with -zmax)")
			zMax := fs.Float64("zmax", 0, "realistic unit distances: the largest distance in µm (0: units 2–10 µm from the plane)")
			ampMin := fs.Float64("amp-min", 5, "smallest unit amplitude in noise SDs")
			ampMax := fs.Float64("amp-max", 25, "largest unit amplitude in noise SDs")
			pairs := fs.Int("pairs", 0, "pairs of nearby units with similar waveforms")
			bursts := fs.Float64("bursts", 0, "fraction of units that fire bursts with decaying amplitude")
			motionTruth := fs.Bool("motion-truth", false, "write the motion truth (motion.npy, spike_positions.npy) even without motion")
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
				given := map[string]bool{}
				fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
				cfg := sim.DefaultConfig()
				if *preset != "" {
					c, err := sim.Preset(*preset)
					if err != nil {
						return usagef("-preset: %v", err)
					}
					cfg = c
				}
				if cfg.Probe == nil || given["probe"] {
					p, err := probe.Preset(*pr)
					if _, serr := os.Stat(*pr); serr == nil {
						p, err = probe.Load(*pr) // a probe file: a custom layout (stereotrodes, tetrodes)
						if err != nil {
							return err
						}
					} else if err != nil {
						return usagef("%v", err)
					}
					cfg.Probe = p
					if strings.EqualFold(strings.TrimSpace(*pr), "np2") {
						cfg.MicrovoltsPerCount = sim.NP2MicrovoltsPerCount
					}
				}
				if *preset == "" || given["duration"] {
					cfg.Seconds = dur.Seconds()
				}
				if *preset == "" || given["units"] {
					// A preset's similar pairs keep their share of the units.
					if cfg.Units > 0 && cfg.SimilarPairs > 0 {
						cfg.SimilarPairs = int(math.Round(float64(cfg.SimilarPairs) * float64(*units) / float64(cfg.Units)))
					}
					cfg.Units = *units
				}
				if *preset == "" || given["seed"] {
					cfg.Seed = *seed
				}
				if *preset == "" || given["drift"] {
					cfg.DriftUmPerS = *drift
				}
				if given["steps"] {
					st, err := parseSteps(*steps)
					if err != nil {
						return usagef("-steps: %v", err)
					}
					cfg.MotionSteps = st
				}
				for _, f := range []struct {
					name string
					dst  *float64
					v    float64
				}{
					{"sine-um", &cfg.MotionSineUm, *sineUm}, {"sine-hz", &cfg.MotionSineHz, *sineHz},
					{"top-gain", &cfg.MotionTopGain, *topGain}, {"zmin", &cfg.UnitZMinUm, *zMin},
					{"zmax", &cfg.UnitZMaxUm, *zMax}, {"amp-min", &cfg.AmplitudeMin, *ampMin},
					{"amp-max", &cfg.AmplitudeMax, *ampMax}, {"bursts", &cfg.BurstFraction, *bursts},
				} {
					if given[f.name] {
						if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
							return usagef("-%s %g: must be finite", f.name, f.v)
						}
						*f.dst = f.v
					}
				}
				if given["pairs"] {
					cfg.SimilarPairs = *pairs
				}
				if given["motion-truth"] {
					cfg.MotionTruth = *motionTruth
				}
				setOutput(*out)
				setStage("the simulation")
				bin, truth, err := simulate(cmdCtx, *out, cfg, *overwrite)
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

// simulate writes cfg as a SpikeGLX pair, its ground truth and dspk.json
// (the provenance) into the folder out, atomically.
func simulate(ctx context.Context, out string, cfg sim.Config, overwrite bool) (string, *sim.Truth, error) {
	od, err := export.CreateOutputDir(out, export.OutputOptions{Kind: "simulate", Overwrite: overwrite, Context: ctx})
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
	// Keys for the newer models only when they are used, so that the
	// default output keeps its bytes.
	if cfg.Preset != "" {
		prov["preset"] = cfg.Preset
	}
	if cfg.MotionSineUm != 0 || len(cfg.MotionSteps) > 0 || cfg.MotionTopGain != 0 || cfg.UnitZMaxUm != 0 ||
		cfg.SimilarPairs != 0 || cfg.BurstFraction != 0 || cfg.MotionTruth {
		prov["motion_sine_um"], prov["motion_sine_hz"] = cfg.MotionSineUm, cfg.MotionSineHz
		prov["motion_steps"], prov["motion_top_gain"] = cfg.MotionSteps, cfg.MotionTopGain
		prov["unit_z_um"] = []float64{cfg.UnitZMinUm, cfg.UnitZMaxUm}
		prov["similar_pairs"], prov["burst_fraction"] = cfg.SimilarPairs, cfg.BurstFraction
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

// parseSteps parses "T:UM,T:UM…" (seconds and µm) into motion steps.
func parseSteps(s string) ([]sim.MotionStep, error) {
	var out []sim.MotionStep
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		a, b, ok := strings.Cut(f, ":")
		t, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		um, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if !ok || err1 != nil || err2 != nil || math.IsNaN(t+um) || math.IsInf(t+um, 0) || t < 0 {
			return nil, fmt.Errorf("step %d %q: want TIME_S:UM with finite numbers and TIME_S ≥ 0", i+1, f)
		}
		out = append(out, sim.MotionStep{TimeS: t, Um: um})
	}
	return out, nil
}
