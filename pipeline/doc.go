// Package pipeline runs Kilosort4's passes over a recording: the
// whitening statistic (pass 1), universal-template learning (pass 2) and
// spike detection over every window (pass 3), reading windows ahead of
// the computation and handing results to the caller in file order.
//
// Memory is bounded by the windows in flight, never by the length of the
// recording.
package pipeline
