package probe

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestWriteProbeInterfaceRoundTrip writes a multi-shank probe with a
// non-identity channel map and a skipped file row and reads it back.
func TestWriteProbeInterfaceRoundTrip(t *testing.T) {
	p := &Probe{Name: "four-shank µ", NChanFile: 9,
		X: []float64{0, 32, 250, 282, 500, 532, 750, 782}, Y: []float64{0, 0, 15, 15, 30.5, 30.5, 0, 0},
		Shank: []int{0, 0, 1, 1, 2, 2, 3, 3}, ChanMap: []int{0, 1, 2, 3, 5, 6, 7, 8}}
	var b bytes.Buffer
	if err := WriteProbeInterface(&b, p); err != nil {
		t.Fatal(err)
	}
	got, err := ParseProbeInterface(b.Bytes(), p.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, p)
	}
	// The keys are those of probeinterface's schema (no others allowed at
	// probe level) and the per-contact lists have one entry per site.
	var doc struct {
		Specification string                       `json:"specification"`
		Probes        []map[string]json.RawMessage `json:"probes"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"ndim": true, "si_units": true, "annotations": true, "contact_annotations": true,
		"contact_positions": true, "contact_plane_axes": true, "contact_shapes": true, "contact_shape_params": true,
		"probe_planar_contour": true, "contact_ids": true, "shank_ids": true, "contact_sides": true,
		"device_channel_indices": true}
	for k, v := range doc.Probes[0] {
		if !allowed[k] {
			t.Errorf("key %q is not in probeinterface's schema", k)
		}
		var list []json.RawMessage
		if json.Unmarshal(v, &list) == nil && len(list) != p.Len() {
			t.Errorf("%s has %d entries for %d sites", k, len(list), p.Len())
		}
	}
	if err := WriteProbeInterface(&b, &Probe{Name: "bad"}); err == nil {
		t.Error("invalid probe written")
	}
}
