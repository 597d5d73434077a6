// Package stream provides live matching: the units of an earlier dspk
// sort (its learned templates, whitening and channels, read by [Load])
// matched on a recording's frames as they arrive ([Run]), each spike
// handed out with its unit as soon as the samples after its trough that
// its template needs are in, and the latency of each recorded.
//
// A stream cannot look ahead, so it preprocesses causally: a running
// offset per channel where the sort removes each window's mean, the common
// average reference, and the sort's Butterworth high-pass run forward only
// where the sort runs it forward and back; then the sort's whitening. The
// matching is the sort's (package match, the same templates and
// threshold) on blocks of at least [Options.MinBlock] new samples, each
// with a template's length of context on either side, as the sort's
// windows have. A learned template's spikes go to the unit that most of
// its spikes joined in the sort; two spikes of one unit within twice the
// sort's duplicate window are one, kept on the stronger template, as the
// sort's coincident rule keeps it.
//
// Sources ([OpenSource]): a file, followed as it grows; standard input;
// a TCP connection; each optionally paced at the sample rate, so that a
// finished recording replays as an acquisition system delivers it.
// [Folder] writes, at the end, a folder that Phy and SpikeInterface open;
// [Sender] sends each spike as it is known as a fixed binary record to a
// TCP or UDP peer (a closed-loop program), which [ReadRecords] reads.
// [Serve] is the command dspk stream: all of these together.
package stream
