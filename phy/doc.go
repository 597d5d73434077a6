// Package phy writes the folders of a run, whole: a detection run as a
// folder that Phy (phylib's TemplateModel, `phy template-gui params.py`)
// and SpikeInterface (read_phy, read_kilosort, read_kilosort_as_analyzer,
// peaks and peak locations) open, a whole sort as Kilosort4's folder, and
// a motion estimate as a drift folder. A [Writer] is the pipeline's
// [pipeline.Sink] for the detection folder, a [SortWriter] writes a
// [pipeline.SortResult], and a [DriftWriter] is the sink of a drift
// folder.
//
// Each template centre that detected spikes becomes one provisional
// cluster, numbered 0…K−1 by shank, depth and x. The per-spike arrays are
// streamed to disk as windows arrive; the cluster templates are built as
// Kilosort4 builds its own (the mean wPCA features of the cluster's
// spikes, accumulated during detection, times wPCA), so nothing reads the
// recording a second time. A run with motion correction leaves its
// estimate in the drift files ([WriteDrift]); the pictures (the drift
// raster, the sort summary, the drift plot) are drawn by package figure.
// Every folder is filled under a temporary name and appears only when
// complete (export.OutputDir). docs/formats.md lists every file, its
// shape and dtype, and which consumer reads it.
package phy
