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
			out := fs.String("o", "", "keep the recording, truth, detections and drift raster in this folder, which must not hold them yet\n(default: a temporary folder, removed at exit; the drift raster goes to ./dspk-demo-drift.png)")
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
// holds any of them; otherwise it works in a locked temporary folder that
// is removed on every exit path (the next demo removes one a killed demo
// left) and writes the raster into the working folder under a free name.
// On failure it removes what it wrote.
func demo(ctx context.Context, out string, dur time.Duration, seed uint64, device string, drift float64) (err error) {
	keep := out != ""
	var png string
	var created []string // the folders of out that this demo made
	if !keep {
		tmp, err := export.CreateTempDir("dspk-demo-")
		if err != nil {
			return err
		}
		defer export.RemoveTempDir(tmp)
		out = tmp
	} else {
		setOutput(out)
		png = filepath.Join(out, "drift_raster.png")
		for _, p := range []string{filepath.Join(out, "sim"), filepath.Join(out, "detections"), png} {
			if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s exists; demo does not replace earlier results: choose a new -o folder or remove it", p)
			}
		}
		// err is the function's result here, not a new variable, so that
		// the deferred removal below sees how the demo ended.
		if created, err = mkdirAllCreated(out); err != nil {
			removeEmpty(created)
			return err
		}
	}
	simDir := filepath.Join(out, "sim")
	detDir := filepath.Join(out, "detections")
	if keep {
		// This run wrote them and the folders in created: on failure, or
		// when a signal ends the process, remove them again. The removal runs once; a second
		// caller (forceExit beside the failing command) waits for it.
		created := created
		cleanup := sync.OnceFunc(func() {
			os.RemoveAll(detDir)
			os.RemoveAll(simDir)
			os.Remove(png)
			removeEmpty(created)
		})
		defer atForcedExit(cleanup)()
		defer func() {
			if err != nil {
				cleanup()
			}
		}()
	}

	cfg := sim.DefaultConfig()
	cfg.Seconds = dur.Seconds()
	cfg.Seed = seed
	cfg.Probe = probe.NP1()
	cfg.DriftUmPerS = drift
	fmt.Fprintf(cmdOut, "Simulating %s of Neuropixels 1.0 (%d units, seed %d)…\n", dur, cfg.Units, seed)
	t0 := time.Now()
	setStage("the simulation")
	bin, truth, err := simulate(ctx, simDir, cfg, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmdOut, "  %d true spikes (%.1f s)\n", len(truth.SpikeTimes), time.Since(t0).Seconds())

	var in inputFlags
	rec, pr, err := in.open(bin)
	if err != nil {
		return err
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
		return err
	}
	where := detDir
	if !keep {
		where = "a temporary folder (removed at exit; -o DIR keeps everything)"
	}
	printSummary(cmdOut, sum, k, where)

	setStage("the comparison")
	r, _, err := compare.MatchDirs(filepath.Join(simDir, "truth"), detDir, compare.DefaultOptions())
	if err != nil {
		return err
	}
	fmt.Fprintf(cmdOut, "\nAgainst the ground truth (±%d samples, < %g µm):\n", compare.DefaultOptions().MaxLag, compare.DefaultOptions().MaxDepth)
	printReport(cmdOut, r)

	title := fmt.Sprintf("dspk demo: %d spikes, recall %.3f, precision %.3f", sum.Spikes, r.Recall, r.Precision)
	setStage("the drift raster")
	if keep { // plotFolder writes it whole or not at all
		if err := plotFolder(ctx, detDir, png, title, true); err != nil {
			return err
		}
	} else {
		tmpPNG := filepath.Join(out, "drift_raster.png") // in the temporary folder
		if err := plotFolder(ctx, detDir, tmpPNG, title, false); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if png, err = linkFree(tmpPNG, "dspk-demo-drift", ".png"); err != nil {
			return err
		}
	}
	fmt.Fprintf(cmdOut, "\nDrift raster: %s\n", png)
	if keep {
		fmt.Fprintf(cmdOut, "Recording, truth and detections are in %s\n", out)
	}
	return nil
}

// linkFree links src to the first free name base.ext, base-2.ext, … in
// the working folder (a link never replaces an existing file) and returns
// it.
func linkFree(src, base, ext string) (string, error) {
	for i := 1; i <= 1000; i++ {
		name := base + ext
		if i > 1 {
			name = fmt.Sprintf("%s-%d%s", base, i, ext)
		}
		err := os.Link(src, name)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			// Another file system: copy without replacing.
			err = copyNew(src, name)
			if err == nil {
				return name, nil
			}
			if !errors.Is(err, fs.ErrExist) {
				return "", err
			}
		}
	}
	return "", fmt.Errorf("no free name %s-N%s in the working folder", base, ext)
}

// copyNew copies src to dst, which must not exist.
func copyNew(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(dst)
		return err
	}
	return f.Close()
}

// removeEmpty removes the folders in created (deepest first) while they
// are empty; one already gone (removed by a cleanup running beside this
// one) does not stop it.
func removeEmpty(created []string) {
	for _, d := range created {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
}

// mkdirAllCreated creates dir and its parents and returns the folders it
// created, deepest first.
func mkdirAllCreated(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	return missing, os.MkdirAll(dir, 0o777)
}
