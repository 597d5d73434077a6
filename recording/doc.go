// Package recording provides the readers of multichannel
// extracellular recordings (SpikeGLX, Open Ephys binary, SpikeInterface
// binary folders, headerless raw files and in-memory data), Kilosort4's
// window schedule and a read-ahead loader that fills padded windows
// while the caller works on the previous one.
//
// # Readers
//
// Every reader implements [Recording]: samples are int16, interleaved by
// time point (every channel of sample 0, then of sample 1, …) exactly as
// they are stored, and are read on demand with [os.File.ReadAt]; no reader
// loads a whole file.
//
//   - [OpenRaw] reads a headerless little-endian int16 file (.bin, .dat,
//     .raw) given its channel count and rate; [OpenRawType] also uint16
//     (centred on 32768) and float32 (scaled) files, converted to int16
//     counts on reading.
//   - [OpenSpikeGLX] reads a SpikeGLX .bin with the .meta next to it;
//     [ParseMeta] parses a .meta on its own. Gains follow the SpikeGLX
//     reference reader (µV = count · imAiRangeMax / imMaxInt / gain · 1e6)
//     and the geometry comes from ~snsGeomMap or, for older files,
//     ~snsShankMap (see [Meta.Probe]). [OpenSpikeGLXLenient] opens a .bin
//     whose size disagrees with fileSizeBytes, with a warning ([Warner]).
//   - [OpenOpenEphys] and [OpenOpenEphysStream] read a continuous stream of
//     an Open Ephys binary recording found under a session, Record Node,
//     experiment or recording folder ([FindOpenEphysStreams]) and chosen by
//     name ([SelectOpenEphysStream]), with the first sample number of
//     sample_numbers.npy and the Neuropixels geometry of settings.xml
//     ([ParseOpenEphysSettings]).
//   - [OpenSIFolder] reads a folder SpikeInterface saved
//     (recording.save(format="binary")): binary.json, its
//     traces_cached_seg<N>.raw segments read as one recording, gains and
//     the probe of probegroup.json.
//   - [NewConcat] reads several recordings as one; [OpenFiles] uses it for
//     the files of a SpikeGLX run ([SortRunFiles]). [FindSpikeGLXRun]
//     finds the AP-band files of a SpikeGLX run folder's one probe.
//   - [NewMemory] wraps a slice, for tests and synthetic data.
//   - [Open] picks one of the above from a path; [CheckSpikeBand] refuses
//     LF-band streams for detection.
//
// Bad data (a file whose size does not fit its channel count, a meta that
// contradicts its .bin, a read past the end) gives an error that names the
// file and, where there is one, the line, window or sample. Misuse (a
// destination slice of the wrong length) panics with a message starting
// "recording:".
//
// # Windows
//
// A [Schedule] splits a recording into Kilosort4's windows of NT owned
// samples with Pad samples of context on each side, repeating the edge
// sample beyond the scheduled range. [ReadWindow] fills one padded window;
// a [Loader] fills them ahead of the caller on its own goroutine, with a
// bounded number of buffers that the caller may supply (for example pinned
// host memory for a GPU).
package recording
