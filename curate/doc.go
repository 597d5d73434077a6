// Package curate turns matched spikes and cluster templates into final
// units as Kilosort4 does: correlogram metrics, merges, duplicate removal,
// contamination and labels, and the per-spike and per-unit arrays of a
// sort folder (positions, amplitudes, template similarity, PC features).
//
// Every function here is plain Go on the host. Kilosort4 spends about
// 0.8 s merging and 2.3 s exporting a 10-minute Neuropixels sort, and the
// arithmetic behind both is below a GFLOP (shared/docs/kilosort4-sort.md
// §10: 141 autocorrelograms, about 155 base evaluations of N·C·P² each,
// a few hundred candidate correlograms, similarity over 123 lags). On the
// host each stage takes milliseconds to a few tenths of a second for
// 600 000 spikes (docs/curate.md §4), the cost of moving the spike table
// to a device and back, so there is no CUDA back end.
//
// The stages follow kilosort4-sort.md §7 and §8 and are exact given their
// inputs, with these deliberate differences (docs/curate.md lists them):
//   - before Kilosort4's correlogram merges, units whose templates are one
//     waveform (similarity ≥ [Settings.SameWaveform], norms within 10 %)
//     merge without the correlogram test ([Merge]; 0 turns it off);
//   - a correlogram of trains spanning no time (T = 0) gives metrics that
//     fail every test ([Metrics.Valid] false) instead of Kilosort's
//     ZeroDivisionError;
//   - spikes are re-sorted after merging by a stable (time, template,
//     index) order instead of numpy's unstable argsort, and base and
//     candidate orders break ties the way a stable sort reversed does;
//   - a spike whose position weights are all zero gets its template's best
//     channel as position instead of Kilosort's NaN;
//   - [PCFeatures] can give each spike its own cluster's channels
//     (kilosortOverwrite false, the default of [Run]) or reproduce
//     Kilosort's "last cluster sharing a template wins" (true).
//
// Layouts are flat row-major slices: templates Wall [N, C, P], spike
// features tF [n, NC, P], wPCA [P, NT] (as [dspk/detect.Templates.WPCA]).
// Times are integer samples; the correlograms take seconds (samples/fs in
// float64), as Kilosort's do.
package curate
