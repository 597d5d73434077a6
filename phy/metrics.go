package phy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"dspk/export"
	"dspk/quality"
)

// nnColumns are the metrics a sort leaves out by default
// ([SortMetricsOptions]): the nearest-neighbour search over every unit's
// spikes costs about a third of a whole sort on the CPU.
var nnColumns = []string{"nn_hit_rate", "nn_miss_rate"}

// SortMetricsOptions returns the settings dspk sort computes a sort
// folder's quality metrics with: SpikeInterface's defaults and Bombcell's
// thresholds ([quality.DefaultOptions]) without nn_hit_rate and
// nn_miss_rate (dspk metrics -pc-metrics adds them).
func SortMetricsOptions() quality.Options {
	opt := quality.DefaultOptions()
	opt.SkipNN = true
	return opt
}

// ComputeMetrics returns the quality metrics and labels of the sort
// folder dir (Kilosort's or Phy's files, read by [quality.ReadSortFolder],
// so a folder curated in Phy gets its curated units) with the settings
// opt. A folder without [quality.NoiseFile] gets its noise levels and
// gains from the recording params.py names, where it can be read
// ([folderScales]); otherwise the warnings say that they come from the
// whitening. raw_snr reads its snippets from that recording; where it
// cannot be read, raw_snr is NaN (the labels then skip it) and a warning
// says why.
func ComputeMetrics(dir string, opt quality.Options) (*quality.Table, []string, error) {
	sc, note := folderScales(dir)
	in, err := quality.ReadSortFolderWith(dir, sc)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	if note != "" {
		warnings = append(warnings, note)
	}
	if in.Templates != nil {
		rec, rows, err := openFolderRecording(dir)
		if err == nil && len(rows) != in.Channels {
			rec.Close()
			err = fmt.Errorf("channel_map.npy has %d channels, the templates %d", len(rows), in.Channels)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: raw_snr is left NaN and the labels skip it: %v", dir, err))
		} else {
			defer rec.Close()
			in.Raw, in.RawRows = rec, rows
		}
	}
	t, err := quality.Compute(*in, opt)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return t, warnings, nil
}

// MetricsFiles returns the files [WriteMetrics] writes for t (one
// cluster_<metric>.tsv per column, [quality.LabelFile] and
// [quality.WideFile]) and those it removes: the tables of the
// nearest-neighbour metrics when t lacks them, so that no table of an
// earlier run's units stays behind.
func MetricsFiles(t *quality.Table) (write, remove []string) {
	for _, c := range t.Columns {
		write = append(write, "cluster_"+c.Name+".tsv")
	}
	if t.Labels != nil {
		write = append(write, quality.LabelFile)
	}
	write = append(write, quality.WideFile)
	for _, name := range nnColumns {
		if t.Column(name) == nil {
			remove = append(remove, "cluster_"+name+".tsv")
		}
	}
	return write, remove
}

// WriteMetrics writes the table t into the folder dir as Phy's cluster
// tables ([quality.WriteTSV]: each file whole, through a temporary name)
// after removing the stale tables [MetricsFiles] names.
func WriteMetrics(dir string, t *quality.Table) error {
	_, remove := MetricsFiles(t)
	for _, name := range remove {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("phy: %w", err)
		}
	}
	return quality.WriteTSV(dir, t)
}

// writeMetrics writes the quality metrics and labels of the sort folder
// dir, its arrays already written, with [SortMetricsOptions].
func writeMetrics(dir string) error {
	t, _, err := ComputeMetrics(dir, SortMetricsOptions())
	if err != nil {
		return err
	}
	return WriteMetrics(dir, t)
}

// UpdateMetrics recomputes the metrics and labels of the sort folder dir
// with opt (after curation in Phy, say) and writes their tables, each
// whole. Unless overwrite, it refuses to replace a table the folder's
// manifest does not list (a Kilosort folder's, another tool's). Where dir
// has a manifest, the tables are recorded in it, so that dspk sort
// -overwrite still accepts the folder; a manifest that cannot be updated
// is returned as a warning. ctx is checked before anything is written.
func UpdateMetrics(ctx context.Context, dir string, opt quality.Options, overwrite bool) (t *quality.Table, written, warnings []string, err error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, nil, nil, err
	} else if !fi.IsDir() {
		return nil, nil, nil, fmt.Errorf("%s is not a folder; metrics takes a sort folder (Kilosort's or dspk sort's)", dir)
	}
	if t, warnings, err = ComputeMetrics(dir, opt); err != nil {
		return nil, nil, nil, err
	}
	write, remove := MetricsFiles(t)
	if !overwrite {
		for _, name := range append(append([]string{}, write...), remove...) {
			_, err := os.Lstat(filepath.Join(dir, name))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if !export.Lists(dir, name) {
				return nil, nil, nil, fmt.Errorf("%s holds %s, which dspk did not write; metrics does not replace it — use -overwrite", dir, name)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	if err := WriteMetrics(dir, t); err != nil {
		return nil, nil, nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, export.ManifestName)); err == nil {
		if err := export.RecordFiles(dir, append(write, remove...)...); err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: the manifest was not updated (%v); sort -overwrite will refuse this folder", dir, err))
		}
	}
	return t, write, warnings, nil
}
