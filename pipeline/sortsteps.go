package pipeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"dspk/cluster"
	"dspk/curate"
	"dspk/detect"
	"dspk/linalg"
	"dspk/match"
	"dspk/motion"
	"dspk/recording"
)

// SortGlobal is what the whole recording decides for a sort: everything
// [Pipeline.Sort] computes before learned-template matching. Matching
// any range of windows with it gives, window for window, the spikes of
// one matching pass over the whole recording, and [Pipeline.SortFinish]
// turns the spikes of every window into the sort's result.
type SortGlobal struct {
	// Whitening is the whitening operator of the whole recording.
	Whitening *linalg.Whitening
	// Universal are the universal templates detection used (learned
	// again from corrected windows with motion correction),
	// UniversalSource says where they came from and Clips is the number
	// of clips they were learned from.
	Universal       *detect.Templates
	UniversalSource string
	Clips           int
	// Motion is the motion estimate (nil with nblocks 0) and Correction
	// the rule that corrects the windows by it (the auto rule's choice;
	// "" without motion).
	Motion     *motion.Estimate
	Correction string
	// Learned are the learned templates the matching uses.
	Learned match.Templates
	// Detected is the number of spikes of universal detection and Work
	// its work counts; Clusters0 and Groups0 describe the first
	// clustering.
	Detected  int
	Work      detect.Stats
	Clusters0 int
	Groups0   []cluster.Group
	// Stages are the stages run so far, in order, with their times.
	Stages []StageTime
	// Warnings are the pipeline's ([Pipeline.Warnings]) and those these
	// stages found.
	Warnings []string
}

// SortGlobal runs the stages of [Pipeline.Sort] that need the whole
// recording, up to and including the learned templates: whitening,
// universal templates, with nblocks > 0 the motion pass and the
// templates learned again from corrected windows, universal detection,
// the first clustering and its post-processing. The windows are no
// longer corrected when it returns.
func (p *Pipeline) SortGlobal(ctx context.Context, opt SortOptions) (*SortGlobal, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	return p.sortGlobal(ctx, opt)
}

// sortGlobal is SortGlobal with opt validated.
func (p *Pipeline) sortGlobal(ctx context.Context, opt SortOptions) (*SortGlobal, error) {
	name := p.rec.Name()
	g := &SortGlobal{}
	stage := g.stage
	t0 := time.Now()
	w, _, ww, err := p.Whitening(ctx)
	if err != nil {
		return nil, err
	}
	g.Whitening, g.Warnings = w, append(p.Warnings(), ww...)
	stage("whitening", t0, len(p.StatWindows()), "windows")
	t0 = time.Now()
	tm, clips, err := p.LearnTemplates(ctx, w)
	if err != nil {
		return nil, err
	}
	stage("templates", t0, clips, "clips")
	if clips < detect.FewClips {
		g.Warnings = append(g.Warnings, fmt.Sprintf("%s: the templates were learned from only %d isolated peaks "+
			"(Kilosort4's runs on large probes have thousands)", name, clips))
	}
	g.UniversalSource = "learned from the data"
	var corr *correction // the sort's motion correction (nblocks > 0)
	if p.cfg.NBlocks > 0 {
		// The motion pass on uncorrected windows; every later pass
		// (template learning again, detection, matching) on windows
		// corrected for it, as Kilosort4 does (kilosort4-sort.md §2).
		t0 = time.Now()
		if corr, err = p.estimateAndCorrect(ctx, w, tm); err != nil {
			return nil, err
		}
		defer corr.Close()
		stage("motion", t0, p.sched.Windows, "windows")
		t0 = time.Now()
		if tm, clips, err = p.learnTemplates(ctx, w, corr, nil); err != nil {
			return nil, err
		}
		g.UniversalSource = "learned from the drift-corrected data"
		stage("templates corrected", t0, clips, "clips")
		g.Motion, g.Correction = corr.est, corr.ruleName()
	}
	g.Universal, g.Clips = tm, clips
	grid, err := p.Grid()
	if err != nil {
		return nil, err
	}

	// Universal detection: the compact table of what the first
	// clustering reads (centre and features per spike, in file order).
	t0 = time.Now()
	var centre []int32
	var feat []float32
	g.Work, err = p.detectPass(ctx, windowPass{name: "detection", w: w, corr: corr}, tm, func(_ recording.Window, s *detect.Spikes) error {
		centre = append(centre, s.Center...)
		feat = append(feat, s.Features...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	g.Detected = len(centre)
	stage("detection", t0, g.Detected, "spikes")
	if g.Detected < MinSortSpikes {
		return nil, fmt.Errorf("%s: detection found %d spikes above Th_universal = %g; a sort needs at least %d "+
			"(the clustering's initialisation draws 100 per round): use a longer recording or a lower -Th_universal",
			name, g.Detected, p.cfg.ThUniversal, MinSortSpikes)
	}

	if err := p.firstClustering(ctx, opt, g, grid, tm, centre, feat); err != nil {
		return nil, err
	}
	return g, nil
}

// firstClustering runs the first clustering (mode 'spikes': units are
// the template centres of grid) of the detected spikes' centres and
// features, and post-processes its clusters into g's learned templates,
// adding both stages to g.
func (p *Pipeline) firstClustering(ctx context.Context, opt SortOptions, g *SortGlobal, grid *detect.Grid, tm *detect.Templates,
	centre []int32, feat []float32) error {
	if err := announce(ctx, opt, "clustering spikes"); err != nil {
		return err
	}
	t0 := time.Now()
	C, P := p.probe.Len(), tm.P
	cl, err := cluster.NewClusterer(p.dev, opt.Cluster)
	if err != nil {
		return err
	}
	defer cl.Close()
	in := &cluster.Input{NC: grid.NC, P: P, C: C, ChanX: p.probe.X, ChanY: p.probe.Y,
		UnitX: grid.X, UnitY: grid.Y, UnitChans: grid.IC, Unit: centre, Features: feat}
	r0, err := cl.ClusterContext(ctx, in)
	if err != nil {
		return fmt.Errorf("%s: first clustering of %d spikes: %w", p.rec.Name(), g.Detected, err)
	}
	centre, feat, in = nil, nil, nil
	g.Clusters0, g.Groups0 = r0.N, r0.Groups
	g.stage("clustering spikes", t0, r0.N, "clusters")

	t0 = time.Now()
	u, n, err := cluster.PostprocessTemplatesContext(ctx, r0.Wall, r0.Counts, C, tm)
	if err != nil {
		return err
	}
	r0 = nil
	g.Learned = match.Templates{N: n, C: C, P: P, U: transposePC(u, n, P, C), WPCA: tm.WPCA}
	g.stage("learned templates", t0, n, "templates")
	return nil
}

// stage adds the stage s, begun at t0, which produced n of what, to g.
func (g *SortGlobal) stage(s string, t0 time.Time, n int, what string) {
	g.Stages = append(g.Stages, StageTime{Name: s, Seconds: time.Since(t0).Seconds(), Count: n, What: what})
}

// announce starts a host stage of a sort: the window passes check ctx
// themselves, the host stages only before they start.
func announce(ctx context.Context, opt SortOptions, s string) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	if opt.Stage != nil {
		opt.Stage(s)
	}
	return nil
}

// checkSortGlobal refuses global results that do not fit the pipeline.
func (p *Pipeline) checkSortGlobal(g *SortGlobal) error {
	name, C := p.rec.Name(), p.probe.Len()
	switch {
	case g.Whitening == nil || g.Universal == nil:
		return fmt.Errorf("%s: sort's global results without whitening or universal templates", name)
	case g.Whitening.C != C:
		return fmt.Errorf("%s: whitening of %d channels for a probe of %d sites", name, g.Whitening.C, C)
	case g.Universal.NT != p.cfg.NT:
		return fmt.Errorf("%s: universal templates of %d samples, the run uses nt = %d", name, g.Universal.NT, p.cfg.NT)
	case g.Learned.C != C || g.Learned.P != g.Universal.P:
		return fmt.Errorf("%s: learned templates of %d channels and %d PCs, want %d and %d", name, g.Learned.C, g.Learned.P, C, g.Universal.P)
	case (g.Motion != nil) != (p.cfg.NBlocks > 0):
		return fmt.Errorf("%s: sort's global results with motion estimate %v for nblocks %d", name, g.Motion != nil, p.cfg.NBlocks)
	case g.Motion != nil && g.Motion.Windows != p.sched.Windows:
		return fmt.Errorf("%s: motion estimate of %d windows for a schedule of %d", name, g.Motion.Windows, p.sched.Windows)
	}
	return nil
}

// MatchWindows runs learned-template matching over windows [first, end)
// of the schedule with the global results g (nothing is re-estimated):
// the windows are whitened by g's operator and corrected by its motion
// estimate with its rule, and the matcher is built from its learned
// templates on p's device. The spikes come in file order; matching the
// windows of a partition of the schedule separately and concatenating
// the spikes in window order gives those of one pass over all of them.
func (p *Pipeline) MatchWindows(ctx context.Context, g *SortGlobal, opt SortOptions, first, end int) (*match.Spikes, error) {
	if first < 0 || end > p.sched.Windows || first >= end {
		return nil, fmt.Errorf("%s: window range [%d, %d) outside the schedule's %d windows", p.rec.Name(), first, end, p.sched.Windows)
	}
	sp, err := p.sortParams(opt)
	if err != nil {
		return nil, err
	}
	ms, _, err := p.matchRange(ctx, g, sp, first, end)
	return ms, err
}

// matchRange is MatchWindows with the sort's settings sp; it also
// returns the learned templates' feature channels and best channels
// (from the matcher).
func (p *Pipeline) matchRange(ctx context.Context, g *SortGlobal, sp sortParams, first, end int) (*match.Spikes, *templateChans, error) {
	if err := p.checkSortGlobal(g); err != nil {
		return nil, nil, err
	}
	name := p.rec.Name()
	var corr *correction
	if g.Motion != nil {
		var err error
		if corr, err = p.restoreCorrection(g.Motion, g.Correction); err != nil {
			return nil, nil, err
		}
		defer corr.Close()
	}
	sp = sp.corrected(g.Correction)
	m, err := match.NewMatcher(p.dev, g.Learned, p.probe.X, p.probe.Y, sp.match)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: learned templates: %w", name, err)
	}
	defer m.Close()
	ch := channelsOf(m, g.Learned.N, p)
	var windows []int
	if first != 0 || end != p.sched.Windows {
		for i := first; i < end; i++ {
			windows = append(windows, i)
		}
	}
	ms := &match.Spikes{}
	if err := p.matchWindows(ctx, windowPass{name: "matching", windows: windows, w: g.Whitening, corr: corr}, m, ms); err != nil {
		return nil, nil, err
	}
	// The matcher's window buffers (the CPU's projections, the GPU's
	// device memory) are not needed by the host stages.
	if err := m.Close(); err != nil {
		return nil, nil, fmt.Errorf("%s: matching: %w", name, err)
	}
	return ms, ch, nil
}

// templateChans are the learned templates' feature channels and best
// channels, as the matcher chooses them.
type templateChans struct {
	ch   *curate.Channels
	best []int
}

// channelsOf returns the feature and best channels of m's n templates.
func channelsOf(m *match.Matcher, n int, p *Pipeline) *templateChans {
	tc := &templateChans{ch: &curate.Channels{Chans: make([][]int32, n), X: p.probe.X, Y: p.probe.Y}, best: make([]int, n)}
	for k := range n {
		tc.ch.Chans[k] = append([]int32(nil), m.Channels(k)...)
		tc.best[k] = m.BestChannel(k)
	}
	return tc
}

// corrected returns sp with Th_learned scaled by the threshold factor of
// the correction rule named rule ([motion.Rule.ThresholdScale]; "" for no
// correction leaves it).
func (sp sortParams) corrected(rule string) sortParams {
	if r, ok := parseRule(rule); ok && rule != "" && rule != CorrectionAuto {
		sp.match.ThLearned *= r.ThresholdScale()
	}
	return sp
}

// restoreCorrection returns the correction of whitened windows by est
// with the rule named rule (as [Pipeline.SortGlobal] chose it). The
// caller closes it.
func (p *Pipeline) restoreCorrection(est *motion.Estimate, rule string) (*correction, error) {
	r, ok := parseRule(rule)
	if !ok || rule == "" || rule == CorrectionAuto {
		return nil, fmt.Errorf("%s: correction rule %q: want one of %s but %s", p.rec.Name(), rule, ruleNames(), CorrectionAuto)
	}
	return p.correctWith(est, r)
}

// SortFinish runs the stages of [Pipeline.Sort] after the matching on
// the spikes ms of every window in file order (the concatenated
// [Pipeline.MatchWindows] of a partition of the schedule), which took
// matchSeconds: the final clustering, curation and the removal of spikes
// shifted outside the recording. The result's times are g's stages,
// the matching's and its own; its warnings g's and the pipeline's new
// ones. ms is left as it was: the merges shift times and features of a
// copy, so that the same spikes give the same result again.
func (p *Pipeline) SortFinish(ctx context.Context, g *SortGlobal, opt SortOptions, ms *match.Spikes, matchSeconds float64) (*SortResult, error) {
	sp, err := p.sortParams(opt)
	if err != nil {
		return nil, err
	}
	if err := p.checkSortGlobal(g); err != nil {
		return nil, err
	}
	// The feature channels come from a matcher on the host: they depend
	// on the templates and the probe only.
	m, err := match.NewMatcher(nil, g.Learned, p.probe.X, p.probe.Y, sp.match)
	if err != nil {
		return nil, fmt.Errorf("%s: learned templates: %w", p.rec.Name(), err)
	}
	ch := channelsOf(m, g.Learned.N, p)
	if err := m.Close(); err != nil {
		return nil, err
	}
	before := matchSeconds
	for _, s := range g.Stages {
		before += s.Seconds
	}
	own := &match.Spikes{NC: ms.NC, P: ms.P, Sample: slices.Clone(ms.Sample), Template: slices.Clone(ms.Template),
		Amplitude: slices.Clone(ms.Amplitude), Coef: ms.Coef, Features: slices.Clone(ms.Features)}
	return p.sortFinish(ctx, g, opt, sp, own, matchSeconds, time.Now().Add(-time.Duration(before*float64(time.Second))), ch)
}

// sortFinish is SortFinish with the sort's settings sp, its start time
// and the learned templates' channels.
func (p *Pipeline) sortFinish(ctx context.Context, g *SortGlobal, opt SortOptions, sp sortParams, ms *match.Spikes, matchSeconds float64,
	start time.Time, tc *templateChans) (*SortResult, error) {
	name := p.rec.Name()
	sp = sp.corrected(g.Correction)
	res := &SortResult{Params: opt, Matching: sp.match, Curation: sp.curate, Detected: g.Detected, Clusters0: g.Clusters0, Groups0: g.Groups0,
		Learned: g.Learned, Channels: tc.ch, Correction: g.Correction}
	res.Stages = append(res.Stages, g.Stages...)
	stage := func(s string, t0 time.Time, n int, what string) {
		res.Stages = append(res.Stages, StageTime{Name: s, Seconds: time.Since(t0).Seconds(), Count: n, What: what})
	}
	grid, err := p.Grid()
	if err != nil {
		return nil, err
	}
	prm := p.DetectParams()
	res.Info = &RunInfo{Recording: p.rec, Probe: p.probe, Config: p.cfg, Detect: prm,
		Schedule: p.sched, StatWindows: p.StatWindows(), Grid: grid, Universal: g.Universal,
		UniversalSource: g.UniversalSource, Clips: g.Clips, Whitening: g.Whitening, Device: opt.Device}
	if g.Motion != nil {
		res.Info.Motion, res.Info.WindowTimes = g.Motion, p.WindowTimes()
	}
	sum := &Summary{Windows: p.sched.Windows, Samples: p.sched.End - p.sched.Start, Clips: g.Clips,
		Work: g.Work, Centres: grid.F()}
	mp := sp.match
	res.Matched = ms.Len()
	res.Stages = append(res.Stages, StageTime{Name: "matching", Seconds: matchSeconds, Count: res.Matched, What: "spikes"})
	if res.Matched < MinSortSpikes {
		return nil, fmt.Errorf("%s: learned-template matching found %d spikes above Th_learned = %g; a sort needs at least %d: "+
			"lower -Th_learned or use a longer recording", name, res.Matched, mp.ThLearned, MinSortSpikes)
	}
	n, C, P := g.Learned.N, g.Learned.C, g.Learned.P

	// Final clustering: units are the learned templates at their best
	// channels.
	if err := announce(ctx, opt, "clustering templates"); err != nil {
		return nil, err
	}
	t0 := time.Now()
	cl, err := cluster.NewClusterer(p.dev, opt.Cluster)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ux, uy := make([]float64, n), make([]float64, n)
	uch := make([]int32, 0, n*mp.NearestChans)
	for k := range n {
		b := tc.best[k]
		ux[k], uy[k] = p.probe.X[b], p.probe.Y[b]
		uch = append(uch, tc.ch.Chans[k]...)
	}
	in := &cluster.Input{NC: mp.NearestChans, P: P, C: C, ChanX: p.probe.X, ChanY: p.probe.Y,
		UnitX: ux, UnitY: uy, UnitChans: uch, Unit: ms.Template, Features: ms.Features}
	r1, err := cl.ClusterContext(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("%s: final clustering of %d spikes: %w", name, res.Matched, err)
	}
	res.Clusters1, res.Groups1 = r1.N, r1.Groups
	stage("clustering templates", t0, r1.N, "clusters")

	// Curation.
	if err := announce(ctx, opt, "curation"); err != nil {
		return nil, err
	}
	t0 = time.Now()
	spikes := &curate.Spikes{NC: mp.NearestChans, P: P, Time: ms.Sample, Template: ms.Template,
		Cluster: r1.Labels, Amp: ms.Amplitude, Features: ms.Features}
	res.Curated, err = curate.RunContext(ctx, spikes, &curate.Units{N: r1.N, C: C, P: P, W: r1.Wall},
		curate.NewBasis(g.Universal.WPCA, P, prm.NT), tc.ch, sp.curate, opt.PCOverwrite)
	if err != nil {
		return nil, err
	}
	res.Outside = dropOutside(res.Curated, p.rec.Samples())
	stage("curation", t0, res.Curated.Units.N, "units")

	sum.Spikes = res.Curated.Spikes.Len()
	sum.Wall = time.Since(start)
	sum.WallSeconds = sum.Wall.Seconds()
	sum.Seconds = float64(sum.Samples) / p.rec.SampleRate()
	sum.TimesRealTime = sum.Seconds / sum.WallSeconds
	sum.PassSeconds = map[string]float64{}
	for _, s := range res.Stages {
		sum.PassSeconds[s.Name] = s.Seconds
	}
	sum.Warnings = withWarnings(g.Warnings, p.Warnings())
	res.Summary = sum
	return res, nil
}
