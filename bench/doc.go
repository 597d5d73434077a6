// Package bench provides the measurements of dspk bench: each op (window
// reading, the whitening statistic, preprocessing, detection, the
// trailing mean, motion, the whole sort by stage, the window loader, dspk
// detect on a whole file) timed on a device with the pipeline's own code
// and reported as a [Row], beside a floor where the op has one: its work
// at the device's theoretical peak rates ([compute.Device.Peaks]), or a
// copy of the same bytes on the same device.
//
// [Run] measures the ops that [Options] names and hands each result to
// Options.Row as soon as it is measured; the GPU detection stages come
// as one [DetectStages] table. The caller prints them: as a table, or
// as JSON ([Row.MarshalJSON]).
package bench
