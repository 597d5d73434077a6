package recording

import (
	"strings"
	"testing"
)

// TestMetaScaleWarnings parses metas whose ~imroTbl is unreadable or
// gives no gain: an NP1.0-style probe is refused naming the file and the
// table's line, another type is warned of with the file and line, and a
// readable table warns of nothing.
func TestMetaScaleWarnings(t *testing.T) {
	head := "imSampRate=30000\nnSavedChans=3\nacqApLfSy=2,0,1\nsnsApLfSy=2,0,1\nimAiRangeMax=0.6\n"
	cases := []struct {
		name, extra string
		err, warn   string // substrings; "" for none
	}{
		{"np1 readable", "imDatPrb_type=0\n~imroTbl=(0,2)(0 0 0 500 250 1)(1 0 0 500 250 1)\n", "", ""},
		{"np1 unreadable", "imDatPrb_type=0\n~imroTbl=0 0 0 500 250\n", "m.meta:7: imroTbl: expected '('", ""},
		{"type 1110 unreadable", "imDatPrb_type=1110\n~imroTbl=(0,2\n", "", "m.meta:7: ~imroTbl is unreadable (unclosed '('"},
		{"type 1110 readable", "imDatPrb_type=1110\n~imroTbl=(0,2)(0 1)\n", "", "m.meta:7: ~imroTbl gives no gain dspk reads for probe type 1110: the µV per count of 2 channels is unknown"},
		{"type 1110 no table", "imDatPrb_type=1110\n", "", "m.meta: probe type 1110 states no gain"},
		{"np2 fixed gain", "imDatPrb_type=21\n~imroTbl=garbage\n", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParseMeta(strings.NewReader(head+c.extra), "m.meta")
			if err != nil {
				t.Fatal(err)
			}
			uv, err := m.MicrovoltsPerCount()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want an error containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := strings.Join(m.ScaleWarnings(uv), "\n")
			if (c.warn == "") != (w == "") || !strings.Contains(w, c.warn) {
				t.Fatalf("warnings %q, want %q", w, c.warn)
			}
		})
	}
}
