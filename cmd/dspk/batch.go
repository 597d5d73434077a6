package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"dspk/batch"
	"dspk/pipeline"
)

// planPassFlags are the flags of batch plan that every row's detect
// gets (stored in the plan's args); a sort row gets these but those of
// sortRefused, and the flags sortPlanFlags adds ([passFlag]).
var planPassFlags = map[string]bool{
	"probe": true, "channels": true, "rate": true, "dtype": true, "scale": true, "strict-size": true, "force-dtype": true,
	"car-groups": true, "tmin": true, "tmax": true, "invert": true, "no-car": true, "highpass": true, "batch": true, "nskip": true,
	"th-single-ch": true, "nearest_chans": true, "nearest_templates": true, "groups": true,
	"threshold": true, "templates": true,
}

func init() {
	register(&command{
		name:  "batch plan",
		short: "find the recordings under folders and plan one detect (or sort) job per probe stream and time shard",
		usage: "DIR...",
		example: `dspk batch plan -o /scratch/out /data/2026-12-01 /data/2026-12-02
dspk batch plan -o out -shard-length 30m -threshold 8 sessions/
dspk batch plan -o out -probe probe.json -channels 64 -rate 30000 rawdir/
dspk batch plan -o sorted -kind sort -Th_learned 7 /data/2026-12-01`,
		setup: setupBatchPlan,
	})
	register(&command{
		name:    "batch task",
		short:   "run one row of a batch plan (what batch run and batch slurm call)",
		usage:   "PLAN ROW",
		example: `dspk batch task -device cuda:0 out/plan.json 3`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			device := fs.String("device", "auto", "compute device: auto, cpu or cuda:N")
			overwrite := fs.Bool("overwrite", false, "let a row replace a dspk folder at its output path that no batch row wrote")
			return func(args []string) error {
				if len(args) != 2 {
					return usagef("batch task takes a plan file and a row number")
				}
				pl, err := batch.Read(args[0])
				if err != nil {
					return err
				}
				id, err := strconv.Atoi(args[1])
				if err != nil || id < 0 || id >= len(pl.Rows) {
					return usagef("row %q: the plan has rows 0 to %d", args[1], len(pl.Rows)-1)
				}
				r := &pl.Rows[id]
				w := newWorker()
				w.Overwrite = *overwrite
				defer w.Close()
				ran, err := w.Run(cmdCtx, pl, id, *device, cmdErr)
				if err != nil {
					return err
				}
				if ran {
					fmt.Fprintf(cmdOut, "row %d done: %s\n", id, r.Out)
				} else {
					fmt.Fprintf(cmdOut, "row %d was done already: %s\n", id, r.Out)
				}
				return nil
			}
		},
	})
}

func init() {
	register(&command{
		name:  "batch run",
		short: "run a batch plan here: one process per device, rows back to back, resumable",
		usage: "PLAN",
		example: `dspk batch run out/plan.json
dspk batch run -devices cuda:0,cuda:1 out/plan.json
dspk batch run -devices cpu,cpu out/plan.json`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			devices := fs.String("devices", "auto", "devices to run rows on, one process each: a comma-separated list of cpu and cuda:N,\n"+
				"or auto (every GPU of the host, else one cpu)")
			overwrite := fs.Bool("overwrite", false, "let a row replace a dspk folder at its output path that no batch row wrote")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("batch run takes one plan file")
				}
				pl, err := batch.Read(args[0])
				if err != nil {
					return err
				}
				devs, err := batch.ParseDevices(*devices)
				if err != nil {
					return usagef("%v", err)
				}
				rn := newRunner()
				rn.Overwrite = *overwrite
				return rn.Run(cmdCtx, pl, devs)
			}
		},
	})
}

func init() {
	register(&command{
		name:    "batch worker",
		short:   "run rows of a batch plan on one device, row ids read from standard input (what batch run starts)",
		usage:   "PLAN",
		example: `printf '0\n3\n' | dspk batch worker -device cuda:0 out/plan.json`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			device := fs.String("device", "auto", "compute device: auto, cpu or cuda:N")
			overwrite := fs.Bool("overwrite", false, "let a row replace a dspk folder at its output path that no batch row wrote")
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("batch worker takes one plan file")
				}
				pl, err := batch.Read(args[0])
				if err != nil {
					return err
				}
				w := newWorker()
				w.Overwrite = *overwrite
				defer w.Close()
				return w.Serve(cmdCtx, pl, *device, os.Stdin, cmdOut)
			}
		},
	})
}

// setupBatchPlan registers the flags of batch plan on fs and returns the
// command.
func setupBatchPlan(fs *flag.FlagSet) func([]string) error {
	var in inputFlags
	in.register(fs)
	var pf pipelineFlags
	pf.register(fs)
	fs.Float64("threshold", pipeline.DefaultConfig().ThUniversal, "detection threshold in whitened SD (Kilosort4's Th_universal; -kind detect only: sort's is -Th_universal)")
	fs.String("templates", "", "universal templates to use instead of learning them (as detect's -templates; -kind detect only)")
	out := fs.String("o", "", "output root (required): the outputs mirror the input folders below it")
	planPath := fs.String("plan", "", "plan file to write (default OUTROOT/plan.json)")
	shard := fs.Duration("shard-length", time.Hour, "split recordings longer than this into time shards (0: never; -kind sort: only when given)")
	kind := fs.String("kind", "detect", "what each row runs: detect, or sort (the whole sort of a probe stream: one row, or with -shard-length global, shard and merge rows)")
	sf, sortOnly := sortPlanFlags(fs)
	overwrite := fs.Bool("overwrite", false, "replace a plan file of another plan (only a plan dspk wrote)")
	estDev := fs.String("estimate-for", "cuda", "device kind the time estimates assume: cpu or cuda")
	return func(args []string) error {
		if len(args) == 0 {
			return usagef("batch plan takes the folders (or files) to search")
		}
		if *out == "" {
			return usagef("-o OUTROOT is required")
		}
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		if err := checkPlanKind(*kind, given, sortOnly, sf); err != nil {
			return err
		}
		shardSeconds := shard.Seconds()
		if *kind == batch.KindSort && !given["shard-length"] {
			shardSeconds = 0 // a sort plans whole rows unless told
		}
		if *estDev != "cpu" && *estDev != "cuda" {
			return usagef("-estimate-for %q: cpu or cuda", *estDev)
		}
		opt := planOptions(*kind, &in, &pf, sf, fs)
		fs.Visit(func(f *flag.Flag) {
			if passFlag(*kind, f.Name, sortOnly) {
				opt.Given = append(opt.Given, f.Name)
			}
		})
		pl, err := batch.New(batch.Spec{Kind: *kind, Inputs: args, OutRoot: *out, Options: opt, ShardSeconds: shardSeconds,
			GPU: *estDev == "cuda"})
		if err != nil {
			return err
		}
		path := *planPath
		if path == "" {
			path = filepath.Join(*out, "plan.json")
		}
		setOutput(path)
		if err := pl.Save(path, *overwrite); err != nil {
			return err
		}
		markWritten(path)
		pl.Print(cmdOut)
		fmt.Fprintf(cmdOut, "%d rows; plan written to %s\n", len(pl.Rows), path)
		return nil
	}
}

// checkPlanKind refuses a plan kind other than detect or sort, and the
// flags given (by name) that a plan of kind does not take; for a sort, it
// checks sort's settings sf.
func checkPlanKind(kind string, given, sortOnly map[string]bool, sf *sortFlags) error {
	switch kind {
	case batch.KindDetect:
		return refuseGiven(given, sortOnlyReasons(sortOnly), "-kind detect")
	case batch.KindSort:
		if err := refuseGiven(given, sortRefused, "-kind sort"); err != nil {
			return err
		}
		if sf.motion.nblocks < 0 {
			return usagef("-nblocks %d: must be 0 (no correction) or more", sf.motion.nblocks)
		}
		if err := sf.opt.Validate(); err != nil {
			return usagef("%v", err)
		}
		return nil
	}
	return usagef("-kind %q: detect or sort", kind)
}

// planOptions are the options of a plan of kind with the flags of batch
// plan: those of the recording, the pipeline and, for a detect plan,
// -threshold and -templates (on fs), for a sort plan sort's (sf).
func planOptions(kind string, in *inputFlags, pf *pipelineFlags, sf *sortFlags, fs *flag.FlagSet) batch.Options {
	opt := batch.Options{Input: in.input(), Config: pf.config()}
	if kind == batch.KindSort {
		opt.Config = sortConfig(pf, sf)
		opt.Sort = sortOptions(sf)
		return opt
	}
	opt.Config.ThUniversal = fs.Lookup("threshold").Value.(flag.Getter).Get().(float64)
	opt.Templates = fs.Lookup("templates").Value.String()
	return opt
}

// newWorker returns the worker that runs rows in this process (batch
// task, batch worker): its sorts report progress on the row's log, and the interrupt message names the row's
// folder and stage.
func newWorker() *batch.Worker {
	return &batch.Worker{
		Progress: func(log io.Writer) func(pass string, done, total int) {
			return trackProgress(progressLines(log, progressInterval, time.Now))
		},
		Stage:   setStage,
		Started: func(r *batch.Row) { setOutput(r.Out) },
	}
}

// newRunner returns the runner of batch run: workers are this executable
// (batch worker); tests replace it to start the test binary as dspk.
var newRunner = func() *batch.Runner { return &batch.Runner{Out: cmdOut, Log: cmdErr} }

// sortNotPlanned are the flags of sort that batch plan does not take:
// the output folder and device are the row's, and a row replaces a
// folder of another key by itself.
var sortNotPlanned = map[string]bool{"o": true, "device": true, "overwrite": true}

// sortRefused are the flags of batch plan that a sort plan refuses, with
// why (detect's own flags).
var sortRefused = map[string]string{
	"threshold": "sort's detection threshold is -Th_universal; use -Th_universal",
	"templates": "sort learns its universal templates from the recording (dspk sort has no -templates)",
}

// sortPlanFlags registers sort's own flags (those of sortFlags but
// sortNotPlanned) on the flag set of batch plan where no flag of that
// name is there already; it returns the values they set and the names it
// added, the flags only a sort plan takes.
func sortPlanFlags(fs *flag.FlagSet) (*sortFlags, map[string]bool) {
	scratch := flag.NewFlagSet("sort", flag.ContinueOnError)
	var sf sortFlags
	sf.register(scratch)
	only := map[string]bool{}
	scratch.VisitAll(func(f *flag.Flag) {
		if sortNotPlanned[f.Name] || fs.Lookup(f.Name) != nil {
			return
		}
		fs.Var(f.Value, f.Name, f.Usage+" (-kind sort only)")
		only[f.Name] = true
	})
	return &sf, only
}

// sortOnlyReasons says of each sort-only flag why a detect plan refuses
// it. The motion flags are detect's too, but a detect plan's rows do not
// correct motion: its time shards would need a global drift estimate.
func sortOnlyReasons(only map[string]bool) map[string]string {
	motion := map[string]bool{"nblocks": true, "sig_interp": true, "binning_depth": true, "correction": true, "registration": true}
	why := map[string]string{}
	for name := range only {
		why[name] = "it is a flag of sort (plan with -kind sort)"
		if motion[name] {
			why[name] = "a detect plan's rows do not correct motion (dspk detect -nblocks does; plan with -kind sort to sort with it)"
		}
	}
	return why
}

// refuseGiven returns a usage error for the first given flag (by name)
// of refused, with its reason.
func refuseGiven(given map[string]bool, refused map[string]string, what string) error {
	for _, name := range slices.Sorted(maps.Keys(refused)) {
		if given[name] {
			return usagef("-%s does not apply to %s: %s", name, what, refused[name])
		}
	}
	return nil
}

// passFlag reports whether the flag name of batch plan goes into the
// plan's args for a plan of kind.
func passFlag(kind, name string, sortOnly map[string]bool) bool {
	if kind == "sort" {
		_, refused := sortRefused[name]
		return sortOnly[name] || (planPassFlags[name] && !refused)
	}
	return planPassFlags[name]
}

// batchUsage lists the batch commands (for "dspk batch" alone).
func batchUsage() string {
	var b strings.Builder
	for _, c := range commands {
		if strings.HasPrefix(c.name, "batch ") {
			fmt.Fprintf(&b, "\t%-13s %s\n", c.name, c.short)
		}
	}
	return b.String()
}
