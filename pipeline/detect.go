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
func (p *Pipeline) DetectParams() detect.Params {
	prm := detect.DefaultParams()
	prm.Settings = p.cfg.Settings
	prm.NT0Min = kilosort.DefaultNT0Min(p.cfg.NT)
	prm.Seed = p.cfg.Seed
	prm.NearestChans = p.cfg.NearestChans
	prm.NearestTemplates = p.cfg.NearestTemplates
	prm.Groups = p.cfg.Groups
	return prm
}

// LearnTemplates runs pass 2: isolated single-channel peaks of the
// whitened statistic windows give clips, from which Kilosort4's universal
// templates (wTEMP, k-means) and feature basis (wPCA, SVD) are learned.
// It also returns the number of clips used.
func (p *Pipeline) LearnTemplates(ctx context.Context, w *linalg.Whitening) (*detect.Templates, int, error) {
	prm := p.DetectParams()
	l := detect.NewLearner(p.probe.Len(), p.sched.Len(), prm)
	err := p.each(ctx, "templates", p.StatWindows(), w, func(win recording.Window, x []float32) error {
		l.Add(x)
		if l.Full() {
			return errLearnerFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errLearnerFull) {
		return nil, 0, err
	}
	tm, err := l.Templates()
	if err != nil {
		return nil, l.Len(), fmt.Errorf("%s: learning templates from %d windows: %w", p.rec.Name(), l.Windows(), err)
	}
	return tm, l.Len(), nil
}

// Detect runs pass 3: every window is preprocessed, whitened by w and
// matched against the universal templates tm; sink receives each
// window's spikes in file order (the Spikes value is reused: copy what
// must outlive the call). It returns the summed work counts.
func (p *Pipeline) Detect(ctx context.Context, w *linalg.Whitening, tm *detect.Templates,
	sink func(win recording.Window, s *detect.Spikes) error) (detect.Stats, error) {
	prm := p.DetectParams()
	g, err := detect.NewGrid(p.probe, prm)
	if err != nil {
		return detect.Stats{}, err
	}
	d, err := detect.NewDetector(p.dev, g, tm, p.sched.Len(), prm)
	if err != nil {
		return detect.Stats{}, err
	}
	defer d.Close()
	var total detect.Stats
	var buf detect.Spikes
	// The window stays on its device: on a GPU only the spikes come back.
	err = p.eachWindow(ctx, "detection", nil, w, func(rw recording.Window, win *compute.Window) error {
		buf.Reset()
		st, err := d.DetectWindow(&buf, win, rw.OwnStart, rw.Owned())
		if err != nil {
			return fmt.Errorf("%s: window %d: %w", p.rec.Name(), rw.Index, err)
		}
		total.Add(st)
		return sink(rw, &buf)
	})
	return total, err
}

// Grid returns the template-centre grid of the probe.
func (p *Pipeline) Grid() (*detect.Grid, error) { return detect.NewGrid(p.probe, p.DetectParams()) }
