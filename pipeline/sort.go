package pipeline

import (
	"context"
	"fmt"
	"time"

	"dspk/cluster"
	"dspk/compute"
	"dspk/curate"
	"dspk/kilosort"
	"dspk/match"
	"dspk/recording"
)

// MinSortSpikes is the fewest spikes the first detection must find for a
// sort: Kilosort4's k-means++ initialisation draws 100 candidates per
// round and cannot start from fewer.
const MinSortSpikes = 100

// SortOptions configures [Pipeline.Sort]: the settings of the stages
// after detection. Those the stages also need from the configuration and
// the recording (nt, nt0min, nearest_chans, the sample rate) are not
// options: the sort takes them from there ([SortResult.Matching],
// [SortResult.Curation]).
type SortOptions struct {
	// Match holds Kilosort4's matching settings, Th_learned and
	// max_peels.
	Match kilosort.Matching
	// Cluster holds the clustering settings (cluster_downsampling,
	// max_cluster_subset, cluster_neighbors, cluster_init_seed, x_centers).
	Cluster cluster.Params
	// Curate holds the curation settings: acg_threshold, ccg_threshold,
	// duplicate_spike_ms, position_limit and dspk's same-waveform merge.
	Curate curate.Settings
	// PCOverwrite reproduces Kilosort4's "last cluster sharing a template
	// wins" choice of PC-feature channels (curate.PCFeatures).
	PCOverwrite bool
	// Device names the device, for the provenance.
	Device string
	// Stage, if set, is called when a stage that is not a window pass
	// starts ("clustering spikes", "clustering templates", "curation").
	Stage func(name string)
}

// DefaultSortOptions returns the options of dspk sort with no flags:
// Kilosort4's matching, clustering and curation defaults
// ([kilosort.MatchingDefaults], [cluster.DefaultParams],
// [curate.DefaultSettings]) with dspk's own choices: the same-waveform
// merge at [curate.SameWaveformDefault] (Kilosort4 has none) and
// PC-feature channels of each spike's own cluster (PCOverwrite false).
func DefaultSortOptions() SortOptions {
	return SortOptions{Match: kilosort.MatchingDefaults(), Cluster: cluster.DefaultParams(), Curate: curate.DefaultSettings()}
}

// Validate reports the first option of o that cannot work, naming it,
// before any work is done.
func (o SortOptions) Validate() error {
	if err := match.ValidateSettings(o.Match); err != nil {
		return err
	}
	c := o.Cluster
	if err := c.Validate(); err != nil {
		return err
	}
	return o.Curate.Validate()
}

// sortParams are the settings of a sort's matching and curation, derived
// once from its options, the configuration and the recording.
type sortParams struct {
	// match is the options' Th_learned and max_peels with nt, nt0min and
	// nearest_chans of the configuration, the last at most the probe's
	// channels as detection takes it (a tetrode's 4 with the default 10;
	// a larger -nearest_chans given on the command line is refused
	// there).
	match match.Params
	// curate is the options' curation settings at the recording's rate.
	curate curate.Params
}

// sortParams validates opt and derives the sort's settings from it.
func (p *Pipeline) sortParams(opt SortOptions) (sortParams, error) {
	if err := opt.Validate(); err != nil {
		return sortParams{}, err
	}
	prm := p.DetectParams()
	return sortParams{
		match:  match.Params{Matching: opt.Match, NT: prm.NT, NT0Min: prm.NT0Min, NearestChans: min(p.cfg.NearestChans, p.probe.Len())},
		curate: curate.Params{FS: p.rec.SampleRate(), Settings: opt.Curate},
	}, nil
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
	// the clusters of the first clustering, Matched the spikes of
	// learned-template matching and Clusters1 the clusters of the final
	// clustering (before merges).
	Detected, Clusters0, Matched, Clusters1 int
	// Groups0 and Groups1 describe the groups of the first and the final
	// clustering (their spikes and feature channels).
	Groups0, Groups1 []cluster.Group
	// Learned are the learned templates U [N'][C][P] (the first
	// clustering's, post-processed) that the matching used. The universal
	// templates are Info.Universal and the final units' templates
	// Curated.Units (dense: Curated.Templates, templates.npy).
	Learned match.Templates
	// Channels gives each learned template's feature channels (iCC at its
	// best channel) and the sites' positions.
	Channels *curate.Channels
	// Curated holds the final spikes and units with every array of the
	// folder.
	Curated *curate.Result
	// Outside is the number of spikes whose merge-shifted time fell
	// outside the recording and were dropped.
	Outside int
	// Params are the options of the sort; Matching and Curation the
	// settings matching and curation ran with (Params' own with those of
	// the configuration and the recording).
	Params   SortOptions
	Matching match.Params
	Curation curate.Params
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
// It is [Pipeline.SortGlobal], [Pipeline.MatchWindows] over every window
// and [Pipeline.SortFinish]; a sort split in time runs the three in
// separate processes with the same result.
//
// Matching and both clusterings run on p's device (match's and cluster's
// CUDA back ends on a GPU: the window stays on the device and only the
// spikes come back). Host memory holds the spike table of the detection (centre and NC·P
// features per spike) until the first clustering, then that of the
// matching.
func (p *Pipeline) Sort(ctx context.Context, opt SortOptions) (*SortResult, error) {
	start := time.Now()
	sp, err := p.sortParams(opt)
	if err != nil {
		return nil, err
	}
	g, err := p.sortGlobal(ctx, opt)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	ms, ch, err := p.matchRange(ctx, g, sp, 0, p.sched.Windows)
	if err != nil {
		return nil, err
	}
	return p.sortFinish(ctx, g, opt, sp, ms, time.Since(t0).Seconds(), start, ch)
}

// matchWindows runs the matching pass ps: its windows preprocessed,
// whitened and corrected as it says, peeled by m where the window lives;
// the spikes are appended to dst in file order.
func (p *Pipeline) matchWindows(ctx context.Context, ps windowPass, m *match.Matcher, dst *match.Spikes) error {
	return p.eachWindow(ctx, ps, func(rw recording.Window, win *compute.Window) error {
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
// refuse): their rows go from every per-spike array of r, and r.Kept
// no longer marks them, so that its true entries remain the spikes
// kept. It returns how many were dropped.
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
	// The i-th true entry of Kept is spike i before the drop.
	i := 0
	for j, k := range r.Kept {
		if k {
			r.Kept[j] = keep[i]
			i++
		}
	}
	return n
}
