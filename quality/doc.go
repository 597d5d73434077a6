// Package quality provides per-unit quality metrics of a spike sort, with
// SpikeInterface's names and definitions, and automatic labels in
// Bombcell's manner (noise, non_soma, mua, good), computed from plain
// arrays or from a Kilosort/Phy folder.
//
// # Metrics
//
// [Compute] takes an [Input] (spike times and units, amplitudes, templates,
// principal-component features, spike depths, noise levels) and returns a
// [Table] with one row per unit and the columns below, each defined as in
// SpikeInterface 0.105 (spikeinterface.metrics.quality) with its default
// parameters ([DefaultOptions]). A metric SpikeInterface leaves NaN is NaN
// here too; a metric whose input is missing (no PC features, no noise
// levels, no depths) is NaN for every unit. Options.SkipNN leaves out
// nn_hit_rate and nn_miss_rate, by far the slowest, columns and all.
//
//   - num_spikes, firing_rate (spikes / total duration).
//   - presence_ratio: the fraction of 60-s bins (from sample 0, the last
//     partial bin dropped) in which the unit fires more than
//     floor(rate·bin·mean_fr_ratio_thresh) spikes; NaN when the recording is
//     shorter than one bin or the unit has no spike.
//   - snr: |template extremum on the main channel| / noise level of that
//     channel. The main channel is the one of the largest |template| value
//     (SpikeInterface's peak_sign "both", peak_mode "extremum").
//   - isi_violations_ratio, isi_violations_count (Hill: consecutive ISIs
//     below 1.5 ms; count -1 for a unit without spikes).
//   - rp_contamination, rp_violations (Llobet et al.: pairs of spikes at
//     most round(1 ms·fs) samples apart; rp_violations -1 without spikes).
//   - fraction_rpvs (Bombcell's fractionRPVs, not SpikeInterface's: Hill et
//     al.'s contamination from the consecutive inter-spike intervals in
//     [0.1 ms, 2 ms], 1 where no contamination explains them); the labels
//     test it.
//   - sliding_rp_violation (IBL's sliding refractory period: the smallest
//     contamination 0.5 %…35 % rejected with more than 90 % confidence),
//     with SpikeInterface's autocorrelogram bin of int(0.25 ms·fs) samples.
//   - firing_range: 95th minus 5th percentile of the rate in 5-s bins.
//   - amplitude_cv_median, amplitude_cv_range: the coefficient of variation
//     of the amplitudes in bins holding 50 spikes on average.
//   - amplitude_cutoff (100-bin histogram smoothed by a Gaussian of σ = 3
//     bins, truncated to integers as scipy does for an integer histogram),
//     amplitude_median.
//   - drift_ptp, drift_std, drift_mad: the per-60-s median depth (bins with
//     at least 100 spikes) about the unit's overall median depth.
//   - motion_presence (dspk's): the fraction of the probe's 5-µm positions
//     (those it held for 10 s or more, from [Input.Motion]) at which the
//     unit fires at least a fifth of its mean rate; NaN without motion.
//   - sd_ratio: the standard deviation of successive amplitude differences
//     over √2 (spikes within 4 ms of a kept one dropped) against the noise
//     level, corrected for the template's own variance.
//   - isolation_distance, l_ratio, d_prime, nn_hit_rate, nn_miss_rate,
//     silhouette (simplified): from the PC features of the unit's
//     neighbours, the units whose main channel is one of the unit's feature
//     channels, restricted to the unit's feature channels, as SpikeInterface
//     does for a sparse analyzer.
//
// d_prime is reported with the sign that makes the unit's side positive;
// SpikeInterface's sign is that of an SVD vector in scikit-learn's LDA and
// can be either. Every other metric is computed by SpikeInterface's rule,
// without random subsampling (the nearest-neighbour metrics subsample
// deterministically as SpikeInterface does, beyond 10000 spikes).
//
// # Labels
//
// With templates, Compute also derives the template shape metrics that
// SpikeInterface's Bombcell port uses (num_positive_peaks,
// num_negative_peaks, peak_to_trough_duration, waveform_baseline_flatness,
// the peak/trough ratios and widths, exp_decay), as SpikeInterface's
// template_metrics extension does by default: on the main channel's
// template upsampled ×10 by scipy's resample_poly rule, peaks found by
// scipy's find_peaks rule. exp_decay is fitted by a bounded least-squares
// search of its own (scipy's curve_fit stops within about 1e-5 of it) on
// the channels where the template is not exactly zero.
// waveform_baseline_fraction is Bombcell's own baseline measure (the
// template not upsampled, its first 10 of 61 samples against its
// extremum), which the labels test. Every unit is then labelled as
// [LabelOptions] describes; a unit without spikes has
// no waveform and is noise, as in SpikeInterface.
//
// # Files
//
// [WriteTSV] writes a Table beside Kilosort's cluster_KSLabel.tsv, one
// cluster_<metric>.tsv per column as Phy reads cluster properties;
// [ReadSortFolder] loads the Input from a Kilosort or Phy folder so a
// curated folder can be recomputed, with the noise levels and gains of
// its [NoiseFile] and [GainFile] (in µV where the gains are known).
package quality
