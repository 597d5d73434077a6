// Package phy writes the folders of dspk's runs, whole: the detect folder
// of a detection, which Phy (phylib's TemplateModel, `phy template-gui
// params.py`) and SpikeInterface (read_phy, read_kilosort,
// read_kilosort_as_analyzer, peaks and peak locations) open; the sort
// folder of a whole sort, with Kilosort4's files; and the drift folder of
// a motion estimate. It also writes and reads the files of runs split in
// time, and draws each folder's pictures through package figure.
//
// # Folders
//
//   - A [Writer] ([Create]) is the [pipeline.Sink] of a detection. Each
//     template centre that detected spikes becomes one provisional
//     cluster, numbered 0…K−1 by shank, depth and x. The per-spike arrays
//     are streamed to disk as windows arrive; the cluster templates are
//     built as Kilosort4 builds its own (the mean wPCA features of the
//     cluster's spikes, accumulated during detection, times wPCA), so
//     nothing reads the recording a second time. With [Options.Raster] it
//     draws the folder's drift raster ([RasterFile], from the spikes as
//     [ReadRaster] reads them).
//   - A [SortWriter] ([CreateSort]) writes a [pipeline.SortResult]:
//     Kilosort4's per-spike and per-unit arrays and tables, the probe,
//     whitening and template files, params.py, ops.npy, dspk.json and the
//     summary figure ([SortSummaryFile]).
//   - A [DriftWriter] ([CreateDrift]) is the Sink of a drift run: the
//     drift files, the displacement plot ([DriftPlotFile]) and the raster
//     of the detection on corrected windows ([DriftRasterFile]).
//
// A run with motion correction (nblocks > 0) leaves its estimate in the
// drift files of its folder, whatever its kind ([DriftFile],
// [DriftTimesFile], [DriftDepthsFile]; [WriteDrift], [ReadDrift],
// [HasDrift]).
//
// Every folder is reserved before the run (an existing one is refused at
// once unless Options.Overwrite, which replaces only a folder of the same
// kind: [Kind], [SortKind], [DriftKind]), filled under a temporary name,
// and appears only when complete (export.OutputDir); Close removes what a
// failed or cancelled run left. docs/formats.md lists every file, its
// shape and dtype, and which consumer reads it.
//
// # Runs split in time
//
// The steps of a detection or a sort split in time (package batch) pass
// their results on through folders. [SaveGlobal] and [LoadGlobal] hold a
// detection's global step (the whitening operator and the universal
// templates); a shard is a detect folder of its windows, whose spikes the
// merge replays in file order through a Writer ([OpenShard],
// [ShardReader], [ReadShardSummary]), giving the folder of one run.
// [SaveSortGlobal] and [LoadSortGlobal] hold a sort's global step (a
// [pipeline.SortGlobal]), and [SaveSortShard] and [LoadSortShards] the
// matched spikes of its shards.
package phy
