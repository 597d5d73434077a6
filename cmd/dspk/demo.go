package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"dspk/compare"
	"dspk/export"
	"dspk/kilosort"
	"dspk/pipeline"
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
			out := fs.String("o", "", "keep the recording, truth, detections and drift raster in this folder, which must not hold them yet\n(default: a temporary folder, removed at exit)")
			dur := fs.Duration("duration", 20*time.Second, "length of the simulated recording")
			seed := fs.Uint64("seed", 1, "random seed of the simulation")
			device := fs.String("device", "auto", "compute device: auto, cpu or cuda:N")
			drift := fs.Float64("drift", 0, "rigid drift speed in µm/s")
			return func(args []string) error {
				if len(args) != 0 {
					return usagef("demo takes no arguments")
				}
				if *dur <= 0 {
					return usagef("-duration must be positive")
				}
				ks := kilosort.Defaults()
				if n := dur.Seconds() * sim.DefaultConfig().SampleRate; n <= float64(ks.BatchSize+ks.NT) {
					return usagef("-duration %s is too short: detection needs more than %d samples (two windows, %.3f s)",
						dur, ks.BatchSize+ks.NT, float64(ks.BatchSize+ks.NT)/sim.DefaultConfig().SampleRate)
				}
				return demo(cmdCtx, *out, *dur, *seed, *device, *drift)
			}
		},
	})
}

// demo simulates, detects and compares. With out it keeps everything in
// out/sim, out/detections and out/drift_raster.png, refusing an out that
// holds any of them and removing what it wrote on failure (demoFolder);
// otherwise it works in a locked temporary folder, raster included, that
// is removed on every exit path (the next demo removes one a killed demo
// left).
func demo(ctx context.Context, out string, dur time.Duration, seed uint64, device string, drift float64) (err error) {
	keep := out != ""
	if !keep {
		tmp, err := export.CreateTempDir("dspk-demo-")
		if err != nil {
			return err
		}
		defer export.RemoveTempDir(tmp)
		out = tmp
	} else {
		setOutput(out)
		// err is the function's result here, not a new variable, so that
		// the deferred removal sees how the demo ended.
		var cleanup func()
		if cleanup, err = demoFolder(out); err != nil {
			return err
		}
		defer atForcedExit(cleanup)()
		defer func() {
			if err != nil {
				cleanup()
			}
		}()
	}
	simDir, detDir, png := filepath.Join(out, "sim"), filepath.Join(out, "detections"), filepath.Join(out, "drift_raster.png")
	cfg := sim.DefaultConfig()
	cfg.Seconds, cfg.Seed, cfg.Probe, cfg.DriftUmPerS = dur.Seconds(), seed, probe.NP1(), drift
	fmt.Fprintf(cmdOut, "Simulating %s of Neuropixels 1.0 (%d units, seed %d)…\n", dur, cfg.Units, seed)
	t0 := time.Now()
	setStage("the simulation")
	bin, truth, err := sim.WriteFolder(ctx, simDir, cfg, sim.FolderOptions{Version: version})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmdOut, "  %d true spikes (%.1f s)\n", len(truth.SpikeTimes), time.Since(t0).Seconds())
	where := detDir
	if !keep {
		where = "a temporary folder (removed at exit; -o DIR keeps everything)"
	}
	sum, err := demoDetect(ctx, bin, detDir, device, where)
	if err != nil {
		return err
	}

	setStage("the comparison")
	r, _, err := compare.MatchDirs(filepath.Join(simDir, "truth"), detDir, compare.DefaultOptions())
	if err != nil {
		return err
	}
	fmt.Fprintf(cmdOut, "\nAgainst the ground truth (±%d samples, < %g µm):\n", compare.DefaultOptions().MaxLag, compare.DefaultOptions().MaxDepth)
	printReport(cmdOut, r)

	title := fmt.Sprintf("dspk demo: %d spikes, recall %.3f, precision %.3f", sum.Spikes, r.Recall, r.Precision)
	setStage("the drift raster")
	// plotFolder writes it whole or not at all; the temporary folder is
	// new, so only a kept raster needs the check that it is not there.
	if err := plotFolder(ctx, detDir, png, title, keep); err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(cmdOut, "\nDrift raster: %s\n", png)
		fmt.Fprintf(cmdOut, "Recording, truth and detections are in %s\n", out)
	} else {
		fmt.Fprintf(cmdOut, "\nDrift raster: %s (in the temporary folder, removed at exit; -o DIR keeps everything)\n", png)
	}
	return nil
}

// demoDetect detects the spikes of the recording bin into detDir with the
// default settings on device and prints the summary, naming where as
// the folder.
func demoDetect(ctx context.Context, bin, detDir, device, where string) (*pipeline.Summary, error) {
	var in inputFlags
	rec, pr, err := in.open(bin)
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	printWarnings(cmdErr, in.warnings)
	fmt.Fprintf(cmdOut, "Detecting spikes…\n")
	var pf pipelineFlags
	pf.register(flag.NewFlagSet("defaults", flag.ContinueOnError))
	var df detectFlags
	df.register(flag.NewFlagSet("defaults", flag.ContinueOnError))
	df.out, df.device, df.final = detDir, device, inMain
	sum, k, err := runDetect(ctx, rec, pr, &pf, &df, recordingFiles(bin, rec), in.warnings, cmdErr)
	if err != nil {
		return nil, err
	}
	printSummary(cmdOut, sum, k, where)
	return sum, nil
}

// demoFolder prepares the -o folder out of a demo: it refuses one that
// holds sim/, detections/ or drift_raster.png already and creates out
// and its parents. It returns the removal of what the demo wrote there
// (the two folders, the raster, and the folders it created while empty),
// which runs once: a second caller (forceExit beside the failing command)
// waits for the first.
func demoFolder(out string) (cleanup func(), err error) {
	simDir, detDir, png := filepath.Join(out, "sim"), filepath.Join(out, "detections"), filepath.Join(out, "drift_raster.png")
	for _, p := range []string{simDir, detDir, png} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s exists; demo does not replace earlier results: choose a new -o folder or remove it", p)
		}
	}
	created, err := export.MkdirParents(out)
	if err != nil {
		export.RemoveCreated(created)
		return nil, err
	}
	return sync.OnceFunc(func() {
		os.RemoveAll(detDir)
		os.RemoveAll(simDir)
		os.Remove(png)
		export.RemoveCreated(created)
	}), nil
}
