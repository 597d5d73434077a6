package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"dspk/compute"
	"dspk/detect"
	"dspk/export"
	"dspk/linalg"
	"dspk/phy"
	"dspk/pipeline"
)

// batchFile is the file every folder a batch row writes holds (listed in
// the folder's manifest): the row's key, which says with which inputs and
// settings the folder was made.
const batchFile = "batch.json"

// batchMark is the content of batchFile.
type batchMark struct {
	Format string `json:"format"`
	Key    string `json:"key"`
	Step   string `json:"step"`
	Row    int    `json:"row"`
	Plan   string `json:"plan"`
	Device string `json:"device"`
}

// rowKey is the hash of everything a row's output depends on: the kind,
// the flags, the step, the data files (path, size, modification time),
// the stream, the window range and the folders it reads. Two runs of
// rows of equal keys write equal result files on one kind of device.
func rowKey(pl *Plan, r *Row) (string, error) {
	type stat struct {
		Path  string
		Size  int64
		MTime int64
	}
	var files []stat
	for _, f := range r.Files {
		st, err := os.Stat(f)
		if err != nil {
			return "", fmt.Errorf("batch: row %d: %w", r.ID, err)
		}
		files = append(files, stat{f, st.Size(), st.ModTime().UnixNano()})
	}
	b, _ := json.Marshal(map[string]any{
		"format": planFormat, "kind": pl.Kind, "args": pl.Args, "step": r.Step, "files": files, "stream": r.Stream,
		"windows": r.Windows, "total": r.Total, "shard": r.Shard, "shards": r.Shards, "global": r.Global, "parts": r.Parts,
	})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// rowDone reports whether the row's output folder exists, was committed
// (it has its manifest) and was made with the row's key.
func rowDone(pl *Plan, r *Row) bool {
	if _, err := os.Stat(filepath.Join(r.Out, export.ManifestName)); err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(r.Out, batchFile))
	if err != nil {
		return false
	}
	var m batchMark
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	key, err := rowKey(pl, r)
	return err == nil && m.Key == key
}

// writeMark writes batchFile into dir for row r.
func writeMark(dir string, pl *Plan, r *Row, device string) error {
	key, err := rowKey(pl, r)
	if err != nil {
		return err
	}
	return export.WriteJSON(filepath.Join(dir, batchFile), batchMark{Format: planFormat, Key: key, Step: r.Step, Row: r.ID,
		Plan: pipeline.AbsPath(pl.path), Device: device})
}

// rowFlags parses the plan's flags (and the row's stream) as detect
// would.
func rowFlags(pl *Plan, r *Row) (*inputFlags, *pipelineFlags, *detectFlags, error) {
	var in inputFlags
	var pf pipelineFlags
	var df detectFlags
	err := parseRowArgs(pl, r, func(fs *flag.FlagSet) {
		in.register(fs)
		pf.register(fs)
		df.register(fs)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return &in, &pf, &df, nil
}

// parseRowArgs parses the plan's flags and the row's stream on a flag
// set that register fills.
func parseRowArgs(pl *Plan, r *Row, register func(fs *flag.FlagSet)) error {
	fs := flag.NewFlagSet("dspk batch task", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	register(fs)
	args := append([]string(nil), pl.Args...)
	if r.Stream != "" {
		args = append(args, "-stream", r.Stream)
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("batch: the plan's flags %q: %w", pl.Args, err)
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("batch: the plan's flags %q hold arguments %q", pl.Args, fs.Args())
	}
	return nil
}

// devices keeps the compute devices a process has opened, so that a
// worker running rows back to back initialises each once.
type devices map[string]*compute.Device

// get opens spec (a -device value) or returns it opened before.
func (d devices) get(spec string) (*compute.Device, error) {
	if dev, ok := d[spec]; ok {
		return dev, nil
	}
	dev, _, err := compute.Open(spec)
	if err != nil {
		return nil, err
	}
	d[spec] = dev
	return dev, nil
}

// Close closes every device.
func (d devices) Close() {
	for k, dev := range d {
		dev.Close()
		delete(d, k)
	}
}

// runRow runs row r of the plan on device (a -device value, opened
// through devs) unless it is done already; it reports whether it ran. A
// row that needs others fails unless they are done.
func runRow(ctx context.Context, pl *Plan, r *Row, device string, devs devices, log io.Writer) (bool, error) {
	if rowDone(pl, r) {
		return false, nil
	}
	for _, n := range r.Needs {
		if !rowDone(pl, &pl.Rows[n]) {
			return false, fmt.Errorf("batch: row %d (%s %s %s) needs row %d (%s), which is not done", r.ID, r.Step, r.Recording, r.Probe, n, pl.Rows[n].Step)
		}
	}
	switch r.Step {
	case stepSort:
		return runSortRow(ctx, pl, r, device, devs, log)
	case stepSortGlobal, stepSortShard, stepSortMerge:
		return runSortStep(ctx, pl, r, device, devs, log)
	}
	in, pf, df, err := rowFlags(pl, r)
	if err != nil {
		return false, err
	}
	df.device = device
	rec, pr, err := in.open(r.Files...)
	if err != nil {
		return false, err
	}
	defer rec.Close()
	// A folder of an older key (other inputs or settings) is replaced.
	_, statErr := os.Stat(r.Out)
	overwrite := statErr == nil
	inputs := in.runInputs(r.Files, rec, df.templates)
	if r.Step == stepMerge {
		device = "cpu" // the merge only reads and writes files
	}
	dev, err := devs.get(device)
	if err != nil {
		return false, fmt.Errorf("batch: row %d: %w", r.ID, err)
	}
	cfg := pf.config()
	cfg.ThUniversal = df.threshold
	p, err := pipeline.New(dev, rec, pr, cfg)
	if err != nil {
		return false, err
	}
	defer p.Close()
	if got := p.Schedule().Windows; got != r.Total {
		return false, fmt.Errorf("batch: row %d: %s has %d windows now, the plan says %d; plan again", r.ID, rec.Name(), got, r.Total)
	}
	devName := dev.String()
	mark := func(dir string) error {
		if err := testPause(ctx, r.ID); err != nil {
			return err
		}
		return writeMark(dir, pl, r, devName)
	}
	withPlot := func(dir string) error {
		if err := plotFolder(ctx, dir, filepath.Join(dir, rasterFile), "", false); err != nil {
			return err
		}
		return mark(dir)
	}
	fmt.Fprintf(log, "row %d: %s %s %s windows %d-%d of %d on %s -> %s\n", r.ID, r.Step, r.Recording, r.Probe,
		r.Windows[0], r.Windows[1], r.Total, dev, r.Out)
	opt := phy.Options{Overwrite: overwrite, DatPath: datPath(rec), Inputs: inputs, Warnings: in.warnings, Context: ctx}
	switch r.Step {
	case stepDetect:
		ro := pipeline.RunOptions{Device: useDevice(dev, io.Discard)}
		if df.templates != "" {
			if ro.Universal, err = detect.LoadTemplates(df.templates, cfg.NT); err != nil {
				return false, err
			}
			ro.UniversalFile = df.templates
		}
		opt.Extra = withPlot
		w, err := phy.Create(r.Out, opt)
		if err != nil {
			return false, err
		}
		defer w.Close()
		_, err = p.Run(ctx, w, ro)
		return err == nil, err
	case stepGlobal:
		ro := pipeline.RunOptions{}
		if df.templates != "" {
			if ro.Universal, err = detect.LoadTemplates(df.templates, cfg.NT); err != nil {
				return false, err
			}
			ro.UniversalFile = df.templates
		}
		od, err := export.CreateOutputDir(r.Out, export.OutputOptions{Kind: "batch-global", Overwrite: overwrite, Inputs: inputs, Context: ctx})
		if err != nil {
			return false, err
		}
		defer od.Abort()
		g, err := p.Global(ctx, ro)
		if err != nil {
			return false, err
		}
		g.Warnings = append(append([]string(nil), in.warnings...), g.Warnings...)
		if err := saveGlobal(od.Dir(), g); err != nil {
			return false, err
		}
		if err := mark(od.Dir()); err != nil {
			return false, err
		}
		return true, od.Commit()
	case stepShard, stepMerge:
		g, err := loadGlobal(r.Global, cfg.NT)
		if err != nil {
			return false, err
		}
		opt.Warnings = nil // the global step's are in g
		if r.Step == stepShard {
			opt.Extra = mark
			w, err := phy.Create(r.Out, opt)
			if err != nil {
				return false, err
			}
			defer w.Close()
			_, err = p.RunWindows(ctx, w, g, r.Windows[0], r.Windows[1], useDevice(dev, io.Discard))
			return err == nil, err
		}
		opt.Extra = withPlot
		return true, mergeShards(ctx, p, g, r, opt)
	}
	return false, fmt.Errorf("batch: row %d: unknown step %q", r.ID, r.Step)
}

// saveGlobal writes the global results into dir: the whitening operator
// (whitening_index.npy, int32 C×K; whitening_value.npy, float32 C×K),
// the templates (wTEMP.npy, wPCA.npy) and global.json (their source, the
// clip count and the warnings).
func saveGlobal(dir string, g *pipeline.Global) error {
	w, tm := g.Whitening, g.Universal
	for _, f := range []struct {
		name  string
		shape []int
		data  any
	}{
		{"whitening_index.npy", []int{w.C, w.K}, w.Index},
		{"whitening_value.npy", []int{w.C, w.K}, w.Value},
		{"wTEMP.npy", []int{tm.K, tm.NT}, tm.WTEMP},
		{"wPCA.npy", []int{tm.P, tm.NT}, tm.WPCA},
	} {
		if err := export.WriteNPYFile(filepath.Join(dir, f.name), f.shape, f.data); err != nil {
			return err
		}
	}
	return export.WriteJSON(filepath.Join(dir, "global.json"), globalInfo{Source: g.UniversalSource, Clips: g.Clips, Warnings: g.Warnings})
}

// globalInfo is global.json.
type globalInfo struct {
	Source   string   `json:"templates"`
	Clips    int      `json:"template_clips"`
	Warnings []string `json:"warnings"`
}

// loadGlobal reads what saveGlobal wrote.
func loadGlobal(dir string, nt int) (*pipeline.Global, error) {
	tm, err := detect.LoadTemplates(dir, nt)
	if err != nil {
		return nil, err
	}
	idx, ishape, err := readWhole(filepath.Join(dir, "whitening_index.npy"), "<i4")
	if err != nil {
		return nil, err
	}
	val, vshape, err := readWhole(filepath.Join(dir, "whitening_value.npy"), "<f4")
	if err != nil {
		return nil, err
	}
	if len(ishape) != 2 || len(vshape) != 2 || ishape[0] != vshape[0] || ishape[1] != vshape[1] {
		return nil, fmt.Errorf("batch: %s: whitening arrays of shapes %v and %v", dir, ishape, vshape)
	}
	w := &linalg.Whitening{C: ishape[0], K: ishape[1], Index: idx.([]int32), Value: val.([]float32)}
	for i, v := range w.Index {
		if v < 0 || int(v) >= w.C {
			return nil, fmt.Errorf("batch: %s: whitening_index.npy entry %d is %d, outside [0, %d)", dir, i, v, w.C)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "global.json"))
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	var gi globalInfo
	if err := json.Unmarshal(b, &gi); err != nil {
		return nil, fmt.Errorf("batch: %s: %w", filepath.Join(dir, "global.json"), err)
	}
	return &pipeline.Global{Whitening: w, Universal: tm, UniversalSource: gi.Source, Clips: gi.Clips, Warnings: gi.Warnings}, nil
}

// testPause waits, when DSPK_BATCH_TEST_PAUSE is "ROW:SECONDS" and row
// is ROW, that many seconds with every result file written in the
// temporary folder and before it is committed: the SLURM test kills a
// task there to show that a killed task leaves no folder behind.
func testPause(ctx context.Context, row int) error {
	v := os.Getenv("DSPK_BATCH_TEST_PAUSE")
	id, secs, ok := strings.Cut(v, ":")
	if !ok || id != strconv.Itoa(row) {
		return nil
	}
	d, err := strconv.ParseFloat(secs, 64)
	if err != nil {
		return nil
	}
	select {
	case <-time.After(time.Duration(d * float64(time.Second))):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
