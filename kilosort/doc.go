// Package kilosort defines, once, the Kilosort4 settings dspk uses and
// their defaults: typed structs whose fields carry Kilosort4's names (the
// JSON tags are the keys of Kilosort4's DEFAULT_SETTINGS and run_kilosort
// arguments, kilosort4.md §13) and meanings — [Settings] of the detection
// front end ([Defaults]), [Motion] ([MotionDefaults]), [Matching]
// ([MatchingDefaults]), [Curation] ([CurationDefaults]) and [Clustering]
// ([ClusteringDefaults]) — and the values Kilosort4 hard-codes
// ([HighpassOrder], [WhiteningEps], [MaxClips], [MergeRThresh], the
// clustering's constants).
//
// Every package that needs one of these values takes it from here:
// detect.Params, preprocess.Params and pipeline.Config embed Settings,
// pipeline.Config and motion.Params embed Motion, match.Params embeds
// Matching, cluster.Params embeds Clustering, curate.DefaultSettings takes
// Curation's defaults, and no other package restates a default.
//
// One name, one meaning: Kilosort4's code calls the batch size ops["NT"]
// and the template length nt; dspk calls the batch size BatchSize
// (batch_size) and keeps NT for nt alone (61: the template length, which
// is also the context padded on each side of a window).
package kilosort
