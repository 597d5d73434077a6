package probe

import (
	"strings"
	"testing"
)

// TestValidateGeometry checks the geometry rules: nulls are not zeros,
// no two sites share a position, and absurd scales are refused.
func TestValidateGeometry(t *testing.T) {
	for _, c := range []struct {
		name, json, want string
	}{
		{"null x", `{"chanMap":[0,1,2],"xc":[0,null,0],"yc":[0,20,40]}`, "xc[1] is null"},
		{"null chanMap", `{"chanMap":[0,null],"xc":[0,0],"yc":[0,20]}`, "chanMap[1] is null"},
		{"null kcoords", `{"chanMap":[0,1],"xc":[0,0],"yc":[0,20],"kcoords":[0,null]}`, "kcoords[1] is null"},
		{"duplicate", `{"chanMap":[0,1,2],"xc":[0,0,0],"yc":[0,20,0]}`, "sites 0 and 2 are both at (0, 0)"},
		{"all coincide", `{"chanMap":[0,1,2,3],"xc":[5,5,5,5],"yc":[7,7,7,7]}`, "all 4 sites are at (5, 7)"},
		{"minus zero duplicate", `{"chanMap":[0,1,2],"xc":[0,-0.0,9],"yc":[0,0,0]}`, "both at"},
		{"spacing 1e9", `{"chanMap":[0,1,2],"xc":[0,0,0],"yc":[0,1e9,2e9]}`, "from the origin"},
		{"median spacing", `{"chanMap":[0,1,2],"xc":[0,0,0],"yc":[0,5000,10000]}`, "median 5000 µm"},
		{"pi null channel", `{"specification":"probeinterface","probes":[{"ndim":2,"contact_positions":[[0,0],[0,20]],"device_channel_indices":[0,null]}]}`, "device_channel_indices[1] = null"},
		{"pi null shank", `{"specification":"probeinterface","probes":[{"ndim":2,"contact_positions":[[0,0],[0,20]],"shank_ids":["0",null]}]}`, "shank_ids[1] is null"},
		{"pi null", `{"specification":"probeinterface","probes":[{"ndim":2,"contact_positions":[[0,0],[null,20]]}]}`, "contact_positions[1] holds a null"},
	} {
		_, err := Parse([]byte(c.json), c.name+".json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name+".json") {
			t.Errorf("%s: %v, want an error naming the file and containing %q", c.name, err, c.want)
		}
	}
	// Sparse but plausible: a tetrode pair 2 mm apart (median spacing 20 µm).
	ok := `{"chanMap":[0,1,2,3,4,5,6,7],"xc":[0,20,0,20,2000,2020,2000,2020],"yc":[0,0,20,20,0,0,20,20]}`
	if _, err := Parse([]byte(ok), "tetrodes.json"); err != nil {
		t.Errorf("two tetrodes: %v", err)
	}
}
