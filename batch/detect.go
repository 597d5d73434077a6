package batch

import (
	"context"
	"fmt"
	"io"

	"dspk/compute"
	"dspk/detect"
	"dspk/export"
	"dspk/phy"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
)

// detectRow is what every step of a detect plan's row opens: the
// recording (closed by close), the device and the pipeline.
type detectRow struct {
	pl       *Plan
	r        *Row
	rec      recording.Recording
	pr       *probe.Probe
	warnings []string
	dev      *compute.Device
	p        *pipeline.Pipeline
}

// openDetectRow opens row r's recording, gets device (the CPU for a
// merge, which only reads and writes files) and builds its pipeline,
// whose schedule must still have the plan's window count.
func (w *Worker) openDetectRow(pl *Plan, r *Row, device string) (*detectRow, error) {
	in := pl.Options.Input
	in.Stream = r.Stream
	rec, pr, warnings, err := in.Open(r.Files...)
	if err != nil {
		return nil, err
	}
	d := &detectRow{pl: pl, r: r, rec: rec, pr: pr, warnings: warnings}
	if r.Step == StepMerge {
		device = "cpu"
	}
	if d.dev, err = w.device(device); err != nil {
		rec.Close()
		return nil, fmt.Errorf("batch: row %d: %w", r.ID, err)
	}
	if d.p, err = pipeline.New(d.dev, rec, pr, pl.Options.Config); err != nil {
		rec.Close()
		return nil, err
	}
	if err := checkWindows(r, rec.Name(), d.p.Schedule().Windows); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *detectRow) close() {
	d.p.Close()
	d.rec.Close()
}

// mark returns the hook that writes the row's batch.json into a folder
// before it is committed.
func (d *detectRow) mark(ctx context.Context) func(dir string) error {
	devName := d.dev.String()
	return func(dir string) error {
		if err := testPause(ctx, d.r.ID); err != nil {
			return err
		}
		return writeMark(dir, d.pl, d.r, devName)
	}
}

// runOptions are the run's options: the plan's templates, if any.
func (d *detectRow) runOptions() (pipeline.RunOptions, error) {
	var ro pipeline.RunOptions
	if t := d.pl.Options.Templates; t != "" {
		var err error
		if ro.Universal, err = detect.LoadTemplates(t, d.pl.Options.Config.NT); err != nil {
			return ro, err
		}
		ro.UniversalFile = t
	}
	return ro, nil
}

// runDetectRow runs r, a row of a detect plan: the detection of a whole
// recording (a detect folder), or a step of one split in time: the
// global step (whitening and templates), a shard (a detect folder of its
// windows) or the merge of the shards into the detect folder.
func (w *Worker) runDetectRow(ctx context.Context, pl *Plan, r *Row, device string, log io.Writer) (bool, error) {
	d, err := w.openDetectRow(pl, r, device)
	if err != nil {
		return false, err
	}
	defer d.close()
	// A folder of an older key (other inputs or settings) is replaced.
	replace, err := w.replaceable(r)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(log, "row %d: %s %s %s windows %d-%d of %d on %s -> %s\n", r.ID, r.Step, r.Recording, r.Probe,
		r.Windows[0], r.Windows[1], r.Total, d.dev, r.Out)
	opt := phy.Options{Overwrite: replace, DatPath: recording.DatPath(d.rec), Warnings: d.warnings, Context: ctx,
		Inputs: pl.Options.Input.RunFiles(r.Files, d.rec, pl.Options.Templates)}
	mark := d.mark(ctx)
	switch r.Step {
	case StepDetect:
		ro, err := d.runOptions()
		if err != nil {
			return false, err
		}
		ro.Device = pipeline.DeviceUse(d.dev)
		opt.Extra, opt.Raster = mark, true
		return runInto(r.Out, opt, func(fw *phy.Writer) error { _, err := d.p.Run(ctx, fw, ro); return err })
	case StepGlobal:
		return d.runGlobal(ctx, opt)
	}
	g, err := phy.LoadGlobal(r.Global, pl.Options.Config.NT)
	if err != nil {
		return false, err
	}
	opt.Warnings = nil // the global step's are in g
	if r.Step == StepShard {
		opt.Extra = mark
		return runInto(r.Out, opt, func(fw *phy.Writer) error {
			_, err := d.p.RunWindows(ctx, fw, g, r.Windows[0], r.Windows[1], pipeline.DeviceUse(d.dev))
			return err
		})
	}
	opt.Extra, opt.Raster = mark, true
	return true, mergeShards(ctx, d.p, g, r, opt)
}

// runInto creates the detect folder out and runs run into it; it reports
// whether the folder was written.
func runInto(out string, opt phy.Options, run func(fw *phy.Writer) error) (bool, error) {
	fw, err := phy.Create(out, opt)
	if err != nil {
		return false, err
	}
	defer fw.Close()
	err = run(fw)
	return err == nil, err
}

// runGlobal runs the global step of a detection split in time: the
// whitening and the templates, saved into the row's scratch folder
// ([phy.SaveGlobal]) with the recording's warnings.
func (d *detectRow) runGlobal(ctx context.Context, opt phy.Options) (bool, error) {
	ro, err := d.runOptions()
	if err != nil {
		return false, err
	}
	od, err := export.CreateOutputDir(d.r.Out, export.OutputOptions{Kind: "batch-global", Overwrite: opt.Overwrite,
		Inputs: opt.Inputs, Context: ctx})
	if err != nil {
		return false, err
	}
	defer od.Abort()
	g, err := d.p.Global(ctx, ro)
	if err != nil {
		return false, err
	}
	g.Warnings = append(append([]string(nil), d.warnings...), g.Warnings...)
	if err := phy.SaveGlobal(od.Dir(), g); err != nil {
		return false, err
	}
	if err := d.mark(ctx)(od.Dir()); err != nil {
		return false, err
	}
	return true, od.Commit()
}
