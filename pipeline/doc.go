// Package pipeline runs Kilosort4's passes over one recording on one
// device, and the runs made of them: the detection of dspk detect, the
// motion estimate and corrected detection of dspk drift, and the whole
// sort of dspk sort (universal detection, the first clustering,
// learned-template matching, the final clustering and curation). It
// reads windows ahead of the computation and writes no files: a
// detection's results go to a [Sink] (the folders of package phy), and a
// sort returns a [SortResult], which phy writes.
//
// # Pipelines and passes
//
// [New] (or [Prepare], the host side, then [Plan.New] on a device) builds
// a [Pipeline] for a recording, a probe and a [Config]: the window
// schedule, the preprocessing of its windows, the window the passes work
// on and the loader's buffers. Every pass is the same window loop: each
// window is read ahead into host memory of the device (pinned on a GPU),
// loaded into the pipeline's compute.Window (uploaded once on a GPU),
// preprocessed and whitened where it lives, corrected for motion where
// the run has an estimate, and handed to the pass's op; only what a host
// stage needs comes back. The loop has no device branch: each op picks
// its back end from the device it was built for.
//
// The passes can be run one by one: [Pipeline.Whitening] (the second
// moment of the statistic windows and Kilosort4's local ZCA whitening),
// [Pipeline.LearnTemplates] (the universal templates wTEMP and the
// feature basis wPCA from isolated peaks), [Pipeline.EstimateMotion]
// (the motion pass: a detection on uncorrected windows registered by a
// motion.Estimator), [Pipeline.Detect] and [Pipeline.DetectWindows]
// (universal detection) and [Pipeline.MatchWindows] (learned-template
// matching).
//
// # Runs
//
// [Pipeline.Run] is a detection: whitening, universal templates (learned,
// or given in [RunOptions]), with nblocks > 0 the motion pass and the
// templates learned again from corrected windows, then detection over
// every window, whose spikes go to the Sink in file order ([Sink.Begin]
// with the [RunInfo], [Sink.Window] per window, [Sink.End] with the
// [Summary]). dspk drift is such a run with [DefaultDriftConfig].
//
// [Pipeline.Sort] is the whole sort. It is three steps, which may run in
// separate processes with the same result: [Pipeline.SortGlobal] (every
// stage that needs the whole recording, up to and including the learned
// templates, returned as a [SortGlobal]), [Pipeline.MatchWindows] over any
// range of windows, and [Pipeline.SortFinish] (the final clustering,
// curation and the removal of spikes shifted outside the recording, from
// the matched spikes of every window). A detection splits the same way:
// [Pipeline.Global] returns a [Global] (the whitening and universal
// templates) and [Pipeline.RunWindows] detects any range of windows with
// it. A window's spikes depend only on its samples and these global
// results, so the ranges of a partition of the windows give, together,
// the spikes of one pass.
//
// A Pipeline holds only what is fixed for its recording, probe,
// configuration and device. A run's state (its whitening, templates,
// motion correction and warnings) passes between its passes as values
// and comes back in its results ([RunInfo], [Summary], [Global],
// [SortGlobal], [SortResult]).
//
// # Configuration
//
// A [Config] holds Kilosort4's settings (package kilosort, under
// Kilosort4's names) and dspk's own; [SortOptions] hold the settings of
// the stages after detection. The library's defaults are the commands':
// [DefaultConfig] is dspk detect's (no motion correction),
// [DefaultDriftConfig] dspk drift's (nblocks 1, Kilosort4's kriging), and
// [DefaultSortConfig] with [DefaultSortOptions] dspk sort's (nblocks 1,
// the correction rule [CorrectionAuto]). Options are validated once,
// before any work ([SortOptions.Validate], [Config.CheckProbe],
// [SortOptions.CheckProbe]), and never rewritten: what a stage also needs
// from the configuration or the recording is derived beside them
// ([SortResult.Matching], [SortResult.Curation]).
//
// Memory is bounded by the windows in flight, never by the length of the
// recording, but for the spike tables a sort holds between its stages
// (detection's until the first clustering, then the matching's).
package pipeline
