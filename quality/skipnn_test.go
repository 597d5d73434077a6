package quality

import (
	"math"
	"slices"
	"testing"
)

// TestMetricsSkipNN checks that SkipNN drops exactly the nearest-neighbour
// columns and leaves every other value and the labels as they are.
func TestMetricsSkipNN(t *testing.T) {
	in := labelInput()
	addPCs(&in)
	full, err := Compute(in, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.SkipNN = true
	skip, err := Compute(in, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(skip.Columns) != len(full.Columns)-2 || skip.Column("nn_hit_rate") != nil || skip.Column("nn_miss_rate") != nil {
		t.Fatalf("SkipNN: %d columns of %d, nn_hit_rate %v", len(skip.Columns), len(full.Columns), skip.Column("nn_hit_rate"))
	}
	for _, c := range skip.Columns {
		want := full.Column(c.Name)
		for i, v := range c.Values {
			if math.Float64bits(v) != math.Float64bits(want[i]) && !(math.IsNaN(v) && math.IsNaN(want[i])) {
				t.Errorf("%s[%d]: %v with SkipNN, %v without", c.Name, i, v, want[i])
			}
		}
	}
	if !slices.Equal(skip.Labels, full.Labels) {
		t.Errorf("labels %v with SkipNN, %v without", skip.Labels, full.Labels)
	}
	if v := skip.Column("silhouette"); v == nil || slices.ContainsFunc(v, math.IsNaN) {
		t.Errorf("silhouette with SkipNN: %v", v)
	}
}
