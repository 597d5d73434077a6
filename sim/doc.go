// Package sim provides synthetic Neuropixels-like recordings with ground
// truth: units with biphasic waveforms at known positions firing as
// refractory Poisson (dead-time renewal) processes, spatially correlated
// noise, common-mode noise, per-channel offsets, optional rigid drift and a
// SpikeGLX sync channel, generated deterministically from a seed.
//
// # Model
//
// A recording is the sum, per site c and sample t, of
//
//   - offset_c: a DC offset drawn uniformly from ±OffsetMax counts;
//   - common mode: CommonModeSine·sin(2π·CommonModeHz·t/fs + φ) plus a
//     broadband shared white component of SD CommonModeSD (identical on
//     every site, so a common average reference removes it);
//   - local noise: white Gaussian noise smoothed across sites with the
//     kernel exp(−d²/(2σ²)), σ = NoiseCorrUm, cut at 2.5σ and normalised so
//     that each site keeps unit variance, then coloured in time by
//     (s(t) + a·s(t−1))/√(1+a²) with a = 0.5 (lag-1 autocorrelation 0.4)
//     and scaled to NoiseSD counts;
//   - spikes: for each spike of unit u with trough at sample t₀,
//     scale_u · f(d_uc) · w_u(t − t₀), where w_u is the unit's temporal
//     waveform (trough −1 at index [Truth.TroughIndex]), f(d) = (1 +
//     d²/25²)^−1.5 is the footprint, and d the 3-D distance in µm from the
//     unit (a few µm off the probe plane) to site c. scale_u makes the
//     trough on the unit's best site at time 0 equal to
//     −UnitAmplitude·NoiseSD counts.
//
// The sum is rounded to the nearest integer (halves away from zero) and
// saturated to int16. Rows of the file that are not sites hold 0, except
// the last row of a file with more rows than sites, which holds SpikeGLX's
// sync word: a 1-Hz square wave of 0 and 64, high during the first half of
// each second.
//
// # Units
//
// Each unit is placed on a random shank, with x uniform over the shank's
// site columns ±10 µm, y uniform over the shank's span, and z (its distance
// from the probe plane) uniform in 2–10 µm. Peak amplitudes are
// log-uniform between AmplitudeMin and AmplitudeMax noise SDs (5–25 by
// default: about 43 % of units below 10 SD); rates are uniform between
// RateMin and RateMax Hz (3–15). Each unit takes one of four waveform
// families ([Shape]): narrow (fast-spiking, trough-to-peak ≈ 0.3 ms),
// regular (≈ 0.5 ms), wide (≈ 0.75 ms) and triphasic (a small positive
// phase before the trough), with widths jittered by ±10 %.
//
// Spike trains are dead-time renewal processes: each interval is the
// refractory period (rounded up to whole samples) plus an exponential
// interval chosen so that the mean rate is the unit's rate. Troughs lie in
// [TroughIndex, Samples−(WaveformSamples−TroughIndex)], so every spike is
// complete inside the recording. With drift, every unit moves up by
// DriftUmPerS µm per second ([Truth.SpikeY]); unit positions in [Truth] are
// those at time 0.
//
// # Harder models and presets
//
// Config fields that default to zero add what real probes show (see
// docs/sim.md): breathing-like sinusoidal motion, sudden steps and
// non-rigid motion besides the linear drift, with the true displacement
// field and every spike's position in [Truth] ([Motion], files
// motion.npy and spike_positions.npy); units 10–80 µm from the probe
// whose distance is limited by their amplitude; pairs of nearby units with
// similar waveforms; and bursts whose spikes shrink. [Preset] returns the
// ladder-* benchmark configurations built from them.
//
// # Determinism and streaming
//
// The output is a pure function of the [Config]: the recording is made in
// chunks of [ChunkSamples] samples whose random numbers come from
// streams seeded by (Seed, chunk index), so chunks are generated in parallel
// and in any order with byte-identical results whatever GOMAXPROCS is.
// Memory is bounded by the chunks in flight; only the spike train (a few
// bytes per spike) is held for the whole recording.
//
// [Generate] returns a [Recording], which implements
// [dspk/recording.Recording] and [dspk/recording.Prober] with random access,
// and [io.Reader], [io.Seeker] and [io.WriterTo] over the little-endian
// int16 file bytes.
// [WriteSpikeGLX] writes a .bin and .meta pair; [Truth.WriteDir] and
// [ReadTruthDir] store the ground truth as .npy files and truth.json.
// [WriteFolder] writes the folder of dspk simulate (the pair, the truth
// and dspk.json) whole or not at all; [Overrides] applies its flags onto
// a preset.
package sim
