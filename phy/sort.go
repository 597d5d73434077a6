package phy

import (
	"fmt"
	"maps"
	"math"
	"slices"

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
// deduplication). Per unit: templates (float32 [N, nt, C], whitened),
// templates_ind (int64 [N, C]), similar_templates (float32 [N, N]),
// pc_feature_ind (uint32 [N, NC]) and the tables cluster_KSLabel.tsv,
// cluster_group.tsv, cluster_ContamPct.tsv and cluster_Amplitude.tsv. Then
// the probe and whitening files, wTEMP/wPCA (universal templates), U.npy
// (the learned templates [N', C, P]), params.py, ops.npy and dspk.json
// (provenance with every stage's time); with motion correction ops.npy
// holds dshift, yblk and mean_drift, and the drift files hold the estimate
// (see [WriteDrift]). Last the summary figure, sort_summary.png
// ([SortSummaryFile]). Every file but dspk.json (times, host) has the
// same bytes for the same input, settings and device; the stage times are
// in dspk.json only, not in ops.npy as Kilosort4 puts them.
func (w *SortWriter) Write(r *pipeline.SortResult) error {
	if w.done {
		return fmt.Errorf("phy: %s: Write after Close", w.od.Final())
	}
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
	tables := cr.Tables()
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		if err := writeFile(w.od.Path(name), tables[name]); err != nil {
			return err
		}
	}
	rec := info.Recording
	files, dtype, err := writeParamsPy(w.od.Path("params.py"), rec, w.opt.DatPath)
	if err != nil {
		return err
	}
	ops, err := opsDict(info, files, dtype)
	if err != nil {
		return err
	}
	good := 0
	for _, g := range cr.Good {
		if g {
			good++
		}
	}
	mp, cp, clp := r.Matching, r.Curation, r.Params.Cluster
	for k, v := range map[string]any{
		"Th_learned": mp.ThLearned, "max_peels": int64(mp.MaxPeels),
		"acg_threshold": cp.ACGThreshold, "ccg_threshold": cp.CCGThreshold, "duplicate_spike_ms": cp.DuplicateSpikeMs,
		"position_limit": cp.PositionLimit, "cluster_downsampling": int64(clp.ClusterDownsampling),
		"max_cluster_subset": int64(clp.MaxClusterSubset), "cluster_neighbors": int64(clp.ClusterNeighbors),
		"cluster_init_seed": clp.ClusterInitSeed, "nblocks": int64(info.Config.NBlocks),
		"n_units_total": int64(N), "n_units_good": int64(good), "n_spikes": int64(n),
	} {
		ops[k] = v
	}
	if err := export.WritePickledDictNPY(w.od.Path(OpsFile), ops); err != nil {
		return err
	}
	if err := writeProbeJSON(w.od.Path("probe.json"), pr); err != nil {
		return err
	}
	prov := pipeline.Provenance(info, r.Summary)
	prov["kind"] = "sort"
	same := 0
	for _, m := range cr.Merges {
		if m.SameWaveform {
			same++
		}
	}
	prov["sort"] = map[string]any{
		"stages": r.Stages, "detected": r.Detected, "clusters_first": r.Clusters0, "learned_templates": r.Learned.N,
		"matched": r.Matched, "clusters_final": r.Clusters1, "units": N, "good_units": good, "spikes": n,
		"merges": len(cr.Merges), "same_waveform_merges": same, "dropped_outside_recording": r.Outside,
		"matching": mp, "clustering": clp, "curation": cp, "pc_overwrite": r.Params.PCOverwrite,
		"nblocks": info.Config.NBlocks, "drift_correction_used": r.Correction,
	}
	if m := info.Motion; m != nil {
		ops["dshift"], ops["yblk"] = m.Dshift, m.Yblk
		mean := 0.0
		for w := range m.Windows {
			mean += math.Abs(m.Dshift[w*m.Blocks])
		}
		ops["mean_drift"] = mean / float64(max(1, m.Windows))
	}
	prov["clusters"] = N
	prov["warnings"] = append(append([]string{}, w.opt.Warnings...), r.Summary.Warnings...)
	if err := export.WriteJSON(w.od.Path("dspk.json"), prov); err != nil {
		return err
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

// writeExtra writes the files of the sort r after dspk.json: the drift
// files (with motion correction), the summary figure and the caller's
// files (Options.Extra).
func (w *SortWriter) writeExtra(r *pipeline.SortResult) error {
	if d := DriftOf(r.Info); d != nil {
		if err := WriteDrift(w.od.Dir(), d); err != nil {
			return err
		}
	}
	if err := figure.WriteSortSummary(w.od.Path(SortSummaryFile), sortSummary(r)); err != nil {
		return err
	}
	if w.opt.Extra != nil {
		return w.opt.Extra(w.od.Dir())
	}
	return nil
}
