// Package pipeline runs Kilosort4's passes over a recording: the
// whitening statistic (pass 1), universal-template learning (pass 2) and
// spike detection over every window (pass 3), reading windows ahead of
// the computation and handing each window's spikes, in file order, to a
// [Sink]. The pipeline writes no files: the Phy / SpikeInterface folder
// is the sink of package phy.
//
// Memory is bounded by the windows in flight, never by the length of the
// recording.
package pipeline
