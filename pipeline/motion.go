package pipeline

import (
	"context"
	"fmt"
	"strings"

	"dspk/compute"
	"dspk/detect"
	"dspk/linalg"
	"dspk/motion"
	"dspk/probe"
	"dspk/recording"
)

// MotionParams returns the motion settings of the configuration.
func (p *Pipeline) MotionParams() motion.Params {
	return p.cfg.motionParams()
}

// motionParams returns the motion settings of c.
func (c Config) motionParams() motion.Params {
	mp := motion.Params{Motion: c.Motion, ThUniversal: c.ThUniversal, Pairwise: motion.DefaultPairwiseParams()}
	if c.Registration != "" {
		// Validate refuses other names.
		mp.Registration, _ = motion.ParseRegistration(c.Registration)
	}
	return mp
}

// EstimateMotion runs the motion pass (Kilosort4's first universal
// detection pass, ../shared/docs/kilosort4-sort.md §2–§3): every window
// is preprocessed and whitened by w, uncorrected, and detected with the
// universal templates tm; the depth and amplitude of each window's
// spikes are binned by a [motion.Estimator] on the pipeline's device,
// which then registers the windows. The spikes themselves are not kept.
// It fails, naming the recording, when the configuration's nblocks is
// below 1 or larger than the probe allows, or when too few spikes were
// detected to estimate motion.
func (p *Pipeline) EstimateMotion(ctx context.Context, w *linalg.Whitening, tm *detect.Templates) (*motion.Estimate, error) {
	yc := make([]float64, p.probe.Len())
	for i, v := range p.probe.Y {
		yc[i] = float64(v)
	}
	e, err := motion.NewEstimator(p.dev, yc, p.sched.Windows, p.MotionParams())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.rec.Name(), err)
	}
	defer e.Close()
	_, err = p.detectPass(ctx, windowPass{name: "motion", w: w}, tm, func(win recording.Window, s *detect.Spikes) error {
		return e.Add(win.Index, s.Y, s.Amplitude)
	})
	if err != nil {
		return nil, err
	}
	est, err := e.EstimateContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.rec.Name(), err)
	}
	return est, nil
}

// WindowTimes returns the centre of every window's owned samples in
// seconds from the recording's first sample: the time axis of a motion
// estimate.
func (p *Pipeline) WindowTimes() []float64 {
	t := make([]float64, p.sched.Windows)
	fs := p.rec.SampleRate()
	for i := range t {
		w := p.sched.Window(i)
		t[i] = (float64(w.OwnStart) + float64(w.Owned())/2) / fs
	}
	return t
}

// correction corrects the whitened windows of a run for its motion
// estimate, where each window lives (on a GPU with no copy to the host).
type correction struct {
	est  *motion.Estimate // the estimate the windows are corrected by
	rule motion.Rule      // the rule that corrects them
	k    *motion.Corrector
}

// window corrects the preprocessed window win of the schedule's window rw.
func (c *correction) window(rw recording.Window, win *compute.Window) error {
	return c.k.Window(win, rw.Index)
}

// Close frees the corrector's memory. It may be called on nil.
func (c *correction) Close() {
	if c != nil && c.k != nil {
		c.k.Close()
		c.k = nil
	}
}

// estimateAndCorrect estimates the motion (the pass of
// [Pipeline.EstimateMotion]) and returns the correction of the run's
// later windows by it, with the configuration's rule (the auto rule's
// choice for the estimate). The caller closes it.
func (p *Pipeline) estimateAndCorrect(ctx context.Context, w *linalg.Whitening, tm *detect.Templates) (*correction, error) {
	est, err := p.EstimateMotion(ctx, w, tm)
	if err != nil {
		return nil, err
	}
	rule, _ := parseRule(p.cfg.Correction)
	if p.cfg.Correction == CorrectionAuto {
		rule = autoRule(est)
	}
	return p.correctWith(est, rule)
}

// correctWith returns the correction of whitened windows by est with the
// rule given. The caller closes it.
func (p *Pipeline) correctWith(est *motion.Estimate, rule motion.Rule) (*correction, error) {
	x := make([]float64, p.probe.Len())
	y := make([]float64, p.probe.Len())
	for i := range x {
		x[i], y[i] = float64(p.probe.X[i]), float64(p.probe.Y[i])
	}
	k, err := motion.NewCorrectorRule(p.dev, x, y, p.MotionParams(), est, rule)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.rec.Name(), err)
	}
	return &correction{est: est, rule: rule, k: k}, nil
}

// thresholdScale is the factor of the detection and matching thresholds
// on windows c corrects ([motion.Rule.ThresholdScale]; 1 for none).
func (c *correction) thresholdScale() float64 {
	if c == nil {
		return 1
	}
	return c.rule.ThresholdScale()
}

// ruleName is the name of the rule c corrects with, "" for no correction.
func (c *correction) ruleName() string {
	if c == nil {
		return ""
	}
	return c.rule.String()
}

// checkMotion refuses motion settings the probe cannot take (nblocks
// larger than its depth allows, out-of-range values) before any pass,
// by building the estimate's binning for two windows on the CPU.
func checkMotion(pr *probe.Probe, cfg Config) error {
	if cfg.NBlocks <= 0 {
		return nil
	}
	mp := cfg.motionParams()
	yc := make([]float64, pr.Len())
	for i, v := range pr.Y {
		yc[i] = float64(v)
	}
	e, err := motion.NewEstimator(nil, yc, motion.MinWindows, mp)
	if err != nil {
		return err
	}
	return e.Close()
}

// correctionRules are the correction rules a Config may name.
var correctionRules = []motion.Rule{motion.CorrectionKilosort, motion.CorrectionSmooth}

// CorrectionAuto names the rule that picks the correction from the
// motion estimate (the default of dspk sort): [motion.CorrectionSmooth]
// when the estimate moves by at least [AutoSmoothRangeUm] anywhere, else
// Kilosort4's kriging.
const CorrectionAuto = "auto"

// AutoSmoothRangeUm is the motion range (largest minus smallest shift of
// any block over the recording) from which the auto rule corrects with
// the smooth rule: half the 20-µm site pitch of Neuropixels. Measured on
// the H200 (2026-12-03, 10-minute NP1 simulations, docs/sort.md):
// Kilosort4's kriging keeps still recordings' units (119/120, 300/300)
// but splits drifting ones (29/120, 132/300 at 0.1 µm/s), because its
// footprint and noise level change with the sub-pitch part of the shift;
// the smooth rule keeps drifting units whole (114/120, 271/300) and loses
// a few of the most similar still ones (120/120, 297/300). A still
// recording's estimate moves by a few µm at most.
const AutoSmoothRangeUm = 10.0

// autoRule is the rule [CorrectionAuto] picks for est.
func autoRule(est *motion.Estimate) motion.Rule {
	if est == nil || len(est.Dshift) == 0 {
		return motion.CorrectionKilosort
	}
	lo, hi := est.Dshift[0], est.Dshift[0]
	for _, v := range est.Dshift {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi-lo >= AutoSmoothRangeUm {
		return motion.CorrectionSmooth
	}
	return motion.CorrectionKilosort
}

// parseRule returns the rule named name ("" is Kilosort4's; "auto"
// stands for Kilosort4's until the estimate decides).
func parseRule(name string) (motion.Rule, bool) {
	if name == "" || name == CorrectionAuto {
		return motion.CorrectionKilosort, true
	}
	for _, r := range correctionRules {
		if r.String() == name {
			return r, true
		}
	}
	return 0, false
}

// validRule reports whether name names a correction rule.
func validRule(name string) bool {
	_, ok := parseRule(name)
	return ok
}

// ruleNames lists the correction rules' names.
func ruleNames() string {
	var s []string
	for _, r := range correctionRules {
		s = append(s, r.String())
	}
	s = append(s, CorrectionAuto)
	return strings.Join(s, ", ")
}
