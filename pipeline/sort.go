package pipeline

import (
	"context"
	"fmt"
	"time"

	"dspk/cluster"
	"dspk/compute"
	"dspk/curate"
	"dspk/detect"
	"dspk/linalg"
	"dspk/match"
	"dspk/recording"
)

// MinSortSpikes is the fewest spikes the first detection must find for a
// sort: Kilosort4's k-means++ initialisation draws 100 candidates per
// round and cannot start from fewer.
const MinSortSpikes = 100

// SortOptions configures [Pipeline.Sort].
type SortOptions struct {
	// Match holds Th_learned and max_peels (its NT, NT0Min and
	// NearestChans are taken from the configuration).
	Match match.Params
	// Cluster holds the clustering settings (cluster_downsampling,
	// max_cluster_subset, cluster_neighbors, cluster_init_seed, x_centers).
	Cluster cluster.Params
	// Curate holds acg_threshold, ccg_threshold, duplicate_spike_ms and
	// position_limit (its FS is the recording's rate).
	Curate curate.Params
	// PCOverwrite reproduces Kilosort4's "last cluster sharing a template
	// wins" choice of PC-feature channels (curate.PCFeatures).
	PCOverwrite bool
	// Device names the device, for the provenance.
	Device string
	// Stage, if set, is called when a stage that is not a window pass
	// starts ("clustering spikes", "clustering templates", "curation").
	Stage func(name string)
}

// DefaultSortOptions returns Kilosort4's defaults.
func DefaultSortOptions() SortOptions {
	return SortOptions{Match: match.DefaultParams(), Cluster: cluster.DefaultParams(), Curate: curate.DefaultParams()}
}

// StageTime is the wall time of one stage of a sort and what it produced.
type StageTime struct {
	// Name is the stage: whitening, templates, motion and templates
	// corrected (nblocks > 0), detection, clustering
	// spikes, learned templates, matching, clustering templates, curation.
	Name string `json:"stage"`
	// Seconds is its wall time.
	Seconds float64 `json:"seconds"`
	// Count is what it produced: spikes, clusters or templates.
	Count int `json:"count"`
	// What names Count.
	What string `json:"what"`
}

// SortResult is the outcome of [Pipeline.Sort]: what the sort folder
// holds.
type SortResult struct {
	// Correction is the rule that corrected the windows ("kilosort" or
	// "smooth", the auto rule's choice), "" without motion correction.
	Correction string
	// Info describes the run (whitening, universal templates, grid,
	// schedule); Summary times it, its PassSeconds holding every stage.
	Info    *RunInfo
	Summary *Summary
	// Stages lists the stages in order with their times.
	Stages []StageTime
	// Detected is the number of spikes of universal detection, Clusters0
	// the clusters of the first clustering, Learned the learned
	// templates after post-processing, Matched the spikes of learned-
	// template matching and Clusters1 the clusters of the final
	// clustering (before merges).
	Detected, Clusters0, Learned, Matched, Clusters1 int
	// Groups0 and Groups1 describe the groups of the first and the final
	// clustering (their spikes and feature channels).
	Groups0, Groups1 []cluster.Group
	// Templates are the learned templates U [N'][C][P] the matching used.
	Templates match.Templates
	// Channels gives each learned template's feature channels (iCC at its
	// best channel) and the sites' positions.
	Channels *curate.Channels
	// Curated holds the final spikes and units with every array of the
	// folder.
	Curated *curate.Result
	// Outside is the number of spikes whose merge-shifted time fell
	// outside the recording and were dropped.
	Outside int
	// Params are the settings used.
	Params SortOptions
}

// Sort runs Kilosort4's whole sort on the recording (kilosort4-sort.md
// §2): whitening, universal templates, with nblocks > 0 the motion pass
// and templates learned again from corrected windows (every later window
// is corrected), universal detection collecting
// each spike's centre and features, the first graph clustering (mode
// 'spikes') and its post-processing into learned templates, learned-
// template matching over every window, the final clustering (mode
// 'template') and curation (merges, duplicates, labels, positions,
// amplitudes, similarity, PC features). Progress goes to p.Progress (the
// window passes) and opt.Stage; each stage's wall time to the result.
//
// Matching and both clusterings run on p's device (match's and cluster's
// CUDA back ends on a GPU: the window stays on the device and only the
// spikes come back). Host memory holds the spike table of the detection (centre and NC·P
// features per spike) until the first clustering, then that of the
// matching.
func (p *Pipeline) Sort(ctx context.Context, opt SortOptions) (*SortResult, error) {
	start := time.Now()
	name := p.rec.Name()
	res := &SortResult{Params: opt}
	stage := func(s string, t0 time.Time, n int, what string) {
		res.Stages = append(res.Stages, StageTime{Name: s, Seconds: time.Since(t0).Seconds(), Count: n, What: what})
	}
	// announce starts a host stage; the window passes check ctx
	// themselves, the host stages only before they start.
	announce := func(s string) error {
		if err := context.Cause(ctx); err != nil {
			return err
		}
		if opt.Stage != nil {
			opt.Stage(s)
		}
		return nil
	}
	t0 := time.Now()
	w, _, err := p.Whitening(ctx)
	if err != nil {
		return nil, err
	}
	stage("whitening", t0, len(p.StatWindows()), "windows")
	sum := &Summary{Windows: p.sched.Windows, Samples: p.sched.End - p.sched.Start}
	t0 = time.Now()
	tm, clips, err := p.LearnTemplates(ctx, w)
	if err != nil {
		return nil, err
	}
	sum.Clips = clips
	stage("templates", t0, clips, "clips")
	if clips < detect.FewClips {
		p.warnings = append(p.warnings, fmt.Sprintf("%s: the templates were learned from only %d isolated peaks "+
			"(Kilosort4's runs on large probes have thousands)", name, clips))
	}
	source := "learned from the data"
	p.drift = nil
	if p.cfg.NBlocks > 0 {
		// The motion pass on uncorrected windows; every later pass
		// (template learning again, detection, matching) on windows
		// corrected for it, as Kilosort4 does (kilosort4-sort.md §2).
		t0 = time.Now()
		stop, err := p.estimateAndCorrect(ctx, w, tm)
		if err != nil {
			return nil, err
		}
		defer stop()
		stage("motion", t0, p.sched.Windows, "windows")
		t0 = time.Now()
		if tm, clips, err = p.LearnTemplates(ctx, w); err != nil {
			return nil, err
		}
		sum.Clips = clips
		source = "learned from the drift-corrected data"
		stage("templates corrected", t0, clips, "clips")
	}
	g, err := p.Grid()
	if err != nil {
		return nil, err
	}
	prm := p.DetectParams()
	res.Info = &RunInfo{Recording: p.rec, Probe: p.probe, Config: p.cfg, Detect: prm,
		Schedule: p.sched, StatWindows: p.StatWindows(), Grid: g, Templates: tm,
		TemplatesSource: source, Clips: clips, Whitening: w, Device: opt.Device}
	if p.drift != nil {
		res.Info.Motion, res.Info.WindowTimes = p.drift, p.WindowTimes()
	}

	// Universal detection: the compact table of what the first
	// clustering reads (centre and features per spike, in file order).
	t0 = time.Now()
	var centre []int32
	var feat []float32
	stats, err := p.Detect(ctx, w, tm, func(_ recording.Window, s *detect.Spikes) error {
		centre = append(centre, s.Center...)
		feat = append(feat, s.Features...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Detected = len(centre)
	sum.Work = stats
	sum.Centres = g.F()
	stage("detection", t0, res.Detected, "spikes")
	if res.Detected < MinSortSpikes {
		return nil, fmt.Errorf("%s: detection found %d spikes above Th_universal = %g; a sort needs at least %d "+
			"(the clustering's initialisation draws 100 per round): use a longer recording or a lower -Th_universal",
			name, res.Detected, p.cfg.ThUniversal, MinSortSpikes)
	}

	// First clustering: units are the template centres.
	if err := announce("clustering spikes"); err != nil {
		return nil, err
	}
	t0 = time.Now()
	C, P := p.probe.Len(), tm.P
	cl, err := cluster.NewClusterer(p.dev, opt.Cluster)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	in := &cluster.Input{NC: g.NC, P: P, C: C, ChanX: p.probe.X, ChanY: p.probe.Y,
		UnitX: g.X, UnitY: g.Y, UnitChans: g.IC, Unit: centre, Features: feat}
	r0, err := cl.Cluster(in)
	if err != nil {
		return nil, fmt.Errorf("%s: first clustering of %d spikes: %w", name, res.Detected, err)
	}
	centre, feat, in = nil, nil, nil
	res.Clusters0, res.Groups0 = r0.N, r0.Groups
	stage("clustering spikes", t0, r0.N, "clusters")

	t0 = time.Now()
	u, n := cluster.PostprocessTemplates(r0.Wall, r0.Counts, C, tm)
	r0 = nil
	res.Learned = n
	res.Templates = match.Templates{N: n, C: C, P: P, U: transposePC(u, n, P, C), WPCA: tm.WPCA}
	stage("learned templates", t0, n, "templates")

	// Learned-template matching over every window.
	mp := opt.Match
	mp.NT, mp.NT0Min, mp.NearestChans = prm.NT, prm.NT0Min, p.cfg.NearestChans
	m, err := match.NewMatcher(p.dev, res.Templates, p.probe.X, p.probe.Y, mp)
	if err != nil {
		return nil, fmt.Errorf("%s: learned templates: %w", name, err)
	}
	defer m.Close()
	ch := &curate.Channels{Chans: make([][]int32, n), X: p.probe.X, Y: p.probe.Y}
	for k := range n {
		ch.Chans[k] = append([]int32(nil), m.Channels(k)...)
	}
	res.Channels = ch
	t0 = time.Now()
	var ms match.Spikes
	err = p.matchWindows(ctx, w, m, &ms)
	if err != nil {
		return nil, err
	}
	// The matcher's window buffers (the CPU's projections, the GPU's
	// device memory) are not needed by the host stages; its channels
	// still answer.
	if err := m.Close(); err != nil {
		return nil, fmt.Errorf("%s: matching: %w", name, err)
	}
	res.Matched = ms.Len()
	stage("matching", t0, res.Matched, "spikes")
	if res.Matched < MinSortSpikes {
		return nil, fmt.Errorf("%s: learned-template matching found %d spikes above Th_learned = %g; a sort needs at least %d: "+
			"lower -Th_learned or use a longer recording", name, res.Matched, mp.ThLearned, MinSortSpikes)
	}

	// Final clustering: units are the learned templates at their best
	// channels.
	if err := announce("clustering templates"); err != nil {
		return nil, err
	}
	t0 = time.Now()
	ux, uy := make([]float64, n), make([]float64, n)
	uch := make([]int32, 0, n*mp.NearestChans)
	for k := range n {
		b := m.BestChannel(k)
		ux[k], uy[k] = p.probe.X[b], p.probe.Y[b]
		uch = append(uch, ch.Chans[k]...)
	}
	in = &cluster.Input{NC: mp.NearestChans, P: P, C: C, ChanX: p.probe.X, ChanY: p.probe.Y,
		UnitX: ux, UnitY: uy, UnitChans: uch, Unit: ms.Template, Features: ms.Features}
	r1, err := cl.Cluster(in)
	if err != nil {
		return nil, fmt.Errorf("%s: final clustering of %d spikes: %w", name, res.Matched, err)
	}
	res.Clusters1, res.Groups1 = r1.N, r1.Groups
	stage("clustering templates", t0, r1.N, "clusters")

	// Curation.
	if err := announce("curation"); err != nil {
		return nil, err
	}
	t0 = time.Now()
	cp := opt.Curate
	cp.FS = p.rec.SampleRate()
	sp := &curate.Spikes{NC: mp.NearestChans, P: P, Time: ms.Sample, Template: ms.Template,
		Cluster: r1.Labels, Amp: ms.Amplitude, Features: ms.Features}
	res.Curated = curate.Run(sp, &curate.Units{N: r1.N, C: C, P: P, W: r1.Wall}, curate.NewBasis(tm.WPCA, P, prm.NT),
		ch, cp, opt.PCOverwrite)
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
	sum.Warnings = p.Warnings()
	res.Correction = p.CorrectionRule()
	res.Summary = sum
	return res, nil
}

// matchWindows runs the matching pass: every window of the schedule,
// preprocessed and whitened by w (and corrected), peeled by m where the
// window lives; the spikes are appended to dst in file order.
func (p *Pipeline) matchWindows(ctx context.Context, w *linalg.Whitening, m *match.Matcher, dst *match.Spikes) error {
	return p.eachWindow(ctx, "matching", nil, w, func(rw recording.Window, win *compute.Window) error {
		if err := m.MatchWindow(dst, win, rw.OwnStart, rw.Owned()); err != nil {
			return fmt.Errorf("%s: matching window %d: %w", p.rec.Name(), rw.Index, err)
		}
		return nil
	})
}

// transposePC turns U [n][P][C] (PostprocessTemplates) into [n][C][P]
// (match.Templates).
func transposePC(u []float32, n, P, C int) []float32 {
	out := make([]float32, len(u))
	for k := range n {
		for p := range P {
			for c := range C {
				out[(k*C+c)*P+p] = u[(k*P+p)*C+c]
			}
		}
	}
	return out
}

// dropOutside removes the spikes whose time a merge shifted before
// sample 0 or to end or beyond (Kilosort4 keeps them and writes
// spike times outside the recording, which Phy and SpikeInterface
// refuse): their rows go from every per-spike array of r. It returns
// how many were dropped.
func dropOutside(r *curate.Result, end int64) int {
	s := r.Spikes
	keep := make([]bool, s.Len())
	n := 0
	for i, t := range s.Time {
		keep[i] = t >= 0 && t < end
		if !keep[i] {
			n++
		}
	}
	if n == 0 {
		return 0
	}
	m := s.NC * s.P
	var pos, amp, pcf []float32
	for i, k := range keep {
		if k {
			pos = append(pos, r.Positions[2*i:2*i+2]...)
			amp = append(amp, r.Amplitudes[i])
			pcf = append(pcf, r.PCFeatures[i*m:(i+1)*m]...)
		}
	}
	s.Select(keep)
	r.Positions, r.Amplitudes, r.PCFeatures = pos, amp, pcf
	return n
}
