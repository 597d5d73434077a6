package phy

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"dspk/quality"
)

// TestMetricsFiles checks the tables WriteMetrics writes and removes:
// without the nearest-neighbour columns their tables of an earlier run
// go, with them they are written.
func TestMetricsFiles(t *testing.T) {
	dir := t.TempDir()
	tab := &quality.Table{UnitIDs: []int32{0, 4}, Labels: []string{"good", "mua"}, Columns: []quality.Column{
		{Name: "snr", Values: []float64{5, math.NaN()}},
		{Name: "nn_hit_rate", Values: []float64{0.9, 0.5}},
		{Name: "nn_miss_rate", Values: []float64{0.01, 0.2}},
	}}
	write, remove := MetricsFiles(tab)
	want := []string{"cluster_snr.tsv", "cluster_nn_hit_rate.tsv", "cluster_nn_miss_rate.tsv", quality.LabelFile, quality.WideFile}
	if !slices.Equal(write, want) || len(remove) != 0 {
		t.Errorf("with nn: write %v remove %v", write, remove)
	}
	if err := WriteMetrics(dir, tab); err != nil {
		t.Fatal(err)
	}
	for _, name := range want {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	tab.Columns = tab.Columns[:1]
	write, remove = MetricsFiles(tab)
	if len(write) != 3 || !slices.Equal(remove, []string{"cluster_nn_hit_rate.tsv", "cluster_nn_miss_rate.tsv"}) {
		t.Errorf("without nn: write %v remove %v", write, remove)
	}
	if err := WriteMetrics(dir, tab); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 3 {
		t.Errorf("after a run without nn the folder holds %v", left)
	}
	if opt := SortMetricsOptions(); !opt.SkipNN {
		t.Error("the sort computes the nearest-neighbour metrics")
	}
}
