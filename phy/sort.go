package phy

import (
	"fmt"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"

	"dspk/export"
	"dspk/figure"
	"dspk/pipeline"
)

// SortWriter writes the folder of a whole sort ([pipeline.Pipeline.Sort]):
// Kilosort4's files (kilosort4-sort.md §8) that Phy and SpikeInterface's
// read_kilosort_as_analyzer read. Create it with [CreateSort] before the
// sort (an existing folder is refused before any work), call Write with
// the result and Close when done: the folder appears when Write succeeds,
// and Close removes everything otherwise.
type SortWriter struct {
	od   *export.OutputDir
	opt  Options
	done bool
}

// SortKind is the kind of folder a SortWriter writes (recorded in its
// manifest): -overwrite replaces a sort folder only with a sort.
const SortKind = "sort"

// CreateSort reserves the sort folder out (refusing an existing one
// unless opt.Overwrite) and returns the writer that fills it.
func CreateSort(out string, opt Options) (*SortWriter, error) {
	od, err := createDir(out, opt, SortKind)
	if err != nil {
		return nil, err
	}
	return &SortWriter{od: od, opt: opt}, nil
}

// Dir returns the temporary folder the files are written into.
func (w *SortWriter) Dir() string { return w.od.Dir() }

// Close removes the temporary folder unless Write succeeded. It can be
// deferred.
func (w *SortWriter) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	return w.od.Abort()
}

// Write writes every file of the sort r and moves the folder to its final
// name. The per-spike arrays are in time order: spike_times (int64, the
// trough sample), spike_clusters and spike_templates (int32, the final
// unit: the same array, as Kilosort4 writes it), spike_detection_templates
// (int32, the learned template that matched the spike), amplitudes
// (float32, ‖tF‖), spike_positions (float32 [n, 2] µm), pc_features
// (float32 [n, P, NC]) and kept_spikes (bool over the merged spikes before
// deduplication; its true entries are the spikes written). Per unit:
// templates (float32 [N, nt, C], whitened),
// templates_ind (int64 [N, C]), similar_templates (float32 [N, N]),
// pc_feature_ind (uint32 [N, NC]) and the tables cluster_KSLabel.tsv,
// cluster_group.tsv, cluster_ContamPct.tsv and cluster_Amplitude.tsv. Then
// the probe and whitening files, wTEMP/wPCA (universal templates), U.npy
// (the learned templates [N', C, P]), params.py, ops.npy ([sortOps]: it
// loads with Kilosort4's kilosort.io.load_ops) and dspk.json
// (provenance with every stage's time); the channels' noise levels and
// gains ([quality.NoiseFile], [quality.GainFile], measured on the
// recording) and the quality tables ([WriteMetrics]); with motion
// correction the drift files hold the estimate (see [WriteDrift]). Last
// the summary figure,
// sort_summary.png ([SortSummaryFile]). Every file but dspk.json (times,
// host) has the same bytes for the same input, settings and device; the
// stage times are in dspk.json only, not in ops.npy as Kilosort4 puts
// them.
func (w *SortWriter) Write(r *pipeline.SortResult) error {
	if w.done {
		return fmt.Errorf("phy: %s: Write after Close", w.od.Final())
	}
	defer tightenHeap()()
	if err := w.writeArrays(r); err != nil {
		return err
	}
	tables := r.Curated.Tables()
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		if err := writeFile(w.od.Path(name), tables[name]); err != nil {
			return err
		}
	}
	files, dtype, err := writeParamsPy(w.od.Path("params.py"), r.Info.Recording, w.opt.DatPath)
	if err != nil {
		return err
	}
	ops, err := sortOps(r, files, dtype)
	if err != nil {
		return err
	}
	if err := export.WritePickledDictNPY(w.od.Path(OpsFile), ops); err != nil {
		return err
	}
	if err := writeProbeJSON(w.od.Path("probe.json"), r.Info.Probe); err != nil {
		return err
	}
	if err := export.WriteJSON(w.od.Path("dspk.json"), sortProvenance(r, w.opt.Warnings)); err != nil {
		return err
	}
	if err := writeScales(w.od.Dir(), r); err != nil {
		return err
	}
	// The drift files go first: the metrics read the motion estimate.
	if d := DriftOf(r.Info); d != nil {
		if err := WriteDrift(w.od.Dir(), d); err != nil {
			return err
		}
	}
	if err := writeMetrics(w.od.Dir()); err != nil {
		return err
	}
	if err := w.writeExtra(r); err != nil {
		return err
	}
	if err := w.od.Commit(); err != nil {
		return err
	}
	w.done = true
	return nil
}

// writeArrays writes the .npy files of the sort r (see Write).
func (w *SortWriter) writeArrays(r *pipeline.SortResult) error {
	info, cr := r.Info, r.Curated
	s := cr.Spikes
	n, N := s.Len(), cr.Units.N
	pr := info.Probe
	C, P, NC, nt := pr.Len(), s.P, s.NC, info.Detect.NT
	tind := make([]int64, N*C)
	for k := range N {
		for c := range C {
			tind[k*C+c] = int64(c)
		}
	}
	cm, pos, sh := channelArrays(pr)
	dense, inv, err := pipeline.WhiteningMatrices(info.Whitening)
	if err != nil {
		return err
	}
	tm := info.Universal
	u := r.Learned
	for _, f := range []struct {
		name  string
		shape []int
		data  any
	}{
		{"spike_times.npy", []int{n}, s.Time},
		{"spike_clusters.npy", []int{n}, s.Cluster},
		{"spike_templates.npy", []int{n}, s.Cluster},
		{"spike_detection_templates.npy", []int{n}, s.Template},
		{"amplitudes.npy", []int{n}, cr.Amplitudes},
		{"spike_positions.npy", []int{n, 2}, cr.Positions},
		{"pc_features.npy", []int{n, P, NC}, cr.PCFeatures},
		{"kept_spikes.npy", []int{len(cr.Kept)}, cr.Kept},
		{"templates.npy", []int{N, nt, C}, cr.Templates},
		{"templates_ind.npy", []int{N, C}, tind},
		{"similar_templates.npy", []int{N, N}, cr.Similar},
		{"pc_feature_ind.npy", []int{N, NC}, cr.PCFeatureInd},
		{"channel_map.npy", []int{C}, cm},
		{"channel_positions.npy", []int{C, 2}, pos},
		{"channel_shanks.npy", []int{C}, sh},
		{"whitening_mat.npy", []int{C, C}, dense},
		{"whitening_mat_inv.npy", []int{C, C}, inv},
		{"wTEMP.npy", []int{tm.K, tm.NT}, tm.WTEMP},
		{"wPCA.npy", []int{tm.P, tm.NT}, tm.WPCA},
		{"U.npy", []int{u.N, u.C, u.P}, u.U},
	} {
		if err := export.WriteNPYFile(w.od.Path(f.name), f.shape, f.data); err != nil {
			return err
		}
	}
	return nil
}

// sortProvenance returns the dspk.json of the sort r: the run's
// provenance ([pipeline.Provenance]) with the sort's stages, counts and
// settings, and the caller's warnings before the run's.
func sortProvenance(r *pipeline.SortResult, warnings []string) map[string]any {
	info, cr := r.Info, r.Curated
	n, N := cr.Spikes.Len(), cr.Units.N
	prov := pipeline.Provenance(info, r.Summary)
	prov["kind"] = "sort"
	same, inter, coinc := 0, 0, 0
	for _, m := range cr.Merges {
		switch {
		case m.SameWaveform:
			same++
		case m.Interleaved:
			inter++
		case m.Coincident:
			coinc++
		}
	}
	prov["sort"] = map[string]any{
		"stages": r.Stages, "detected": r.Detected, "clusters_first": r.Clusters0, "learned_templates": r.Learned.N,
		"matched": r.Matched, "clusters_final": r.Clusters1, "units": N, "good_units": goodUnits(cr.Good), "spikes": n,
		"merges": len(cr.Merges), "same_waveform_merges": same, "interleaved_merges": inter, "coincident_merges": coinc, "coincident_copies_dropped": cr.Copies, "sparse_units_dropped": cr.Sparse, "amplitude_splits": cr.Splits, "double_counts_dropped": cr.Doubles,
		"dropped_outside_recording": r.Outside, "matching": r.Matching, "clustering": r.Params.Cluster, "curation": r.Curation, "pc_overwrite": r.Params.PCOverwrite,
		"nblocks": info.Config.NBlocks, "drift_correction_used": r.Correction,
	}
	prov["clusters"] = N
	prov["warnings"] = append(append([]string{}, warnings...), r.Summary.Warnings...)
	return prov
}

// goodUnits returns the number of true entries of good.
func goodUnits(good []bool) int {
	n := 0
	for _, g := range good {
		if g {
			n++
		}
	}
	return n
}

// writeExtra writes the files of the sort r after its metrics: the
// summary figure and the caller's files (Options.Extra).
func (w *SortWriter) writeExtra(r *pipeline.SortResult) error {
	if err := figure.WriteSortSummary(w.od.Path(SortSummaryFile), sortSummary(r)); err != nil {
		return err
	}
	if w.opt.Extra != nil {
		return w.opt.Extra(w.od.Dir())
	}
	return nil
}

// heapLimit holds what tightenHeap needs across concurrent writes in one
// process: the number of writes under way and the limit to restore when
// the last ends.
var heapLimit struct {
	sync.Mutex
	writers int
	saved   int64
}

// tightenHeap lowers the runtime's soft memory limit, for the writing of a
// sort's folder, to twice the heap in use after a collection (at least
// 512 MiB more), and returns what restores the limit. The sort's passes
// leave the runtime holding memory the writing does not need, and without
// a limit the heap grows on top of it (docs/perf-sort.md, "Host memory
// while the folder is written"). A tighter limit already set (GOMEMLIMIT)
// is kept; the first of concurrent writes sets the limit and the last
// restores it.
func tightenHeap() (restore func()) {
	heapLimit.Lock()
	defer heapLimit.Unlock()
	heapLimit.writers++
	if heapLimit.writers == 1 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		inUse := ms.Sys - ms.HeapReleased - (ms.HeapSys - ms.HeapAlloc)
		limit := int64(inUse + max(ms.HeapAlloc, 512<<20))
		heapLimit.saved = debug.SetMemoryLimit(-1)
		if heapLimit.saved > limit {
			debug.SetMemoryLimit(limit)
		}
	}
	return func() {
		heapLimit.Lock()
		defer heapLimit.Unlock()
		if heapLimit.writers--; heapLimit.writers == 0 {
			debug.SetMemoryLimit(heapLimit.saved)
		}
	}
}
