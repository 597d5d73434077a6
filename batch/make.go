package batch

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"dspk/pipeline"
	"dspk/recording"
)

// Spec says what to plan.
type Spec struct {
	// Kind is what each row runs: KindDetect or KindSort.
	Kind string
	// Inputs are the folders (or files) to search for recordings.
	Inputs []string
	// OutRoot is the folder the outputs mirror the inputs in.
	OutRoot string
	// Options are the settings of every row; their probe and templates
	// files are made absolute, so that rows run from any folder find
	// them.
	Options Options
	// ShardSeconds splits recordings longer than this into a global
	// step, time shards and a merge (0: never).
	ShardSeconds float64
	// GPU makes the time estimates assume a GPU (else the CPU).
	GPU bool
}

// New finds the recordings under the inputs of s and plans their rows.
// The plan is not written ([Plan.Write]).
func New(s Spec) (*Plan, error) {
	if planSteps[s.Kind] == nil {
		return nil, fmt.Errorf("batch: kind %q: detect or sort", s.Kind)
	}
	if s.ShardSeconds < 0 {
		return nil, fmt.Errorf("batch: -shard-length %gs must not be negative", s.ShardSeconds)
	}
	opt := s.Options
	opt.Input.Probe = absFileArg(opt.Input.Probe)
	opt.Templates = absFileArg(opt.Templates)
	opt.Input.Stream = ""
	if err := checkOptions(s.Kind, opt); err != nil {
		return nil, err
	}
	return makePlan(s.Inputs, s.OutRoot, s.Kind, opt, s.ShardSeconds, s.GPU)
}

// makePlan finds the recordings under inputs and plans their rows of
// kind ("detect" or "sort"), splitting those longer than shardSeconds
// (0: none) into a global step, time shards and a merge.
func makePlan(inputs []string, out, kind string, opt Options, shardSeconds float64, gpu bool) (*Plan, error) {
	if err := checkOutRoot(out, inputs); err != nil {
		return nil, err
	}
	in := opt.Input
	rawOK := in.Probe != "" && in.Channels > 0 && in.Rate > 0
	recs, err := findRecordings(inputs, rawOK)
	if err != nil {
		return nil, err
	}
	pl := &Plan{Kind: kind, OutRoot: pipeline.AbsPath(out), Options: opt, ShardSeconds: shardSeconds}
	for _, i := range inputs {
		pl.Inputs = append(pl.Inputs, pipeline.AbsPath(i))
	}
	seen := map[string]string{}
	for _, f := range recs {
		row, sched, rate, err := pl.measure(f)
		if err != nil {
			return nil, err
		}
		rel := f.rel
		if len(inputs) > 1 {
			rel = filepath.Join(filepath.Base(filepath.Clean(f.root)), rel)
		}
		leaf := f.probe
		if f.stream == "" && f.name != f.probe+filepath.Ext(f.name) {
			leaf = f.name + "_" + f.probe
		}
		row.Out = filepath.Join(pl.OutRoot, rel, leaf)
		if prev, ok := seen[row.Out]; ok {
			return nil, fmt.Errorf("batch: %s and %s would both write %s", prev, row.Files[0], row.Out)
		}
		seen[row.Out] = row.Files[0]
		pl.planRows(row, sched, rate, filepath.Join(pl.OutRoot, ".dspk-batch", rel, leaf), gpu)
	}
	return pl, nil
}

// measure opens the recording f and returns its row of a whole run (of
// step detect, without its output folder and estimates), its schedule
// and sample rate.
func (pl *Plan) measure(f found) (Row, recording.Schedule, float64, error) {
	cfg := pl.Options.Config
	in := pl.Options.Input
	in.Stream = f.stream
	rec, pr, _, err := in.Open(f.files...)
	if err != nil {
		return Row{}, recording.Schedule{}, 0, fmt.Errorf("batch: %s: %w", f.files[0], err)
	}
	if err := pl.checkRecording(rec, pr); err != nil {
		rec.Close()
		return Row{}, recording.Schedule{}, 0, fmt.Errorf("batch: %s: %w", f.files[0], err)
	}
	fs := rec.SampleRate()
	imin := int64(cfg.Tmin * fs)
	imax := rec.Samples()
	if !cfg.Tmax.None() {
		imax = min(imax, int64(float64(cfg.Tmax)*fs))
	}
	channels := rec.Channels()
	var size int64
	data := f.files
	if fl, ok := rec.(recording.Filer); ok {
		data = fl.Files() // a SpikeInterface folder's segment files
	}
	for _, p := range data {
		if st, err := os.Stat(p); err == nil {
			size += st.Size()
		}
	}
	rec.Close()
	sched, err := recording.NewSchedule(imin, max(imax, imin), cfg.BatchSize, cfg.NT)
	if err != nil || sched.Windows < 2 {
		return Row{}, recording.Schedule{}, 0, fmt.Errorf("batch: %s: too short to detect (%d samples; at least two windows of %d are needed)",
			f.files[0], imax-imin, cfg.BatchSize)
	}
	var files []string
	for _, p := range f.files {
		files = append(files, pipeline.AbsPath(p))
	}
	seconds := float64(sched.End-sched.Start) / fs
	row := Row{Recording: f.name, Probe: f.probe, Files: files, Stream: f.stream, Shards: 1, Total: sched.Windows,
		Windows: [2]int{0, sched.Windows}, Seconds: seconds, Channels: channels, Bytes: size, Step: StepDetect}
	return row, sched, fs, nil
}

// planRows appends the rows of row's recording (of schedule sched, at
// rate Hz): one row of a whole run, or, when it is longer than the
// plan's ShardSeconds, the rows of a run split in time, whose scratch
// folders go under scratch. gpu says what the estimates assume.
func (pl *Plan) planRows(row Row, sched recording.Schedule, rate float64, scratch string, gpu bool) {
	cfg := pl.Options.Config
	seconds, channels := row.Seconds, row.Channels
	est := func(r *Row, secs float64) {
		r.EstSeconds, r.EstMemBytes = Estimate(secs, channels, rate, cfg.BatchSize, cfg.NT, gpu)
	}
	perWin := math.MaxInt
	if pl.ShardSeconds > 0 {
		perWin = max(1, int(pl.ShardSeconds*rate)/cfg.BatchSize)
	}
	whole := pl.ShardSeconds <= 0 || seconds <= pl.ShardSeconds || sched.Windows <= perWin
	windowSeconds := func(wr [2]int) float64 {
		return float64(sched.Window(wr[1]-1).OwnEnd-sched.Window(wr[0]).OwnStart) / rate
	}
	switch {
	case pl.Kind == KindSort && !whole:
		planSortShards(pl, row, shardRanges(sched.Windows, perWin), scratch, rate, windowSeconds, cfg.BatchSize, cfg.NT, gpu)
	case pl.Kind == KindSort:
		row.Step = StepSort
		row.EstSeconds, row.EstMemBytes = EstimateSort(seconds, channels, rate, cfg.BatchSize, cfg.NT, gpu)
		row.ID = len(pl.Rows)
		pl.Rows = append(pl.Rows, row)
	case whole:
		est(&row, seconds)
		row.ID = len(pl.Rows)
		pl.Rows = append(pl.Rows, row)
	default:
		appendSplit(pl, row, shardRanges(sched.Windows, perWin), scratch, "", [3]string{StepGlobal, StepShard, StepMerge}, windowSeconds,
			func(r *Row) {
				switch r.Step {
				case StepGlobal:
					// The global passes read one window in NSkip.
					est(r, seconds/float64(cfg.NSkip)*2)
				case StepShard:
					est(r, r.Seconds)
				default:
					// The merge reads the shards' spikes, not the recording.
					r.EstSeconds, r.EstMemBytes = 30+seconds/2000, 2<<30
				}
			})
	}
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

// The shares of a sort's time the estimates give its steps: the global
// step runs the whitening, template and motion passes, detection and the
// first clustering; a shard matches its windows; the merge clusters and
// curates every spike.
const (
	sortGlobalShare = 0.6
	sortShardShare  = 0.25
	sortMergeShare  = 0.25
)

// planSortShards appends the rows of a sort of row's recording split
// into the window ranges ranges: a global row (phase 0), a shard row per
// range (phase 1) writing under scratch, and the merge row (phase 2)
// writing the sort folder row.Out (appendSplit). fs is the sample rate
// and the rest what [EstimateSort] takes.
func planSortShards(pl *Plan, row Row, ranges [][2]int, scratch string, fs float64, windowSeconds func(wr [2]int) float64,
	batch, nt int, gpu bool) {
	appendSplit(pl, row, ranges, scratch, "sort-", [3]string{StepSortGlobal, StepSortShard, StepSortMerge}, windowSeconds,
		func(r *Row) {
			secs, share := row.Seconds, sortGlobalShare
			switch r.Step {
			case StepSortShard:
				secs, share = r.Seconds, sortShardShare
			case StepSortMerge:
				share = sortMergeShare
			}
			t, mem := EstimateSort(secs, row.Channels, fs, batch, nt, gpu)
			r.EstSeconds, r.EstMemBytes = 60+(t-60)*share, mem
		})
}
