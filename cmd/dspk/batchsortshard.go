package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"dspk/export"
	"dspk/pipeline"
)

// The steps of a sort split in time: the global step (everything up to
// the learned templates), the shards (learned-template matching over a
// range of windows) and the merge (the final clustering, curation and
// the sort folder).
const (
	stepSortGlobal = "sort-global"
	stepSortShard  = "sort-shard"
	stepSortMerge  = "sort-merge"
)

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
// and the rest what [estimateSort] takes.
func planSortShards(pl *Plan, row Row, ranges [][2]int, scratch string, fs float64, windowSeconds func(wr [2]int) float64,
	batch, nt int, gpu bool) {
	appendSplit(pl, row, ranges, scratch, "sort-", [3]string{stepSortGlobal, stepSortShard, stepSortMerge}, windowSeconds,
		func(r *Row) {
			secs, share := row.Seconds, sortGlobalShare
			switch r.Step {
			case stepSortShard:
				secs, share = r.Seconds, sortShardShare
			case stepSortMerge:
				share = sortMergeShare
			}
			t, mem := estimateSort(secs, row.Channels, fs, batch, nt, gpu)
			r.EstSeconds, r.EstMemBytes = 60+(t-60)*share, mem
		})
}

// runSortStep runs row r, a step of a sort split in time, on device
// (opened through devs). The global and shard steps write their results
// into scratch folders (committed whole, with the row's batch.json); the
// merge writes the sort folder with dspk sort's writer.
func runSortStep(ctx context.Context, pl *Plan, r *Row, device string, devs devices, log io.Writer) (bool, error) {
	if r.Step == stepSortMerge {
		return runSortMerge(ctx, pl, r, device, devs, log)
	}
	s, err := openSortRow(pl, r, device, devs)
	if err != nil {
		return false, err
	}
	defer s.close()
	in, sf, rec, dev := s.in, s.sf, s.rec, s.dev
	cfg := sortConfig(s.pf, sf)
	p, err := pipeline.New(dev, rec, s.pr, cfg)
	if err != nil {
		return false, err
	}
	defer p.Close()
	if err := s.checkWindows(r, p.Schedule().Windows); err != nil {
		return false, err
	}
	p.Progress = trackProgress(progressLines(log, progressInterval, time.Now))
	opt := sortOptions(sf)
	opt.Device = dev.String()
	opt.Stage = func(s string) { fmt.Fprintf(log, "row %d: %s…\n", r.ID, s) }
	// A folder of an older key (other inputs or settings) is replaced.
	_, statErr := os.Stat(r.Out)
	fmt.Fprintf(log, "row %d: %s %s %s windows %d-%d of %d on %s -> %s\n", r.ID, r.Step, r.Recording, r.Probe,
		r.Windows[0], r.Windows[1], r.Total, dev, r.Out)
	od, err := export.CreateOutputDir(r.Out, export.OutputOptions{Kind: "batch-" + r.Step, Overwrite: statErr == nil,
		Inputs: in.runInputs(r.Files, rec), Context: ctx})
	if err != nil {
		return false, err
	}
	defer od.Abort()
	switch r.Step {
	case stepSortGlobal:
		g, err := p.SortGlobal(ctx, opt)
		if err != nil {
			return false, err
		}
		if err := saveSortGlobal(od.Dir(), g, r.Total); err != nil {
			return false, err
		}
	case stepSortShard:
		g, err := loadSortGlobal(r.Global, r.Total, cfg.NT)
		if err != nil {
			return false, err
		}
		t0 := time.Now()
		ms, err := p.MatchWindows(ctx, g, opt, r.Windows[0], r.Windows[1])
		if err != nil {
			return false, err
		}
		secs := time.Since(t0).Seconds()
		if err := saveSortShard(od.Dir(), ms, r.Windows[0], r.Windows[1], r.Total, cfg.NearestChans, g.Learned.P, secs); err != nil {
			return false, err
		}
	default:
		return false, fmt.Errorf("batch: row %d: unknown step %q", r.ID, r.Step)
	}
	if err := testPause(ctx, r.ID); err != nil {
		return false, err
	}
	if err := writeMark(od.Dir(), pl, r, dev.String()); err != nil {
		return false, err
	}
	return true, od.Commit()
}

// runSortMerge runs the merge row r: the shards' spikes in window order
// are finished (final clustering, curation) with the global step's
// results on device, and the sort folder is written as dspk sort writes
// it, with the row's batch.json.
func runSortMerge(ctx context.Context, pl *Plan, r *Row, device string, devs devices, log io.Writer) (bool, error) {
	s, err := openSortRow(pl, r, device, devs)
	if err != nil {
		return false, err
	}
	defer s.close()
	fmt.Fprintf(log, "row %d: %s %s %s, %d shards, on %s -> %s\n", r.ID, r.Step, r.Recording, r.Probe, len(r.Parts), s.dev, r.Out)
	err = s.writeSort(ctx, pl, r, device, log, func(ctx context.Context, p *pipeline.Pipeline, opt pipeline.SortOptions) (*pipeline.SortResult, error) {
		g, err := loadSortGlobal(r.Global, r.Total, p.Config().NT)
		if err != nil {
			return nil, err
		}
		ms, secs, err := loadSortShards(r.Parts, r.Total, p.Config().NearestChans, g.Learned.P)
		if err != nil {
			return nil, err
		}
		return p.SortFinish(ctx, g, opt, ms, secs)
	})
	return err == nil, err
}
