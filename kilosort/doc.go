// Package kilosort defines, once, the Kilosort4 settings dspk uses: one
// typed struct, [Settings], whose fields carry Kilosort4's names (the JSON
// tags are the keys of Kilosort4's DEFAULT_SETTINGS and run_kilosort
// arguments, kilosort4.md §13) and meanings, with Kilosort4's defaults from
// [Defaults], and the values Kilosort4 hard-codes ([HighpassOrder],
// [WhiteningEps], [MaxClips]).
//
// Every package that needs one of these values takes it from here:
// detect.Params and pipeline.Config embed Settings, preprocess.Params
// embeds it, and no other package restates a default.
//
// One name, one meaning: Kilosort4's code calls the batch size ops["NT"]
// and the template length nt; dspk calls the batch size BatchSize
// (batch_size) and keeps NT for nt alone (61: the template length, which
// is also the context padded on each side of a window).
package kilosort
