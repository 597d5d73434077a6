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

// TestSortDefaults pins Kilosort4's defaults of the sort's settings
// (kilosort4-sort.md §9) and their JSON names.
func TestSortDefaults(t *testing.T) {
	m, mt, c := MotionDefaults(), MatchingDefaults(), CurationDefaults()
	if m.NBlocks != 1 || m.SigInterp != 20 || m.BinningDepth != 5 || m.DriftSmoothing != [3]float64{0.5, 0.5, 0.5} {
		t.Errorf("MotionDefaults() = %+v", m)
	}
	if mt.ThLearned != 8 || mt.MaxPeels != 100 {
		t.Errorf("MatchingDefaults() = %+v", mt)
	}
	if c.ACGThreshold != 0.2 || c.CCGThreshold != 0.25 || c.DuplicateSpikeMs != 0.25 || c.PositionLimit != 100 || MergeRThresh != 0.5 {
		t.Errorf("CurationDefaults() = %+v, MergeRThresh %g", c, MergeRThresh)
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{m, `{"nblocks":1,"sig_interp":20,"binning_depth":5,"drift_smoothing":[0.5,0.5,0.5]}`},
		{mt, `{"Th_learned":8,"max_peels":100}`},
		{c, `{"acg_threshold":0.2,"ccg_threshold":0.25,"duplicate_spike_ms":0.25,"position_limit":100}`},
	} {
		if b, err := json.Marshal(c.v); err != nil || string(b) != c.want {
			t.Errorf("JSON %s, %v; want %s", b, err, c.want)
		}
	}
}
