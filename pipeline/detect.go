package pipeline

import (
	"context"
	"dspk/compute"
	"errors"
	"fmt"

	"dspk/detect"
	"dspk/kilosort"
	"dspk/linalg"
	"dspk/recording"
)

// errLearnerFull stops the template pass once the clip budget is reached.
var errLearnerFull = errors.New("learner full")

// DetectParams returns the detection parameters of the configuration.
func (p *Pipeline) DetectParams() detect.Params { return detectParams(p.cfg) }

// detectParams is [Pipeline.DetectParams] of a pipeline with cfg.
func detectParams(cfg Config) detect.Params {
	prm := detect.DefaultParams()
	prm.Settings = cfg.Settings
	// nt0min follows nt as Kilosort4's None does: int(20·nt/61).
	prm.NT0Min = kilosort.DefaultNT0Min(cfg.NT)
	prm.Seed = cfg.Seed
	prm.Groups = cfg.Groups
	return prm
}

// LearnTemplates runs pass 2: isolated single-channel peaks of the
// whitened statistic windows give clips, from which Kilosort4's universal
// templates (wTEMP, k-means) and feature basis (wPCA, SVD) are learned.
// It also returns the number of clips used.
func (p *Pipeline) LearnTemplates(ctx context.Context, w *linalg.Whitening) (*detect.Templates, int, error) {
	return p.learnTemplates(ctx, w, nil, nil)
}

// learnTemplates is LearnTemplates on windows corrected by corr (if not
// nil); afterPass, if not nil, is called once the pass over the windows
// is over, before the host learns the templates from the clips.
func (p *Pipeline) learnTemplates(ctx context.Context, w *linalg.Whitening, corr *correction, afterPass func()) (*detect.Templates, int, error) {
	prm := p.DetectParams()
	l := detect.NewLearner(p.probe.Len(), p.sched.Len(), prm)
	defer l.Close()
	// On a GPU the clips are found on the device; only they come back.
	ps := windowPass{name: "templates", windows: p.StatWindows(), w: w, corr: corr}
	err := p.eachWindow(ctx, ps, func(rw recording.Window, win *compute.Window) error {
		if _, err := l.AddWindow(win); err != nil {
			return fmt.Errorf("%s: window %d: %w", p.rec.Name(), rw.Index, err)
		}
		if l.Full() {
			return errLearnerFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errLearnerFull) {
		return nil, 0, err
	}
	if afterPass != nil {
		afterPass()
	}
	tm, err := l.Templates()
	if err != nil {
		return nil, l.Len(), fmt.Errorf("%s: learning templates from %d windows: %w", p.rec.Name(), l.Windows(), err)
	}
	return tm, l.Len(), nil
}

// Detect runs pass 3: every window is preprocessed, whitened by w
// (uncorrected) and matched against the universal templates tm; sink receives each
// window's spikes in file order, on a goroutine of its own while the next
// windows are detected (the Spikes value is reused: copy what must
// outlive the call). It returns the summed work counts and the first
// error, the sink's included.
func (p *Pipeline) Detect(ctx context.Context, w *linalg.Whitening, tm *detect.Templates,
	sink func(win recording.Window, s *detect.Spikes) error) (detect.Stats, error) {
	return p.detectPass(ctx, windowPass{name: "detection", w: w}, tm, sink)
}

// DetectWindows is [Pipeline.Detect] over the given windows of the
// schedule only (all of them if windows is nil), in the order given. A
// window's spikes are those whose peak column it owns, so detecting the
// windows of a partition of the schedule separately gives, window for
// window, the spikes of one run over all of them.
func (p *Pipeline) DetectWindows(ctx context.Context, windows []int, w *linalg.Whitening, tm *detect.Templates,
	sink func(win recording.Window, s *detect.Spikes) error) (detect.Stats, error) {
	return p.detectPass(ctx, windowPass{name: "detection", windows: windows, w: w}, tm, sink)
}

// detectPass is [Pipeline.DetectWindows] over the pass ps (the motion
// pass is a detection pass too, and a run with motion correction detects
// on corrected windows).
func (p *Pipeline) detectPass(ctx context.Context, ps windowPass, tm *detect.Templates,
	sink func(win recording.Window, s *detect.Spikes) error) (detect.Stats, error) {
	prm := p.DetectParams()
	prm.ThUniversal *= ps.corr.thresholdScale()
	g, err := p.Grid()
	if err != nil {
		return detect.Stats{}, err
	}
	d, err := p.detector(g, tm, prm)
	if err != nil {
		return detect.Stats{}, err
	}
	defer d.Close()
	var total detect.Stats
	// The sink runs on a goroutine of its own, up to two windows behind
	// detection, so that writing the spikes overlaps the next window's
	// work; it gets the windows in order, each in one of three buffers
	// that circulate between the two.
	const nbuf = 3
	jobs := make(chan sinkJob, nbuf-1)
	free := make(chan *detect.Spikes, nbuf)
	for range nbuf {
		free <- new(detect.Spikes)
	}
	failed := make(chan struct{})
	finished := make(chan struct{})
	var sinkErr error
	go func() {
		defer close(finished)
		for j := range jobs {
			if sinkErr == nil {
				if sinkErr = sink(j.win, j.s); sinkErr != nil {
					close(failed)
				}
			}
			free <- j.s
		}
	}()
	// The window stays on its device: on a GPU only the spikes come back.
	// The next windows are loaded, preprocessed and started while the
	// device detects (Start queues each detection behind the last), and
	// the spikes of the oldest are collected (Finish) behind that.
	start := func(rw recording.Window, win *compute.Window) error {
		if err := d.Start(win, rw.OwnStart, rw.Owned()); err != nil {
			return fmt.Errorf("%s: window %d: %w", p.rec.Name(), rw.Index, err)
		}
		return nil
	}
	finish := func(rw recording.Window) error {
		var buf *detect.Spikes
		select {
		case <-failed:
			return errSinkFailed
		case buf = <-free:
		}
		buf.Reset()
		st, err := d.Finish(buf)
		if err != nil {
			return fmt.Errorf("%s: window %d: %w", p.rec.Name(), rw.Index, err)
		}
		total.Add(st)
		jobs <- sinkJob{rw, buf}
		return nil
	}
	err = p.eachWindowOverlapped(ctx, ps, detect.StartDepth, start, finish)
	close(jobs)
	<-finished
	if sinkErr != nil {
		return total, sinkErr
	}
	return total, err
}

// sinkJob is one window's spikes on their way to the sink.
type sinkJob struct {
	win recording.Window
	s   *detect.Spikes
}

// errSinkFailed stops the detection pass when the sink has failed (its
// own error is returned).
var errSinkFailed = errors.New("sink failed")

// Grid returns the template-centre grid of the probe. It is built once,
// from [Prepare] on or on the first call (Run starts it beside the
// whitening pass), and shared by every later caller, which must not
// modify it.
func (p *Pipeline) Grid() (*detect.Grid, error) {
	return p.grid()
}

// preparedDetector is a detector built ahead ([Pipeline.prepareDetector]).
type preparedDetector struct {
	d   *detect.Detector
	err error
}

// prepareDetector starts building, on a goroutine, the next detection
// pass's detector for the configured template sizes
// ([detect.PrepareDetector]): on a GPU its kernels, buffers and grid are
// made while the host learns the templates, which takes longer.
func (p *Pipeline) prepareDetector() {
	if p.ahead != nil || p.dev.Kind() != compute.CUDA {
		return // on the CPU the host work would only compete with the learning
	}
	ch := make(chan preparedDetector, 1)
	p.ahead = ch
	go func() {
		g, err := p.Grid()
		if err != nil {
			ch <- preparedDetector{err: err}
			return
		}
		d, err := detect.PrepareDetector(p.dev, g, p.sched.Len(), p.DetectParams())
		ch <- preparedDetector{d: d, err: err}
	}()
}

// detector returns a detector of tm: the one prepared ahead, given tm, if
// there is one and it has tm's sizes; otherwise a new one (which reports
// any error the preparation met).
func (p *Pipeline) detector(g *detect.Grid, tm *detect.Templates, prm detect.Params) (*detect.Detector, error) {
	if p.ahead != nil {
		r := <-p.ahead
		p.ahead = nil
		if r.err == nil {
			if r.d.SetTemplates(tm) == nil {
				return r.d, nil
			}
			r.d.Close()
		}
	}
	return detect.NewDetector(p.dev, g, tm, p.sched.Len(), prm)
}

// dropDetector waits for a detector prepared ahead and not taken, and
// closes it.
func (p *Pipeline) dropDetector() {
	if p.ahead != nil {
		if r := <-p.ahead; r.d != nil {
			r.d.Close()
		}
		p.ahead = nil
	}
}
