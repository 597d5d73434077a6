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
//   - [ReadProbeInterface] reads a probeinterface ProbeGroup JSON file.
//   - [ReadKilosortJSON] reads Kilosort's flat probe JSON; [WriteKilosortJSON]
//     writes it.
//   - [Load] picks one of the above by looking at its argument.
//
// [Probe.ForFile] fits a probe to a binary file's channel count, [Nearest]
// and [KNearest] build nearest-neighbour tables with a deterministic
// tie-break (distance, then index), and [Probe.Summary] describes a probe
// in one line.
//
// Parsers return errors that name the file; they never panic on bad input,
// and every probe they return passes [Probe.Validate].
package probe
