package pipeline

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"dspk/kilosort"
	"dspk/recording"
)

// TestDefaultConfigs checks that the commands' configurations differ only
// in their motion settings, take Kilosort4's defaults from package
// kilosort, and keep the JSON keys of dspk.json in place.
func TestDefaultConfigs(t *testing.T) {
	d, s, dr := DefaultConfig(), DefaultSortConfig(), DefaultDriftConfig()
	if d.NBlocks != 0 || d.Correction != "kilosort" || s.NBlocks != 1 || s.Correction != CorrectionAuto ||
		dr.NBlocks != 1 || dr.Correction != "kilosort" {
		t.Errorf("nblocks and rules: detect %d %q, sort %d %q, drift %d %q", d.NBlocks, d.Correction, s.NBlocks, s.Correction, dr.NBlocks, dr.Correction)
	}
	if d.Settings != kilosort.Defaults() {
		t.Errorf("DefaultConfig's settings %+v are not Kilosort4's", d.Settings)
	}
	m := kilosort.MotionDefaults()
	for _, c := range []Config{d, s, dr} {
		if c.SigInterp != m.SigInterp || c.BinningDepth != m.BinningDepth || c.DriftSmoothing != m.DriftSmoothing {
			t.Errorf("motion settings %+v, want Kilosort4's %+v", c.Motion, m)
		}
		c.NBlocks, c.Correction, c.Registration = d.NBlocks, d.Correction, d.Registration
		if !reflect.DeepEqual(c, d) {
			t.Errorf("%+v differs from DefaultConfig %+v beyond the motion settings", c, d)
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"car_groups":false,"nblocks":0,"sig_interp":20,"binning_depth":5,"drift_smoothing":[0.5,0.5,0.5],"drift_correction":"kilosort"}`) {
		t.Errorf("config JSON %s", b)
	}
}

// TestSortOptionsValidate checks that each bad option is refused by
// name, and the defaults are not.
func TestSortOptionsValidate(t *testing.T) {
	if err := DefaultSortOptions().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, set := range map[string]func(o *SortOptions){
		"Th_learned":           func(o *SortOptions) { o.Match.ThLearned = 0 },
		"max_peels":            func(o *SortOptions) { o.Match.MaxPeels = 0 },
		"cluster_neighbors":    func(o *SortOptions) { o.Cluster.ClusterNeighbors = 0 },
		"acg_threshold":        func(o *SortOptions) { o.Curate.ACGThreshold = -1 },
		"ccg_threshold":        func(o *SortOptions) { o.Curate.CCGThreshold = -1 },
		"same-waveform":        func(o *SortOptions) { o.Curate.SameWaveform = 2 },
		"duplicate_spike_ms":   func(o *SortOptions) { o.Curate.DuplicateSpikeMs = -1 },
		"position_limit":       func(o *SortOptions) { o.Curate.PositionLimit = 0 },
		"cluster_downsampling": func(o *SortOptions) { o.Cluster.ClusterDownsampling = 0 },
	} {
		o := DefaultSortOptions()
		set(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSortParams checks the settings a sort derives from its options, the
// configuration and the recording: nearest_chans at most the probe's
// sites, the recording's rate, and the options left as they were.
func TestSortParams(t *testing.T) {
	pr := stereotrodes() // cut to two stereotrodes: 4 sites, fewer than nearest_chans
	pr.NChanFile, pr.ChanMap, pr.X, pr.Y, pr.Shank = 4, pr.ChanMap[:4], pr.X[:4], pr.Y[:4], pr.Shank[:4]
	rec := recording.NewMemory("st.bin", make([]int16, pr.NChanFile*130000), pr.NChanFile, 25000, nil)
	p, err := New(nil, rec, pr, DefaultConfig()) // a flat probe: no motion

	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	opt := DefaultSortOptions()
	opt.Match.ThLearned = 7
	before := opt
	sp, err := p.sortParams(opt)
	if err != nil {
		t.Fatal(err)
	}
	if m := sp.match; m.ThLearned != 7 || m.MaxPeels != 100 || m.NT != 61 || m.NT0Min != 20 || m.NearestChans != 4 {
		t.Errorf("match params %+v", m)
	}
	if c := sp.curate; c.FS != 25000 || c.Settings != opt.Curate {
		t.Errorf("curate params %+v", c)
	}
	if !reflect.DeepEqual(opt.Match, before.Match) || opt.Curate != before.Curate {
		t.Errorf("options changed: %+v, was %+v", opt, before)
	}
	opt.Curate.PositionLimit = -1
	if _, err := p.sortParams(opt); err == nil || !strings.Contains(err.Error(), "position_limit") {
		t.Errorf("bad position_limit: %v", err)
	}
}
