package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"dspk/compare"
	"dspk/probe"
	"dspk/sim"
)

func init() {
	register(&command{
		name:  "demo",
		short: "simulate a 20-s Neuropixels 1.0 recording, detect spikes, compare with the truth",
		example: `dspk demo
dspk demo -o demo1 -duration 60s -device cpu`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			out := fs.String("o", "", "keep everything in this folder (default: a temporary folder, removed at the end except the report files)")
			dur := fs.Duration("duration", 20*time.Second, "length of the simulated recording")
			seed := fs.Uint64("seed", 1, "random seed of the simulation")
			device := fs.String("device", "auto", "compute device: auto, cpu or cuda:N")
			drift := fs.Float64("drift", 0, "rigid drift speed in µm/s")
			return func(args []string) error {
				if len(args) != 0 {
					return usagef("demo takes no arguments")
				}
				return demo(*out, *dur, *seed, *device, *drift)
			}
		},
	})
}

func demo(out string, dur time.Duration, seed uint64, device string, drift float64) error {
	keep := out != ""
	if !keep {
		tmp, err := os.MkdirTemp("", "dspk-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		out = tmp
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	simDir := filepath.Join(out, "sim")
	detDir := filepath.Join(out, "detections")

	cfg := sim.DefaultConfig()
	cfg.Seconds = dur.Seconds()
	cfg.Seed = seed
	cfg.Probe = probe.NP1()
	cfg.DriftUmPerS = drift
	fmt.Fprintf(cmdOut, "Simulating %s of Neuropixels 1.0 (%d units, seed %d)…\n", dur, cfg.Units, seed)
	t0 := time.Now()
	bin, truth, err := simulate(simDir, cfg, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmdOut, "  %s: %d true spikes (%.1f s)\n", bin, len(truth.SpikeTimes), time.Since(t0).Seconds())

	var in inputFlags
	rec, pr, err := in.open(bin)
	if err != nil {
		return err
	}
	defer rec.Close()
	fmt.Fprintf(cmdOut, "Detecting spikes…\n")
	var pf pipelineFlags
	pf.register(flag.NewFlagSet("defaults", flag.ContinueOnError))
	df := detectFlags{out: detDir, device: device}
	df.register(flag.NewFlagSet("defaults", flag.ContinueOnError))
	df.out, df.device = detDir, device
	sum, k, err := runDetect(rec, pr, &pf, &df, cmdErr)
	if err != nil {
		return err
	}
	printSummary(cmdOut, sum, k, detDir)

	r, err := compareDirs(filepath.Join(simDir, "truth"), detDir, compare.DefaultOptions())
	if err != nil {
		return err
	}
	fmt.Fprintf(cmdOut, "\nAgainst the ground truth (±%d samples, < %g µm):\n", compare.DefaultOptions().MaxLag, compare.DefaultOptions().MaxDepth)
	printReport(cmdOut, r)

	plotDir := detDir
	if !keep {
		plotDir = "."
	}
	png := filepath.Join(plotDir, "dspk-demo-drift.png")
	if keep {
		png = filepath.Join(detDir, "drift_raster.png")
	}
	title := fmt.Sprintf("dspk demo: %d spikes, recall %.3f, precision %.3f", sum.Spikes, r.Recall, r.Precision)
	if err := plotFolder(detDir, png, title); err != nil {
		return err
	}
	fmt.Fprintf(cmdOut, "\nDrift raster: %s\n", png)
	if keep {
		fmt.Fprintf(cmdOut, "Recording, truth and detections are in %s\n", out)
	}
	return nil
}
