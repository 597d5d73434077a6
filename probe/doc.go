// Package probe provides the geometry of an extracellular probe (site
// positions, shanks and the map from sites to rows of the binary file),
// Neuropixels presets, readers and writers for probeinterface and Kilosort
// probe JSON, and nearest-neighbour tables over site positions.
//
// Positions are in µm with x across the shank and y along it (depth). A
// [Probe] lists only the sites that are used, in the order the algorithms see
// them; site i is stored in row ChanMap[i] of a file with NChanFile
// interleaved channels.
//
// # Sources
//
//   - [NP1] and [NP2] are the default Neuropixels 1.0 and 2.0 (single-shank,
//     bank 0) layouts; see [Preset].
//   - [ReadProbeInterface] reads a probeinterface ProbeGroup JSON file;
//     [ReadProbeGroup] reads all of its probes as one, as SpikeInterface
//     stores a recording's probe group.
//   - [ReadKilosortJSON] reads Kilosort's flat probe JSON; [WriteKilosortJSON]
//     writes it.
//   - [ParseKilosortMat] reads a Kilosort 1–3 channel map saved by MATLAB
//     (a level-5 MAT-file, zlib-compressed elements included).
//   - [Load] picks one of the above by looking at its argument (FILE:N for
//     probe N of a probeinterface group).
//
// [Probe.ForFile] fits a probe to a binary file's channel count (a probe
// may use fewer rows than the file has), [Nearest]
// and [KNearest] build nearest-neighbour tables with a deterministic
// tie-break (distance, then index), and [Probe.Summary] describes a probe
// in one line.
//
// Parsers return errors that name the file; they never panic on bad input,
// and every probe they return passes [Probe.Validate].
package probe
