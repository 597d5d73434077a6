package kilosort

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestDefaults pins Kilosort4's defaults (kilosort4.md §13) and checks
// that every field carries a JSON name.
func TestDefaults(t *testing.T) {
	d := Defaults()
	if d.Fs != 30000 || d.BatchSize != 60000 || d.NT != 61 || d.NT0Min != 20 || d.Tmin != 0 || !math.IsInf(float64(d.Tmax), 1) ||
		d.NSkip != 25 || d.WhiteningRange != 32 || d.HighpassCutoff != 300 || !d.DoCAR || d.InvertSign ||
		d.ThUniversal != 9 || d.ThSingleCh != 6 || d.NTemplates != 6 || d.NPCs != 6 ||
		d.TemplateSizes != 5 || d.MinTemplateSize != 10 || d.NearestChans != 10 || d.NearestTemplates != 100 ||
		d.MaxChannelDistance != 32 || d.Dmin != 0 || d.Dminx != 32 {
		t.Errorf("Defaults() = %+v", d)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"fs"`, `"batch_size":60000`, `"nt":61`, `"nt0min":20`, `"Th_universal":9`, `"do_CAR":true`, `"highpass_cutoff":300`, `"tmax":null`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON %s lacks %s", b, k)
		}
	}
	for nt, want := range map[int]int{61: 20, 31: 10, 91: 29} {
		if got := DefaultNT0Min(nt); got != want {
			t.Errorf("DefaultNT0Min(%d) = %d, want %d", nt, got, want)
		}
	}
}

// TestEndLimit checks the JSON round trip of limits and of none.
func TestEndLimit(t *testing.T) {
	for _, c := range []struct {
		l    EndLimit
		json string
		back float64
	}{{12.5, "12.5", 12.5}, {EndLimit(math.Inf(1)), "null", math.Inf(1)}, {0, "null", math.Inf(1)}, {-3, "null", math.Inf(1)}} {
		b, err := json.Marshal(c.l)
		if err != nil || string(b) != c.json {
			t.Errorf("Marshal(%v) = %s, %v; want %s", c.l, b, err, c.json)
		}
		var back EndLimit
		if err := json.Unmarshal(b, &back); err != nil || float64(back) != c.back {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", b, back, err, c.back)
		}
	}
	var l EndLimit
	if err := json.Unmarshal([]byte(`"x"`), &l); err == nil {
		t.Error("Unmarshal of a string: no error")
	}
}
