package pipeline

import (
	"context"
	"fmt"
	"time"

	"dspk/detect"
	"dspk/linalg"
	"dspk/recording"
)

// Global is what the whole recording decides for detection: the
// whitening operator (from windows 0, NSkip, 2·NSkip, …) and the
// universal templates (learned from the same windows, or given). A run
// over any range of windows that uses them detects, window for window,
// the spikes of one run over the whole recording.
type Global struct {
	// Whitening is the whitening operator of the whole recording.
	Whitening *linalg.Whitening
	// Universal are the universal templates and feature basis, and
	// UniversalSource says where they came from.
	Universal       *detect.Templates
	UniversalSource string
	// Clips is the number of clips the templates were learned from (0
	// when they were given).
	Clips int
	// Warnings are the pipeline's ([Pipeline.Warnings]) and those the
	// global passes found.
	Warnings []string
}

// Global runs the passes that see the whole recording — the whitening
// statistic and, unless opt.Universal is set, template learning — and
// returns their results, as [Pipeline.Run] computes them before
// detection.
func (p *Pipeline) Global(ctx context.Context, opt RunOptions) (*Global, error) {
	w, _, warnings, err := p.Whitening(ctx)
	if err != nil {
		return nil, err
	}
	g := &Global{Whitening: w, Universal: opt.Universal, UniversalSource: opt.UniversalFile}
	if g.Universal == nil {
		g.Universal, g.Clips, err = p.LearnTemplates(ctx, w)
		if err != nil {
			return nil, err
		}
		g.UniversalSource = "learned from the data"
	}
	if g.Universal.NT != p.cfg.NT {
		return nil, fmt.Errorf("%s: templates of %d samples, the run uses nt = %d", g.UniversalSource, g.Universal.NT, p.cfg.NT)
	}
	g.Warnings = append(p.Warnings(), warnings...)
	return g, nil
}

// Info returns the [RunInfo] of a run of this pipeline with the global
// results g on the device named device.
func (p *Pipeline) Info(g *Global, device string) (*RunInfo, error) {
	if g.Whitening == nil || g.Universal == nil {
		return nil, fmt.Errorf("%s: global results without whitening or templates", p.rec.Name())
	}
	if g.Whitening.C != p.probe.Len() {
		return nil, fmt.Errorf("%s: whitening of %d channels for a probe of %d sites", p.rec.Name(), g.Whitening.C, p.probe.Len())
	}
	if g.Universal.NT != p.cfg.NT {
		return nil, fmt.Errorf("%s: templates of %d samples, the run uses nt = %d", g.UniversalSource, g.Universal.NT, p.cfg.NT)
	}
	grid, err := p.Grid()
	if err != nil {
		return nil, err
	}
	return &RunInfo{
		Recording: p.rec, Probe: p.probe, Config: p.cfg, Detect: p.DetectParams(),
		Schedule: p.sched, StatWindows: p.StatWindows(), Grid: grid,
		Universal: g.Universal, UniversalSource: g.UniversalSource, Clips: g.Clips,
		Whitening: g.Whitening, Device: device,
	}, nil
}

// RunWindows runs detection over windows [first, end) of the schedule
// with the global results g (nothing is re-estimated) and hands the
// results to sink as [Pipeline.Run] does. The summary counts only those
// windows and their owned samples.
func (p *Pipeline) RunWindows(ctx context.Context, sink Sink, g *Global, first, end int, device string) (*Summary, error) {
	if first < 0 || end > p.sched.Windows || first >= end {
		return nil, fmt.Errorf("%s: window range [%d, %d) outside the schedule's %d windows", p.rec.Name(), first, end, p.sched.Windows)
	}
	start := time.Now()
	info, err := p.Info(g, device)
	if err != nil {
		return nil, err
	}
	if err := sink.Begin(info); err != nil {
		return nil, err
	}
	windows := make([]int, 0, end-first)
	for i := first; i < end; i++ {
		windows = append(windows, i)
	}
	sum := &Summary{Windows: end - first, Clips: g.Clips,
		Samples: p.sched.Window(end-1).OwnEnd - p.sched.Window(first).OwnStart}
	stats, err := p.DetectWindows(ctx, windows, g.Whitening, g.Universal, func(win recording.Window, s *detect.Spikes) error {
		sum.Spikes += s.Len()
		return sink.Window(win, s)
	})
	if err != nil {
		return nil, err
	}
	sum.Centres = info.Grid.F()
	sum.Work = stats
	p.timeSummary(sum, start)
	sum.Warnings = withWarnings(g.Warnings, p.Warnings())
	if err := sink.End(sum); err != nil {
		return nil, err
	}
	return sum, nil
}
