package phy

import (
	"fmt"
	"math"
	"reflect"
	"strings"

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

// writeOps writes ops.npy of a run into the folder's path.
func writeOps(path string, info *pipeline.RunInfo, files []string, dtype string) error {
	ops, err := opsDict(info, files, dtype)
	if err != nil {
		return err
	}
	return export.WritePickledDictNPY(path, ops)
}
