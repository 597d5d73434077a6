package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"dspk/pipeline"
	"dspk/recording"
)

// planFormat identifies the layout of a plan file.
const planFormat = "dspk-batch-plan/1"

// The steps of a plan row.
const (
	stepDetect = "detect" // the whole recording in one run
	stepGlobal = "global" // the whitening and templates of a sharded recording
	stepShard  = "shard"  // detection over a range of windows with the global results
	stepMerge  = "merge"  // the shards' spikes into one folder
)

// planSteps are the steps of the rows of each kind of plan.
var planSteps = map[string]map[string]bool{
	"detect": {stepDetect: true, stepGlobal: true, stepShard: true, stepMerge: true},
	"sort":   {stepSort: true, stepSortGlobal: true, stepSortShard: true, stepSortMerge: true},
}

// Plan is a batch plan: what to run, row by row, and where the results go.
// Rows of phase 0 need nothing; a row of phase p > 0 needs the rows of
// its Needs (all of a lower phase) to be done.
type Plan struct {
	Format string `json:"format"`
	// Kind is the command the plan runs: "detect" (rows of steps detect,
	// global, shard and merge) or "sort" (rows of step sort, each a whole
	// recording, or of steps sort-global, sort-shard and sort-merge for a
	// sort split in time).
	Kind string `json:"kind"`
	// OutRoot is the folder the outputs mirror the inputs in.
	OutRoot string `json:"out_root"`
	// Inputs are the folders (or files) searched.
	Inputs []string `json:"inputs"`
	// Args are the command's flags applied to every row (threshold,
	// batch size, probe, …; never -o or -device).
	Args []string `json:"args"`
	// ShardSeconds is the longest recording run in one piece; 0: no
	// sharding.
	ShardSeconds float64 `json:"shard_seconds"`
	// Rows are the tasks, in the order they are run.
	Rows []Row `json:"rows"`
	// path is the file the plan was read from.
	path string
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
	// memory of the row ([estimate]).
	EstSeconds  float64 `json:"est_seconds"`
	EstMemBytes int64   `json:"est_mem_bytes"`
}

// found is one recording the search found: the arguments that open it.
type found struct {
	root, rel   string // the input it was found under, its folder relative to it
	name, probe string
	files       []string
	stream      string
}

// sglxProbe matches the probe and band of a SpikeGLX AP file name.
var sglxProbe = regexp.MustCompile(`^(.*?)_g\d+_t(?:\d+|cat)\.(imec\d+)\.ap\.bin$`)

// findRecordings searches the inputs for SpikeGLX runs (one entry per
// probe, its _g/_t files together), Open Ephys sessions (one per
// spike-band stream) and raw files with a probe (an info.json, or
// -probe with -channels and -rate given in args). Errors name the path.
func findRecordings(inputs []string, rawOK bool) ([]found, error) {
	var out []found
	for _, in := range inputs {
		st, err := os.Stat(in)
		if err != nil {
			return nil, fmt.Errorf("batch: %w", err)
		}
		root := in
		if !st.IsDir() {
			root = filepath.Dir(in)
		}
		var files []string
		oebins := map[string]bool{}
		err = filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != in && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Name() == "structure.oebin" {
				oebins[p] = true
			}
			files = append(files, p)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("batch: searching %s: %w", in, err)
		}
		slices.Sort(files)
		sglx := map[string][]string{} // folder/run/probe → files
		var keys []string
		underOE := func(p string) bool {
			for d := filepath.Dir(p); len(d) >= len(root); d = filepath.Dir(d) {
				if oebins[filepath.Join(d, "structure.oebin")] {
					return true
				}
				if d == filepath.Dir(d) {
					break
				}
			}
			return false
		}
		for _, p := range files {
			base := filepath.Base(p)
			ext := strings.ToLower(filepath.Ext(base))
			switch {
			case sglxProbe.MatchString(base):
				m := sglxProbe.FindStringSubmatch(base)
				if _, err := os.Stat(recording.MetaPath(p)); err != nil {
					return nil, fmt.Errorf("batch: %s: a SpikeGLX data file without its .meta (%s)", p, filepath.Base(recording.MetaPath(p)))
				}
				// A run's probe folders (run_g0_imec0) and gates (run_g0)
				// are one recording per run and probe.
				k := runFolder(filepath.Dir(p), m[1]) + "\x00" + m[1] + "\x00" + m[2]
				if sglx[k] == nil {
					keys = append(keys, k)
				}
				sglx[k] = append(sglx[k], p)
			case ext == ".bin" || ext == ".dat" || ext == ".raw":
				if underOE(p) || strings.HasSuffix(base, ".lf.bin") || strings.Contains(base, ".nidq.") || strings.Contains(base, ".obx.") {
					continue
				}
				if _, err := os.Stat(recording.MetaPath(p)); err == nil && ext == ".bin" {
					continue // another SpikeGLX stream (LF, NI)
				}
				_, infoErr := os.Stat(filepath.Join(filepath.Dir(p), "info.json"))
				if infoErr != nil && !rawOK {
					return nil, fmt.Errorf("batch: %s: a raw data file whose probe, channels and rate cannot be found "+
						"(put an info.json beside it, or plan it with -probe, -channels and -rate)", p)
				}
				out = append(out, found{root: root, rel: relDir(root, filepath.Dir(p)),
					name: base, probe: strings.TrimSuffix(base, filepath.Ext(base)), files: []string{p}})
			}
		}
		for _, k := range keys {
			parts := strings.Split(k, "\x00")
			sorted, err := recording.SortRunFiles(sglx[k])
			if err != nil {
				return nil, fmt.Errorf("batch: %w", err)
			}
			out = append(out, found{root: root, rel: relDir(root, parts[0]), name: parts[1], probe: parts[2], files: sorted})
		}
		var obs []string
		for ob := range oebins {
			obs = append(obs, ob)
		}
		slices.Sort(obs)
		for _, ob := range obs {
			streams, err := recording.FindOpenEphysStreams(ob)
			if err != nil {
				return nil, fmt.Errorf("batch: %w", err)
			}
			for _, s := range streams {
				if s.Stream.SampleRate < recording.MinSpikeRate {
					continue
				}
				out = append(out, found{root: root, rel: relDir(root, filepath.Dir(ob)), name: filepath.Base(filepath.Dir(ob)),
					probe: s.Stream.Folder(), files: []string{ob}, stream: s.Stream.Folder()})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("batch: nothing to sort in %s: no SpikeGLX .ap.bin (with its .meta), Open Ephys structure.oebin "+
			"with a spike-band stream, or raw .bin/.dat with a probe", strings.Join(inputs, ", "))
	}
	return out, nil
}

// runFolder is the folder that holds a SpikeGLX run's files for one
// probe: dir, or its parent when dir is the run's probe folder
// (run_g0_imec0) so that the gates of a run stay together.
func runFolder(dir, run string) string {
	b := filepath.Base(dir)
	if regexp.MustCompile(`^` + regexp.QuoteMeta(run) + `_g\d+(_imec\d+)?$`).MatchString(b) {
		dir = filepath.Dir(dir)
		if regexp.MustCompile(`^` + regexp.QuoteMeta(run) + `_g\d+$`).MatchString(filepath.Base(dir)) {
			dir = filepath.Dir(dir)
		}
	}
	return dir
}

// relDir is dir relative to root ("." for root itself or outside it).
func relDir(root, dir string) string {
	r, err := filepath.Rel(root, dir)
	if err != nil || strings.HasPrefix(r, "..") {
		return "."
	}
	return r
}

// estimate returns the expected wall time and host memory of detecting
// seconds of a recording of channels per sample on the kind of device
// given ("cpu" or "cuda"), by the rule of docs/cluster-running.md: time
// at a fixed multiple of real time (cpuSpeed or gpuSpeed) plus a start of
// 30 s; memory the loader's three raw windows, the window's float32
// copies (four), the detector's working set (a window's worth twice) and
// 1 GiB of process and output buffers.
func estimate(seconds float64, channels int, rate float64, batch, nt int, gpu bool) (float64, int64) {
	speed := cpuSpeed
	if gpu {
		speed = gpuSpeed
	}
	T := int64(batch + 2*nt)
	mem := 3*T*int64(channels)*2 + 6*T*int64(channels)*4 + 1<<30
	return 30 + seconds/speed, mem
}

// The speeds (× real time) the estimates assume: the CPU figure is a
// 2-core share of this project's development machine for NP1, the GPU
// figure a conservative share of the H200's (docs/perf.md).
const (
	cpuSpeed = 1.0
	gpuSpeed = 100.0
)

// writePlan writes the plan as JSON to path (atomically: a temporary
// file renamed over it).
func writePlan(pl *Plan, path string) error {
	b, err := json.MarshalIndent(pl, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o666); err != nil {
		return fmt.Errorf("batch: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("batch: %w", err)
	}
	return nil
}

// readPlan reads a plan file and checks its rows.
func readPlan(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	var pl Plan
	if err := json.Unmarshal(b, &pl); err != nil {
		return nil, fmt.Errorf("batch: %s: not a plan: %w", path, err)
	}
	if pl.Format != planFormat {
		return nil, fmt.Errorf("batch: %s: format %q, want %q (write it with dspk batch plan)", path, pl.Format, planFormat)
	}
	steps := planSteps[pl.Kind]
	if steps == nil {
		return nil, fmt.Errorf("batch: %s: kind %q is not supported (detect or sort)", path, pl.Kind)
	}
	for i, r := range pl.Rows {
		if r.ID != i {
			return nil, fmt.Errorf("batch: %s: row %d has id %d", path, i, r.ID)
		}
		if !steps[r.Step] {
			return nil, fmt.Errorf("batch: %s: row %d has step %q, not one of a %s plan", path, i, r.Step, pl.Kind)
		}
		for _, n := range r.Needs {
			if n < 0 || n >= len(pl.Rows) || pl.Rows[n].Phase >= r.Phase {
				return nil, fmt.Errorf("batch: %s: row %d needs row %d of a phase not below its own", path, i, n)
			}
		}
	}
	pl.path = path
	return &pl, nil
}

// printPlan writes the plan as a table: one line per row.
func printPlan(w io.Writer, pl *Plan) {
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

// shardRanges splits windows [0, n) into shards of at most per windows
// each, as evenly as possible.
func shardRanges(n, per int) [][2]int {
	k := max(1, int(math.Ceil(float64(n)/float64(max(per, 1)))))
	var out [][2]int
	for i := range k {
		out = append(out, [2]int{i * n / k, (i + 1) * n / k})
	}
	return out
}

// checkOutRoot refuses an output root inside an input folder's
// recordings or an input inside the output root.
func checkOutRoot(out string, inputs []string) error {
	for _, in := range inputs {
		a, b := pipeline.AbsPath(out), pipeline.AbsPath(in)
		if a == b || strings.HasPrefix(b, a+string(filepath.Separator)) {
			return fmt.Errorf("batch: the output root %s holds the input %s", out, in)
		}
	}
	return nil
}
