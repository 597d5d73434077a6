package batch

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"dspk/compute"
	"dspk/export"
	"dspk/phy"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
)

// sortRow is what every sort step of a plan row opens: the recording
// (closed by close), its probe and warnings, and the device (the
// worker's).
type sortRow struct {
	rec      recording.Recording
	pr       *probe.Probe
	warnings []string
	dev      *compute.Device
}

// openSortRow opens row r's recording and checks the probe against the
// plan's settings, and gets device. Errors name the row.
func (w *Worker) openSortRow(pl *Plan, r *Row, device string) (*sortRow, error) {
	o := pl.Options
	if o.Config.NBlocks < 0 {
		return nil, fmt.Errorf("batch: the plan's flags %q: -nblocks %d: must be 0 (no correction) or more", pl.Args(), o.Config.NBlocks)
	}
	in := o.Input
	in.Stream = r.Stream
	rec, pr, warnings, err := in.Open(r.Files...)
	if err != nil {
		return nil, err
	}
	if err := o.Config.CheckProbe(pr, slices.Contains(o.Given, "nearest_chans")); err != nil {
		rec.Close()
		return nil, fmt.Errorf("batch: row %d: %w", r.ID, err)
	}
	dev, err := w.device(device)
	if err != nil {
		rec.Close()
		return nil, fmt.Errorf("batch: row %d: %w", r.ID, err)
	}
	return &sortRow{rec: rec, pr: pr, warnings: warnings, dev: dev}, nil
}

// close closes the row's recording (the device stays the worker's).
func (s *sortRow) close() { s.rec.Close() }

// sortFunc computes a sort's result on the pipeline p.
type sortFunc func(ctx context.Context, p *pipeline.Pipeline, opt pipeline.SortOptions) (*pipeline.SortResult, error)

// writeSort writes row r's sort folder r.Out as dspk sort writes it
// (replacing a folder of an older key): the sort sort computes (nil: the
// whole sort, [pipeline.Pipeline.Sort]) and the row's batch.json before the folder is committed. Progress and stages
// go to log.
func (w *Worker) writeSort(ctx context.Context, pl *Plan, r *Row, s *sortRow, log io.Writer, sort sortFunc) error {
	for _, m := range s.warnings {
		fmt.Fprintf(log, "warning: %s\n", m)
	}
	opt := pl.Options.Sort
	if err := opt.CheckProbe(s.pr); err != nil {
		return err
	}
	fmt.Fprintf(log, "device: %s\n", s.dev)
	p, err := pipeline.New(s.dev, s.rec, s.pr, pl.Options.Config)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := checkWindows(r, s.rec.Name(), p.Schedule().Windows); err != nil {
		return err
	}
	replace, err := w.replaceable(r)
	if err != nil {
		return err
	}
	devName := s.dev.String()
	var res *pipeline.SortResult
	fw, err := phy.CreateSort(r.Out, phy.Options{Overwrite: replace, DatPath: recording.DatPath(s.rec), Context: ctx,
		Inputs: pl.Options.Input.RunFiles(r.Files, s.rec), Warnings: s.warnings,
		Extra: func(dir string) error {
			if err := testPause(ctx, r.ID); err != nil {
				return err
			}
			return writeMark(dir, pl, r, devName)
		}})
	if err != nil {
		return err
	}
	defer fw.Close()
	opt.Device = devName
	p.Progress = w.progress(log)
	opt.Stage = func(st string) {
		w.stage(st)
		fmt.Fprintf(log, "%s…\n", st)
	}
	if sort == nil {
		sort = func(ctx context.Context, p *pipeline.Pipeline, opt pipeline.SortOptions) (*pipeline.SortResult, error) {
			return p.Sort(ctx, opt)
		}
	}
	if res, err = sort(ctx, p, opt); err != nil {
		return err
	}
	for _, st := range res.Stages {
		fmt.Fprintf(log, "  %-22s %8.2f s  %d %s\n", st.Name, st.Seconds, st.Count, st.What)
	}
	w.stage("writing " + r.Out)
	if err := fw.Write(res); err != nil {
		return err
	}
	for _, m := range res.Summary.Warnings {
		fmt.Fprintf(log, "warning: %s\n", m)
	}
	return nil
}

// runSortRow runs the sort row r on device: the folder of dspk sort with
// the plan's settings, which holds the row's batch.json and is committed
// only when whole.
func (w *Worker) runSortRow(ctx context.Context, pl *Plan, r *Row, device string, log io.Writer) (bool, error) {
	s, err := w.openSortRow(pl, r, device)
	if err != nil {
		return false, err
	}
	defer s.close()
	fmt.Fprintf(log, "row %d: %s %s %s, %d windows, on %s -> %s\n", r.ID, r.Step, r.Recording, r.Probe, r.Total, s.dev, r.Out)
	err = w.writeSort(ctx, pl, r, s, log, nil)
	return err == nil, err
}

// runSortStep runs row r, the global step or a shard of a sort split in
// time, on device. They write their results into scratch folders
// (committed whole, with the row's batch.json; [phy.SaveSortGlobal],
// [phy.SaveSortShard]).
func (w *Worker) runSortStep(ctx context.Context, pl *Plan, r *Row, device string, log io.Writer) (bool, error) {
	s, err := w.openSortRow(pl, r, device)
	if err != nil {
		return false, err
	}
	defer s.close()
	cfg := pl.Options.Config
	p, err := pipeline.New(s.dev, s.rec, s.pr, cfg)
	if err != nil {
		return false, err
	}
	defer p.Close()
	if err := checkWindows(r, s.rec.Name(), p.Schedule().Windows); err != nil {
		return false, err
	}
	p.Progress = w.progress(log)
	opt := pl.Options.Sort
	opt.Device = s.dev.String()
	opt.Stage = func(st string) { fmt.Fprintf(log, "row %d: %s…\n", r.ID, st) }
	// A folder of an older key (other inputs or settings) is replaced.
	replace, err := w.replaceable(r)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(log, "row %d: %s %s %s windows %d-%d of %d on %s -> %s\n", r.ID, r.Step, r.Recording, r.Probe,
		r.Windows[0], r.Windows[1], r.Total, s.dev, r.Out)
	od, err := export.CreateOutputDir(r.Out, export.OutputOptions{Kind: "batch-" + r.Step, Overwrite: replace,
		Inputs: pl.Options.Input.RunFiles(r.Files, s.rec), Context: ctx})
	if err != nil {
		return false, err
	}
	defer od.Abort()
	if r.Step == StepSortGlobal {
		g, err := p.SortGlobal(ctx, opt)
		if err != nil {
			return false, err
		}
		if err := phy.SaveSortGlobal(od.Dir(), g, r.Total); err != nil {
			return false, err
		}
	} else if err := matchShard(ctx, p, cfg, r, opt, od.Dir()); err != nil {
		return false, err
	}
	if err := testPause(ctx, r.ID); err != nil {
		return false, err
	}
	if err := writeMark(od.Dir(), pl, r, s.dev.String()); err != nil {
		return false, err
	}
	return true, od.Commit()
}

// matchShard matches the windows of the sort shard r with the global
// step's results on p (of the plan's configuration cfg) and saves its
// spikes into dir.
func matchShard(ctx context.Context, p *pipeline.Pipeline, cfg pipeline.Config, r *Row, opt pipeline.SortOptions, dir string) error {
	g, err := phy.LoadSortGlobal(r.Global, r.Total, cfg.NT)
	if err != nil {
		return err
	}
	t0 := time.Now()
	ms, err := p.MatchWindows(ctx, g, opt, r.Windows[0], r.Windows[1])
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	return phy.SaveSortShard(dir, ms, r.Windows[0], r.Windows[1], r.Total, cfg.NearestChans, g.Learned.P, secs)
}

// runSortMerge runs the merge row r: the shards' spikes in window order
// are finished (final clustering, curation) with the global step's
// results on device, and the sort folder is written as dspk sort writes
// it, with the row's batch.json.
func (w *Worker) runSortMerge(ctx context.Context, pl *Plan, r *Row, device string, log io.Writer) (bool, error) {
	s, err := w.openSortRow(pl, r, device)
	if err != nil {
		return false, err
	}
	defer s.close()
	fmt.Fprintf(log, "row %d: %s %s %s, %d shards, on %s -> %s\n", r.ID, r.Step, r.Recording, r.Probe, len(r.Parts), s.dev, r.Out)
	err = w.writeSort(ctx, pl, r, s, log, func(ctx context.Context, p *pipeline.Pipeline, opt pipeline.SortOptions) (*pipeline.SortResult, error) {
		g, err := phy.LoadSortGlobal(r.Global, r.Total, p.Config().NT)
		if err != nil {
			return nil, err
		}
		ms, secs, err := phy.LoadSortShards(r.Parts, r.Total, p.Config().NearestChans, g.Learned.P)
		if err != nil {
			return nil, err
		}
		return p.SortFinish(ctx, g, opt, ms, secs)
	})
	return err == nil, err
}
