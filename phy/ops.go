package phy

import (
	"bytes"
	"encoding/json"
	"math"

	"dspk/export"
	"dspk/pipeline"
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

// jsonScalars returns the JSON fields of v as a dict of int64 (whole
// numbers written without a fraction), float64, bool or string values;
// null (Kilosort's None: tmax without a limit) becomes +Inf, as
// Kilosort4 stores it.
func jsonScalars(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	for k, x := range m {
		switch n := x.(type) {
		case nil:
			m[k] = math.Inf(1)
		case json.Number:
			if i, err := n.Int64(); err == nil {
				m[k] = i
			} else if f, err := n.Float64(); err == nil {
				m[k] = f
			}
		}
	}
	return m, nil
}

// writeOps writes ops.npy of a run into the folder's path.
func writeOps(path string, info *pipeline.RunInfo, files []string, dtype string) error {
	ops, err := opsDict(info, files, dtype)
	if err != nil {
		return err
	}
	return export.WritePickledDictNPY(path, ops)
}
