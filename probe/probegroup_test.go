package probe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadProbeGroup reads a group of two probes as one: sites ordered by
// file row across the probes, the second probe's shanks numbered after
// the first's (which has two), an unconnected contact left out; a group
// of one probe reads as ReadProbeInterface reads it.
func TestReadProbeGroup(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.json")
	os.WriteFile(two, []byte(`{"specification": "probeinterface", "probes": [
	 {"ndim": 2, "si_units": "um", "contact_positions": [[0, 0], [0, 20], [250, 0]],
	  "shank_ids": ["0", "0", "1"], "device_channel_indices": [4, 0, 2]},
	 {"ndim": 2, "si_units": "mm", "contact_positions": [[1, 0], [1, 0.02], [1, 0.04]],
	  "device_channel_indices": [1, -1, 3]}]}`), 0o644)
	p, err := ReadProbeGroup(two)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.ChanMap, []int{0, 1, 2, 3, 4}) || !slices.Equal(p.Shank, []int{0, 2, 1, 2, 0}) ||
		!slices.Equal(p.X, []float64{0, 1000, 250, 1000, 0}) || !slices.Equal(p.Y, []float64{20, 0, 0, 40, 0}) || p.NChanFile != 5 {
		t.Errorf("got %+v", p)
	}
	one := filepath.Join(dir, "one.json")
	os.WriteFile(one, []byte(`{"specification": "probeinterface", "probes": [
	 {"ndim": 2, "contact_positions": [[0, 0], [0, 20]], "shank_ids": ["a", "b"], "device_channel_indices": [1, 0]}]}`), 0o644)
	a, err := ReadProbeGroup(one)
	b, err2 := ReadProbeInterface(one)
	if err != nil || err2 != nil || !slices.Equal(a.ChanMap, b.ChanMap) || !slices.Equal(a.Shank, b.Shank) || !slices.Equal(a.Y, b.Y) || a.Name != b.Name {
		t.Errorf("one probe: %+v %v, want %+v %v", a, err, b, err2)
	}
	os.WriteFile(one, []byte(`{"specification": "probeinterface", "probes": [{"ndim": 2, "contact_positions": [[0, 0]]}, {"ndim": 3}]}`), 0o644)
	if _, err := ReadProbeGroup(one); err == nil || !strings.Contains(err.Error(), "one.json[1]: ndim 3") {
		t.Errorf("a 3-D second probe: %v", err)
	}
}
