package batch

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
)

// planFormat identifies the layout of a plan file.
const planFormat = "dspk-batch-plan/1"

// The steps of a plan row.
const (
	StepDetect = "detect" // the whole recording in one run
	StepGlobal = "global" // the whitening and templates of a sharded recording
	StepShard  = "shard"  // detection over a range of windows with the global results
	StepMerge  = "merge"  // the shards' spikes into one folder

	// StepSort is a sort plan's row of a whole recording: the sort of one
	// recording in one process.
	StepSort = "sort"
	// The steps of a sort split in time: the global step (everything up
	// to the learned templates), the shards (learned-template matching
	// over a range of windows) and the merge (the final clustering,
	// curation and the sort folder).
	StepSortGlobal = "sort-global"
	StepSortShard  = "sort-shard"
	StepSortMerge  = "sort-merge"
)

// planSteps are the steps of the rows of each kind of plan.
var planSteps = map[string]map[string]bool{
	KindDetect: {StepDetect: true, StepGlobal: true, StepShard: true, StepMerge: true},
	KindSort:   {StepSort: true, StepSortGlobal: true, StepSortShard: true, StepSortMerge: true},
}

// Plan is a batch plan: what to run, row by row, and where the results go.
// Rows of phase 0 need nothing; a row of phase p > 0 needs the rows of
// its Needs (all of a lower phase) to be done.
type Plan struct {
	// Kind is what the plan runs: KindDetect (rows of steps detect,
	// global, shard and merge) or KindSort (rows of step sort, each a
	// whole recording, or of steps sort-global, sort-shard and
	// sort-merge for a sort split in time).
	Kind string
	// OutRoot is the folder the outputs mirror the inputs in.
	OutRoot string
	// Inputs are the folders (or files) searched.
	Inputs []string
	// Options are the settings of every row.
	Options Options
	// ShardSeconds is the longest recording run in one piece; 0: no
	// sharding.
	ShardSeconds float64
	// Rows are the tasks, in the order they are run.
	Rows []Row
	// path is the file the plan was written to or read from.
	path string
}

// planFile is the plan as plan.json holds it: the options as flags.
type planFile struct {
	Format       string   `json:"format"`
	Kind         string   `json:"kind"`
	OutRoot      string   `json:"out_root"`
	Inputs       []string `json:"inputs"`
	Args         []string `json:"args"`
	ShardSeconds float64  `json:"shard_seconds"`
	Rows         []Row    `json:"rows"`
}

// Row is one task of a plan.
type Row struct {
	ID    int    `json:"id"`
	Step  string `json:"step"`
	Phase int    `json:"phase"`
	// Recording names the recording (its run or session and file name)
	// and Probe the probe stream (imec0, ProbeA-AP, or the file name).
	Recording string `json:"recording"`
	Probe     string `json:"probe"`
	// Files are the recording's data files (several for a split
	// SpikeGLX run, sorted by gate and trigger; the structure.oebin for
	// Open Ephys) and Stream the Open Ephys stream.
	Files  []string `json:"files"`
	Stream string   `json:"stream,omitempty"`
	// Shard is this row's shard of Shards (0 of 1 when not sharded);
	// Windows the range [first, end) of the schedule's windows it
	// detects, of Total.
	Shard   int    `json:"shard"`
	Shards  int    `json:"shards"`
	Windows [2]int `json:"windows"`
	Total   int    `json:"total_windows"`
	// Seconds of recording, channels per sample, and the data size.
	Seconds  float64 `json:"seconds"`
	Channels int     `json:"channels"`
	Bytes    int64   `json:"bytes"`
	// Out is the row's output folder; Global the global step's folder a
	// shard or merge uses; Parts the shard folders a merge reads.
	Out    string   `json:"out"`
	Global string   `json:"global,omitempty"`
	Parts  []string `json:"parts,omitempty"`
	Needs  []int    `json:"needs,omitempty"`
	// EstSeconds and EstMemBytes are the expected wall time and host
	// memory of the row ([Estimate]).
	EstSeconds  float64 `json:"est_seconds"`
	EstMemBytes int64   `json:"est_mem_bytes"`
}

// Path is the file the plan was written to or read from ("" for none).
func (pl *Plan) Path() string { return pl.path }

// Args returns the plan's options as plan.json stores them: the flags of
// dspk batch plan ([Options.Args]).
func (pl *Plan) Args() []string { return pl.Options.Args(pl.Kind) }

// Write writes the plan as JSON to path (atomically: a temporary file,
// synced, renamed over it) without the checks of [Plan.Save]; the plan is
// then the plan of that file.
func (pl *Plan) Write(path string) error {
	b, err := pl.encode()
	if err != nil {
		return err
	}
	if err := writeAtomic(path, b); err != nil {
		return err
	}
	pl.path = path
	return nil
}

// Read reads a plan file and checks its rows and flags.
func Read(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	var pf planFile
	if err := json.Unmarshal(b, &pf); err != nil {
		return nil, fmt.Errorf("batch: %s: not a plan: %w", path, err)
	}
	if pf.Format != planFormat {
		return nil, fmt.Errorf("batch: %s: format %q, want %q (write it with dspk batch plan)", path, pf.Format, planFormat)
	}
	steps := planSteps[pf.Kind]
	if steps == nil {
		return nil, fmt.Errorf("batch: %s: kind %q is not supported (detect or sort)", path, pf.Kind)
	}
	for i, r := range pf.Rows {
		if r.ID != i {
			return nil, fmt.Errorf("batch: %s: row %d has id %d", path, i, r.ID)
		}
		if !steps[r.Step] {
			return nil, fmt.Errorf("batch: %s: row %d has step %q, not one of a %s plan", path, i, r.Step, pf.Kind)
		}
		for _, n := range r.Needs {
			if n < 0 || n >= len(pf.Rows) || pf.Rows[n].Phase >= r.Phase {
				return nil, fmt.Errorf("batch: %s: row %d needs row %d of a phase not below its own", path, i, n)
			}
		}
	}
	opt, err := ParseArgs(pf.Kind, pf.Args)
	if err != nil {
		return nil, err
	}
	return &Plan{Kind: pf.Kind, OutRoot: pf.OutRoot, Inputs: pf.Inputs, Options: opt, ShardSeconds: pf.ShardSeconds,
		Rows: pf.Rows, path: path}, nil
}

// Print writes the plan as a table: one line per row.
func (pl *Plan) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTEP\tRECORDING\tPROBE\tSHARD\tWINDOWS\tSECONDS\tEST TIME\tEST MEM\tOUTPUT")
	for _, r := range pl.Rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%d-%d\t%.1f\t%s\t%s\t%s\n", r.ID, r.Step, r.Recording, r.Probe, r.Shard+1, r.Shards,
			r.Windows[0], r.Windows[1], r.Seconds, fmtSeconds(r.EstSeconds), fmtBytes(r.EstMemBytes), r.Out)
	}
	tw.Flush()
}

func fmtSeconds(s float64) string {
	switch {
	case s < 120:
		return fmt.Sprintf("%.0fs", s)
	case s < 7200:
		return fmt.Sprintf("%.0fm", s/60)
	}
	return fmt.Sprintf("%.1fh", s/3600)
}

func fmtBytes(b int64) string {
	return fmt.Sprintf("%.1fG", float64(b)/(1<<30))
}
