package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"dspk/bench"
	"dspk/compute"
	"dspk/probe"
	"dspk/recording"
)

// trailingShapes are the cases of -ops trailing; nil: bench's own (tests
// set small ones).
var trailingShapes []bench.TrailingShape

func init() {
	register(&command{
		name:          "bench",
		writesNothing: true,
		short:         "measure the ops on this machine (window reading, covariance, preprocessing, detection, trailing mean, motion, the whole sort by stage)",
		example: `dspk bench
dspk bench -ops covariance,trailing -reps 10
dspk bench -ops motion
dspk bench -ops sort -device cpu
dspk bench -device cuda:0 -json > bench.json`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			which := fs.String("ops", strings.Join(bench.DefaultOps, ","), "comma-separated ops to measure")
			reps := fs.Int("reps", 5, "repetitions per op (the median is reported)")
			file := fs.String("file", "", "with -ops load: a recording to read whole through the window loader, as dspk detect does (read-ahead 2, one and 8 readers);\n"+
				"with -ops file: a recording to run dspk detect on whole (spikes discarded), each pass beside the loader alone")
			device := fs.String("device", "auto", "device the ops run on: auto, cpu or cuda:N (each line names where it ran)")
			asJSON := fs.Bool("json", false, "write the results as one JSON array of objects instead of the table: "+
				"op, device, size, ms (median), floor_ms and fraction (of the floor reached; null where the op has none), "+
				"then the line's other numbers (gb_per_s, copy_gb_per_s, gflop, times_real_time, spikes, …), "+
				"then peak_source where the floor is the work at the device's theoretical peak rates: how those were found")
			return func(args []string) error {
				if len(args) != 0 {
					return usagef("bench takes no arguments")
				}
				if *reps < 1 {
					return usagef("-reps must be at least 1")
				}
				dev, reason, err := compute.Open(*device)
				if err != nil {
					return err
				}
				defer dev.Close()
				fmt.Fprintf(cmdErr, "device: %s (%s)\n", dev, reason)
				fmt.Fprintf(cmdErr, "peak rates: %s\n", dev.Peaks().Source)
				return runBench(strings.Split(*which, ","), *reps, *file, dev, *asJSON)
			}
		},
	})
}

// runBench measures ops on dev and prints the results as the table, or
// with asJSON as one JSON array.
func runBench(ops []string, reps int, file string, dev *compute.Device, asJSON bool) error {
	opt := bench.Options{Ops: ops, Reps: reps, File: file, TrailingShapes: trailingShapes,
		Open: func(path string) (recording.Recording, *probe.Probe, []string, error) {
			var in inputFlags
			rec, pr, err := in.open(path)
			return rec, pr, in.warnings, err
		},
		Warnings: func(w []string) { printWarnings(cmdErr, w) },
	}
	var rows []bench.Row
	if asJSON {
		opt.Row = func(r bench.Row) { rows = append(rows, r) }
	} else {
		fmt.Fprintf(cmdOut, "dspk %s bench, %d repetitions, medians\n\n", version, reps)
		fmt.Fprintf(cmdOut, "%-36s %-8s %12s  %s\n", "op", "device", "time", "throughput")
		opt.Row = printBenchRow
		opt.DetectStages = printDetectStages
	}
	if err := bench.Run(cmdCtx, dev, opt); err != nil {
		var unknown bench.UnknownOpError
		var noFile bench.NeedsFileError
		switch {
		case errors.As(err, &unknown):
			return usagef("unknown op %q", unknown.Op)
		case errors.As(err, &noFile):
			return usagef("-ops %s needs -file PATH", noFile.Op)
		}
		return err
	}
	if !asJSON {
		return nil
	}
	b, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmdOut, "%s\n", b)
	return err
}

// printBenchRow prints one line of the table.
func printBenchRow(r bench.Row) {
	fmt.Fprintf(cmdOut, "%-36s %-8s %10.3f ms  %s\n", r.Label, r.Device, float64(r.Time.Microseconds())/1000, r.Text)
}

// printDetectStages prints the table of the GPU detection stages.
func printDetectStages(t *bench.DetectStages) {
	fmt.Fprintf(cmdOut, "\nGPU detection stages, one window: %d centres, %d strong points, %d spikes; medians of %d\n", t.Centres, t.Strong, t.Spikes, t.Reps)
	fmt.Fprintf(cmdOut, "%-14s %10s %10s %9s\n", "stage", "ms", "floor ms", "fraction")
	for _, s := range t.Stages {
		fmt.Fprintf(cmdOut, "%-14s %10.3f %10.4f %9.2f\n", s.Name, s.Ms, s.Floor*1e3, s.Floor*1e3/s.Ms)
	}
}
