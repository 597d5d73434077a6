// Package batch provides batches of dspk runs over many recordings: it
// finds the recordings under folders and plans one row per probe stream
// (a detection or a whole sort, or for long recordings a global step,
// time shards and a merge), writes and reads the plan file (plan.json),
// runs the rows on the devices of this host (one worker process per
// device, rows back to back, resumable), writes SLURM job arrays for
// them and reports each row's state.
//
// A plan holds typed [Options] (the pipeline's configuration, the sort's
// settings, how the recordings are opened); plan.json stores them as the
// flags of dspk's batch plan, in name order. Every folder a row writes
// holds batch.json, the row's key, so that a row whose inputs and
// settings are unchanged is not run again.
package batch
