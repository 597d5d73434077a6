package phy

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"dspk/export"
	"dspk/kilosort"
	"dspk/pipeline"
	"dspk/preprocess"
)

// OpsFile is the name of the Kilosort-style ops dictionary in a detection
// folder.
const OpsFile = "ops.npy"

// opsDict returns the ops dictionary of a run as Kilosort4 writes it
// (ops.npy, read with np.load(allow_pickle=True).item()): every
// Kilosort setting under its own name at the top level and again in
// "settings", nt0min as detection used it (the template trough's
// sample, which SpikeInterface's read_kilosort_as_analyzer takes for
// the samples before the template peak), the file layout (n_chan_bin,
// Nchan, data_dtype, filename), the probe (chanMap, xc, yc, kcoords),
// the schedule (Nbatches, NTbuff) and the grid's steps.
func opsDict(info *pipeline.RunInfo, files []string, dtype string) (map[string]any, error) {
	ks := info.Config.Settings
	ks.Fs = info.Recording.SampleRate()
	ks.NT0Min = info.Detect.NT0Min
	ks.Dmin, ks.Dminx = info.Grid.Dmin, info.Grid.Dminx
	settings, err := jsonScalars(ks)
	if err != nil {
		return nil, err
	}
	ops := map[string]any{}
	for k, v := range settings {
		ops[k] = v
	}
	settings["n_chan_bin"] = info.Recording.Channels()
	ops["settings"] = settings
	pr := info.Probe
	chanMap := make([]int64, pr.Len())
	kcoords := make([]float64, pr.Len())
	for i, r := range pr.ChanMap {
		chanMap[i] = int64(r)
		kcoords[i] = float64(pr.Shank[i])
	}
	filename := ""
	if len(files) > 0 {
		filename = files[0]
	}
	for k, v := range map[string]any{
		"n_chan_bin": info.Recording.Channels(), "Nchan": pr.Len(), "data_dtype": dtype, "filename": filename,
		"chanMap": chanMap, "xc": append([]float64(nil), pr.X...), "yc": append([]float64(nil), pr.Y...), "kcoords": kcoords,
		"Nbatches": info.Schedule.Windows, "NTbuff": info.Schedule.Len(), "nt0min": info.Detect.NT0Min, "nt": info.Detect.NT,
		"fs": ks.Fs, "dspk_version": pipeline.Version, "groups": info.Config.Groups, "car_groups": info.Config.CARGroups,
	} {
		ops[k] = v
	}
	return ops, nil
}

// jsonScalars returns the exported fields of the struct v under their
// JSON names, as int64 (integer fields), float64 (floating-point
// fields), bool or string values, as Kilosort4's ops hold them; a
// float field that is not positive or infinite and named tmax (Kilosort's
// None: no end limit) is +Inf, as Kilosort4 stores it.
func jsonScalars(v any) (map[string]any, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Struct {
		return nil, fmt.Errorf("phy: ops of a %s", rv.Kind())
	}
	m := map[string]any{}
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		x := rv.Field(i)
		switch x.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			m[name] = x.Int()
		case reflect.Float32, reflect.Float64:
			fv := x.Float()
			if name == "tmax" && !(fv > 0) {
				fv = math.Inf(1)
			}
			m[name] = fv
		case reflect.Bool:
			m[name] = x.Bool()
		case reflect.String:
			m[name] = x.String()
		default:
			return nil, fmt.Errorf("phy: ops field %s of kind %s", name, x.Kind())
		}
	}
	return m, nil
}

// opsTensors are the keys of a sort's ops that Kilosort4 holds as
// tensors and so lists in ops['is_tensor']: kilosort.io.load_ops makes
// each a tensor again (torch.from_numpy), so each must be an array.
var opsTensors = []string{"Wrot", "fwav", "wPCA", "wTEMP"}

// sortOps returns the ops dictionary of the sort r (ops.npy of a sort
// folder): [opsDict] with the sort's settings and counts, and what
// Kilosort4's kilosort.io.load_ops needs to load it: is_tensor
// ([opsTensors]: the whitening matrix Wrot, the high-pass taps fwav and
// the universal templates wPCA and wTEMP, as Kilosort4 saves them),
// preprocessing (a dict of the arrays whiten_mat, float32 [C, C], and
// hp_filter, Kilosort4's float32 high-pass taps of
// preprocess.ImpulseResponse) and settings (opsDict's, with the sort's
// settings, as Kilosort4's ops['settings'] holds every one). With motion
// correction dshift is Kilosort4's [windows, blocks] array of shifts in
// µm, yblk the blocks' depths and mean_drift the mean |shift| of the
// first block; without, dshift is None, as Kilosort4 has it.
func sortOps(r *pipeline.SortResult, files []string, dtype string) (map[string]any, error) {
	info, cr := r.Info, r.Curated
	ops, err := opsDict(info, files, dtype)
	if err != nil {
		return nil, err
	}
	mp, cp, clp := r.Matching, r.Curation, r.Params.Cluster
	settings := ops["settings"].(map[string]any)
	for k, v := range map[string]any{
		"Th_learned": mp.ThLearned, "max_peels": int64(mp.MaxPeels),
		"acg_threshold": cp.ACGThreshold, "ccg_threshold": cp.CCGThreshold, "duplicate_spike_ms": cp.DuplicateSpikeMs,
		"position_limit": cp.PositionLimit, "cluster_downsampling": int64(clp.ClusterDownsampling),
		"max_cluster_subset": int64(clp.MaxClusterSubset), "cluster_neighbors": int64(clp.ClusterNeighbors),
		"cluster_init_seed": clp.ClusterInitSeed, "nblocks": int64(info.Config.NBlocks),
	} {
		ops[k], settings[k] = v, v
	}
	ops["n_units_total"], ops["n_units_good"], ops["n_spikes"] = int64(cr.Units.N), int64(goodUnits(cr.Good)), int64(cr.Spikes.Len())
	ops["dshift"] = nil
	if m := info.Motion; m != nil {
		ops["dshift"] = export.PickleArray{Shape: []int{m.Windows, m.Blocks}, Data: m.Dshift}
		ops["yblk"] = m.Yblk
		mean := 0.0
		for w := range m.Windows {
			mean += math.Abs(m.Dshift[w*m.Blocks])
		}
		ops["mean_drift"] = mean / float64(max(1, m.Windows))
	}
	dense, _, err := pipeline.WhiteningMatrices(info.Whitening)
	if err != nil {
		return nil, err
	}
	C := info.Probe.Len()
	wrot := export.PickleArray{Shape: []int{C, C}, Data: dense}
	taps := preprocess.ImpulseResponse(info.Recording.SampleRate(), info.Config.Settings.HighpassCutoff, kilosort.HighpassOrder)
	hp := make([]float32, len(taps))
	for i, v := range taps {
		hp[i] = float32(v)
	}
	ops["preprocessing"] = map[string]any{"whiten_mat": wrot, "hp_filter": hp}
	tm := info.Universal
	ops["Wrot"], ops["fwav"] = wrot, hp
	ops["wPCA"] = export.PickleArray{Shape: []int{tm.P, tm.NT}, Data: tm.WPCA}
	ops["wTEMP"] = export.PickleArray{Shape: []int{tm.K, tm.NT}, Data: tm.WTEMP}
	ops["is_tensor"] = opsTensors
	return ops, nil
}

// writeOps writes ops.npy of a run into the folder's path.
func writeOps(path string, info *pipeline.RunInfo, files []string, dtype string) error {
	ops, err := opsDict(info, files, dtype)
	if err != nil {
		return err
	}
	return export.WritePickledDictNPY(path, ops)
}
