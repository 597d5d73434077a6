// Package recording provides the readers of multichannel int16
// extracellular recordings (SpikeGLX, Open Ephys binary, headerless raw
// files and in-memory data), Kilosort4's window schedule and a read-ahead
// loader that fills padded windows while the caller works on the previous
// one.
//
// # Readers
//
// Every reader implements [Recording]: samples are int16, interleaved by
// time point (every channel of sample 0, then of sample 1, …) exactly as
// they are stored, and are read on demand with [os.File.ReadAt]; no reader
// loads a whole file.
//
//   - [OpenRaw] reads a headerless little-endian int16 file (.bin, .dat,
//     .raw) given its channel count and rate.
//   - [OpenSpikeGLX] reads a SpikeGLX .bin with the .meta next to it;
//     [ParseMeta] parses a .meta on its own. Gains follow the SpikeGLX
//     reference reader (µV = count · imAiRangeMax / imMaxInt / gain · 1e6)
//     and the geometry comes from ~snsGeomMap or, for older files,
//     ~snsShankMap (see [Meta.Probe]).
//   - [OpenOpenEphys] and [OpenOpenEphysStream] read a continuous stream of
//     an Open Ephys binary recording through its structure.oebin.
//   - [NewMemory] wraps a slice, for tests and synthetic data.
//   - [Open] picks one of the above from a path.
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
