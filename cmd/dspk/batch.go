package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"dspk/pipeline"
	"dspk/recording"
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
		setup: func(fs *flag.FlagSet) func([]string) error {
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
				shardSeconds := shard.Seconds()
				switch *kind {
				case "detect":
					if err := refuseGiven(given, sortOnlyReasons(sortOnly), "-kind detect"); err != nil {
						return err
					}
				case "sort":
					if err := refuseGiven(given, sortRefused, "-kind sort"); err != nil {
						return err
					}
					if sf.motion.nblocks < 0 {
						return usagef("-nblocks %d: must be 0 (no correction) or more", sf.motion.nblocks)
					}
					if err := sf.opt.Validate(); err != nil {
						return usagef("%v", err)
					}
					if !given["shard-length"] {
						shardSeconds = 0 // a sort plans whole rows unless told
					}
				default:
					return usagef("-kind %q: detect or sort", *kind)
				}
				if *estDev != "cpu" && *estDev != "cuda" {
					return usagef("-estimate-for %q: cpu or cuda", *estDev)
				}
				if *shard < 0 {
					return usagef("-shard-length must not be negative")
				}
				var pass []string
				fs.Visit(func(f *flag.Flag) {
					if passFlag(*kind, f.Name, sortOnly) {
						v := f.Value.String()
						if f.Name == "probe" || f.Name == "templates" {
							v = absFileArg(v)
						}
						pass = append(pass, "-"+f.Name+"="+v)
					}
				})
				pl, err := makePlan(args, *out, *kind, pass, shardSeconds, &in, &pf, *estDev == "cuda")
				if err != nil {
					return err
				}
				path := *planPath
				if path == "" {
					path = filepath.Join(*out, "plan.json")
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
					return err
				}
				if err := writePlan(pl, path); err != nil {
					return err
				}
				printPlan(cmdOut, pl)
				fmt.Fprintf(cmdOut, "%d rows; plan written to %s\n", len(pl.Rows), path)
				return nil
			}
		},
	})
	register(&command{
		name:    "batch task",
		short:   "run one row of a batch plan (what batch run and batch slurm call)",
		usage:   "PLAN ROW",
		example: `dspk batch task -device cuda:0 out/plan.json 3`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			device := fs.String("device", "auto", "compute device: auto, cpu or cuda:N")
			return func(args []string) error {
				if len(args) != 2 {
					return usagef("batch task takes a plan file and a row number")
				}
				pl, err := readPlan(args[0])
				if err != nil {
					return err
				}
				id, err := strconv.Atoi(args[1])
				if err != nil || id < 0 || id >= len(pl.Rows) {
					return usagef("row %q: the plan has rows 0 to %d", args[1], len(pl.Rows)-1)
				}
				r := &pl.Rows[id]
				setOutput(r.Out)
				devs := devices{}
				defer devs.Close()
				ran, err := runRow(cmdCtx, pl, r, *device, devs, cmdErr)
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

// makePlan finds the recordings under inputs and plans their rows of
// kind ("detect" or "sort"), splitting those longer than shardSeconds
// (0: none) into a global step, time shards and a merge.
func makePlan(inputs []string, out, kind string, args []string, shardSeconds float64, in *inputFlags, pf *pipelineFlags, gpu bool) (*Plan, error) {
	if err := checkOutRoot(out, inputs); err != nil {
		return nil, err
	}
	rawOK := in.probe != "" && in.channels > 0 && in.rate > 0
	recs, err := findRecordings(inputs, rawOK)
	if err != nil {
		return nil, err
	}
	pl := &Plan{Format: planFormat, Kind: kind, OutRoot: pipeline.AbsPath(out), Args: args, ShardSeconds: shardSeconds}
	for _, i := range inputs {
		pl.Inputs = append(pl.Inputs, pipeline.AbsPath(i))
	}
	cfg := pf.config()
	seen := map[string]string{}
	for _, f := range recs {
		fl := *in
		fl.stream = f.stream
		fl.warnings = nil
		rec, _, err := fl.open(f.files...)
		if err != nil {
			return nil, fmt.Errorf("batch: %s: %w", f.files[0], err)
		}
		fs := rec.SampleRate()
		imin := int64(cfg.Tmin * fs)
		imax := rec.Samples()
		if !cfg.Tmax.None() {
			imax = min(imax, int64(float64(cfg.Tmax)*fs))
		}
		channels := rec.Channels()
		var size int64
		for _, p := range f.files {
			if st, err := os.Stat(p); err == nil {
				size += st.Size()
			}
		}
		rec.Close()
		sched, err := recording.NewSchedule(imin, max(imax, imin), cfg.BatchSize, cfg.NT)
		if err != nil || sched.Windows < 2 {
			return nil, fmt.Errorf("batch: %s: too short to detect (%d samples; at least two windows of %d are needed)", f.files[0], imax-imin, cfg.BatchSize)
		}
		var files []string
		for _, p := range f.files {
			files = append(files, pipeline.AbsPath(p))
		}
		rel := f.rel
		if len(inputs) > 1 {
			rel = filepath.Join(filepath.Base(filepath.Clean(f.root)), rel)
		}
		leaf := f.probe
		if f.stream == "" && f.name != f.probe+filepath.Ext(f.name) {
			leaf = f.name + "_" + f.probe
		}
		final := filepath.Join(pl.OutRoot, rel, leaf)
		if prev, ok := seen[final]; ok {
			return nil, fmt.Errorf("batch: %s and %s would both write %s", prev, files[0], final)
		}
		seen[final] = files[0]
		seconds := float64(sched.End-sched.Start) / fs
		row := Row{Recording: f.name, Probe: f.probe, Files: files, Stream: f.stream, Shards: 1, Total: sched.Windows,
			Windows: [2]int{0, sched.Windows}, Seconds: seconds, Channels: channels, Bytes: size, Out: final, Step: stepDetect}
		est := func(r *Row, secs float64) {
			r.EstSeconds, r.EstMemBytes = estimate(secs, channels, fs, cfg.BatchSize, cfg.NT, gpu)
		}
		perWin := math.MaxInt
		if shardSeconds > 0 {
			perWin = max(1, int(shardSeconds*fs)/cfg.BatchSize)
		}
		whole := shardSeconds <= 0 || seconds <= shardSeconds || sched.Windows <= perWin
		if kind == "sort" {
			if !whole {
				planSortShards(pl, row, shardRanges(sched.Windows, perWin), filepath.Join(pl.OutRoot, ".dspk-batch", rel, leaf), fs,
					func(wr [2]int) float64 {
						return float64(sched.Window(wr[1]-1).OwnEnd-sched.Window(wr[0]).OwnStart) / fs
					}, cfg.BatchSize, cfg.NT, gpu)
				continue
			}
			row.Step = stepSort
			row.EstSeconds, row.EstMemBytes = estimateSort(seconds, channels, fs, cfg.BatchSize, cfg.NT, gpu)
			row.ID = len(pl.Rows)
			pl.Rows = append(pl.Rows, row)
			continue
		}
		if whole {
			est(&row, seconds)
			row.ID = len(pl.Rows)
			pl.Rows = append(pl.Rows, row)
			continue
		}
		appendSplit(pl, row, shardRanges(sched.Windows, perWin), filepath.Join(pl.OutRoot, ".dspk-batch", rel, leaf), "",
			[3]string{stepGlobal, stepShard, stepMerge},
			func(wr [2]int) float64 {
				return float64(sched.Window(wr[1]-1).OwnEnd-sched.Window(wr[0]).OwnStart) / fs
			},
			func(r *Row) {
				switch r.Step {
				case stepGlobal:
					// The global passes read one window in NSkip.
					est(r, seconds/float64(cfg.NSkip)*2)
				case stepShard:
					est(r, r.Seconds)
				default:
					// The merge reads the shards' spikes, not the recording.
					r.EstSeconds, r.EstMemBytes = 30+seconds/2000, 2<<30
				}
			})
	}
	return pl, nil
}

// appendSplit appends to pl the rows of row's recording split in time into
// the window ranges: a global row (phase 0) writing scratch/PREFIXglobal,
// a shard row per range (phase 1) writing scratch/PREFIXshard-NNN, and
// the merge row (phase 2) writing row.Out, which needs them all. steps
// are the three rows' steps, windowSeconds a range's length in seconds and
// est sets a row's estimates (its Step and Seconds say which row it is).
func appendSplit(pl *Plan, row Row, ranges [][2]int, scratch, prefix string, steps [3]string,
	windowSeconds func(wr [2]int) float64, est func(r *Row)) {
	g := row
	g.Step, g.Out, g.Windows = steps[0], filepath.Join(scratch, prefix+"global"), [2]int{0, 0}
	est(&g)
	g.ID = len(pl.Rows)
	pl.Rows = append(pl.Rows, g)
	merge := row
	merge.Step, merge.Phase, merge.Global, merge.Shards = steps[2], 2, g.Out, len(ranges)
	for k, wr := range ranges {
		s := row
		s.Step, s.Phase, s.Shard, s.Shards, s.Windows = steps[1], 1, k, len(ranges), wr
		s.Out = filepath.Join(scratch, fmt.Sprintf("%sshard-%03d", prefix, k))
		s.Global, s.Needs = g.Out, []int{g.ID}
		s.Seconds = windowSeconds(wr)
		s.Bytes = int64(float64(row.Bytes) * s.Seconds / row.Seconds)
		est(&s)
		s.ID = len(pl.Rows)
		pl.Rows = append(pl.Rows, s)
		merge.Parts = append(merge.Parts, s.Out)
		merge.Needs = append(merge.Needs, s.ID)
	}
	merge.Needs = append([]int{g.ID}, merge.Needs...)
	est(&merge)
	merge.ID = len(pl.Rows)
	pl.Rows = append(pl.Rows, merge)
}

// absFileArg makes a flag value that names a file (or FILE:N, a probe
// of several in a file) absolute, so that tasks run from any folder find
// it; other values (np1, np2) are kept.
func absFileArg(v string) string {
	if _, err := os.Stat(v); err == nil {
		return pipeline.AbsPath(v)
	}
	if i := strings.LastIndexByte(v, ':'); i > 0 {
		if _, err := os.Stat(v[:i]); err == nil {
			return pipeline.AbsPath(v[:i]) + v[i:]
		}
	}
	return v
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
