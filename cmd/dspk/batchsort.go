package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"dspk/compute"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
)

// stepSort is the step of a sort plan's rows of a whole recording: the
// sort of one recording in one process (a plan with -shard-length splits
// longer ones into the steps of batchsortshard.go).
const stepSort = "sort"

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
	motion := map[string]bool{"nblocks": true, "sig_interp": true, "binning_depth": true, "correction": true}
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

// estimateSort returns the expected wall time and host memory of sorting
// seconds of a recording, by the rule of docs/cluster-running.md: time
// 60 s of start plus the recording at sortGPUSpeed or sortCPUSpeed times
// real time; memory detection's ([estimate]) plus 2 GiB for clustering
// and matching plus 2 MB per second of recording for the spike tables.
func estimateSort(seconds float64, channels int, rate float64, batch, nt int, gpu bool) (float64, int64) {
	speed := sortCPUSpeed
	if gpu {
		speed = sortGPUSpeed
	}
	_, mem := estimate(seconds, channels, rate, batch, nt, gpu)
	return 60 + seconds/speed, mem + 2<<30 + int64(2e6*seconds)
}

// The speeds (× real time) the sort estimates assume: a half and a third
// of the slowest measured (10-min NP1 sorts on the H200: 20–35× on the
// GPU, 1.6× on 2 CPU cores; docs/cluster-running.md).
const (
	sortCPUSpeed = 0.5
	sortGPUSpeed = 10.0
)

// rowSortFlags parses the plan's flags (and the row's stream) as sort
// would.
func rowSortFlags(pl *Plan, r *Row) (*inputFlags, *pipelineFlags, *sortFlags, error) {
	var in inputFlags
	var pf pipelineFlags
	var sf sortFlags
	err := parseRowArgs(pl, r, func(fs *flag.FlagSet) {
		in.register(fs)
		pf.register(fs)
		sf.register(fs)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if sf.motion.nblocks < 0 {
		return nil, nil, nil, fmt.Errorf("batch: the plan's flags %q: -nblocks %d: must be 0 (no correction) or more", pl.Args, sf.motion.nblocks)
	}
	return &in, &pf, &sf, nil
}

// sortRow is what every sort step of a plan row opens: the plan's flags,
// the recording (closed by close) and the device (the worker's).
type sortRow struct {
	in  *inputFlags
	pf  *pipelineFlags
	sf  *sortFlags
	rec recording.Recording
	pr  *probe.Probe
	dev *compute.Device
}

// openSortRow parses the plan's flags for row r, opens its recording and
// checks the probe, and gets device through devs. Errors name the row.
func openSortRow(pl *Plan, r *Row, device string, devs devices) (*sortRow, error) {
	in, pf, sf, err := rowSortFlags(pl, r)
	if err != nil {
		return nil, err
	}
	rec, pr, err := in.open(r.Files...)
	if err != nil {
		return nil, err
	}
	if err := pf.check(pr, nil); err != nil {
		rec.Close()
		return nil, fmt.Errorf("batch: row %d: %w", r.ID, err)
	}
	dev, err := devs.get(device)
	if err != nil {
		rec.Close()
		return nil, fmt.Errorf("batch: row %d: %w", r.ID, err)
	}
	return &sortRow{in: in, pf: pf, sf: sf, rec: rec, pr: pr, dev: dev}, nil
}

// close closes the row's recording (the device stays the worker's).
func (s *sortRow) close() { s.rec.Close() }

// checkWindows refuses a recording whose schedule no longer has the
// plan's window count.
func (s *sortRow) checkWindows(r *Row, got int) error {
	if got != r.Total {
		return fmt.Errorf("batch: row %d: %s has %d windows now, the plan says %d; plan again", r.ID, s.rec.Name(), got, r.Total)
	}
	return nil
}

// writeSort runs dspk sort's runSort for row r into r.Out (replacing a
// folder of an older key) with the row's hooks — its device, the window
// check, the done-mark written before the folder is committed, progress
// lines on log — and sort (nil: the whole sort) as the hooks' sort.
func (s *sortRow) writeSort(ctx context.Context, pl *Plan, r *Row, device string, log io.Writer,
	sort func(context.Context, *pipeline.Pipeline, pipeline.SortOptions) (*pipeline.SortResult, error)) error {
	_, statErr := os.Stat(r.Out)
	s.sf.out, s.sf.device, s.sf.overwrite = r.Out, device, statErr == nil
	devName := s.dev.String()
	h := sortHooks{
		dev:   s.dev,
		check: func(p *pipeline.Pipeline) error { return s.checkWindows(r, p.Schedule().Windows) },
		extra: func(dir string) error {
			if err := testPause(ctx, r.ID); err != nil {
				return err
			}
			return writeMark(dir, pl, r, devName)
		},
		progress: progressLines(log, progressInterval, time.Now),
		sort:     sort,
	}
	printWarnings(log, s.in.warnings)
	_, err := runSort(ctx, s.rec, s.pr, s.pf, s.sf, s.in.runInputs(r.Files, s.rec), s.in.warnings, log, h)
	return err
}

// runSortRow runs the sort row r on device (opened through devs): the
// folder of dspk sort with the plan's flags, which holds the row's
// batch.json and is committed only when whole.
func runSortRow(ctx context.Context, pl *Plan, r *Row, device string, devs devices, log io.Writer) (bool, error) {
	s, err := openSortRow(pl, r, device, devs)
	if err != nil {
		return false, err
	}
	defer s.close()
	fmt.Fprintf(log, "row %d: %s %s %s, %d windows, on %s -> %s\n", r.ID, r.Step, r.Recording, r.Probe, r.Total, s.dev, r.Out)
	err = s.writeSort(ctx, pl, r, device, log, nil)
	return err == nil, err
}
