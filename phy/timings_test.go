package phy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"dspk/pipeline"
)

// TestExtraBesideClusterFiles checks the Extra hook's contract: it sees
// dspk.json and the per-spike arrays complete, its files land in the
// folder, and the final dspk.json holds the folder's timings.
func TestExtraBesideClusterFiles(t *testing.T) {
	srec := simulate(t, 2.1, 7, smallProbe())
	out := filepath.Join(t.TempDir(), "det")
	var seen struct {
		json  bool
		times int64
	}
	extra := func(dir string) error {
		if _, err := os.Stat(filepath.Join(dir, "dspk.json")); err == nil {
			seen.json = true
		}
		if st, err := os.Stat(filepath.Join(dir, "spike_times.npy")); err == nil {
			seen.times = st.Size()
		}
		return os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("x"), 0o644)
	}
	sum, err := run(t, srec, srec.Probe(), shortConfig(), out, Options{Extra: extra})
	if err != nil {
		t.Fatal(err)
	}
	if !seen.json {
		t.Error("Extra ran before dspk.json was written")
	}
	final, err := os.Stat(filepath.Join(out, "spike_times.npy"))
	if err != nil || seen.times != final.Size() || sum.Spikes == 0 {
		t.Errorf("Extra saw spike_times.npy of %d bytes, final %v (%d spikes)", seen.times, final, sum.Spikes)
	}
	if _, err := os.Stat(filepath.Join(out, "extra.txt")); err != nil {
		t.Errorf("Extra's file: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(out, "dspk.json"))
	if err != nil {
		t.Fatal(err)
	}
	var prov struct {
		Summary pipeline.Summary `json:"summary"`
	}
	if err := json.Unmarshal(b, &prov); err != nil {
		t.Fatal(err)
	}
	tm := prov.Summary.Timings
	for _, k := range []string{"whitening", "templates", "grid", "sink_begin", "detection", "folder_writing", "cluster_files", "plotting", "until_written"} {
		if _, ok := tm[k]; !ok {
			t.Errorf("dspk.json timings lack %q: %v", k, tm)
		}
	}
	if tm["folder_writing"] < tm["plotting"] || tm["until_written"] < tm["detection"] {
		t.Errorf("timings out of order: %v", tm)
	}
}
