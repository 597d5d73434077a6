package phy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
// opt.
func ComputeMetrics(dir string, opt quality.Options) (*quality.Table, error) {
	in, err := quality.ReadSortFolder(dir)
	if err != nil {
		return nil, err
	}
	t, err := quality.Compute(*in, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return t, nil
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
	t, err := ComputeMetrics(dir, SortMetricsOptions())
	if err != nil {
		return err
	}
	return WriteMetrics(dir, t)
}
