package compare

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/export"
)

// writeProv writes dir/dspk.json.
func writeProv(t *testing.T, dir, js string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "dspk.json"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantErr fails unless err is an error whose text holds every want.
func wantErr(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q lacks %q", what, err, w)
		}
	}
}

// TestReferenceRules scores sort folders against references that
// cannot give a meaningful score: each is refused by name or warned
// about, and the legal ones (a plain truth with -rate, spike times out
// of order) score as the truth does.
func TestReferenceRules(t *testing.T) {
	dir := t.TempDir()
	truthDir, tr := truthFolder(t, dir)
	sorted := sortFolder(t, dir, "sorted", tr.SpikeTimes, tr.SpikeClusters, true, true)
	writeProv(t, sorted, `{"input": {"path": "/data/a.ap.bin", "sample_rate": 30000, "samples": 60000, "channels": 385},
		"schedule": {"Start": 0, "End": 60000}}`)

	// A plain truth folder (spike_times.npy + spike_clusters.npy, no
	// params.py): refused without -rate, scored with it.
	plain := sortFolder(t, dir, "plain", tr.SpikeTimes, tr.SpikeClusters, false, false)
	_, err := MatchUnitDirs(plain, sorted, 0, 0.4, 0.8)
	wantErr(t, "plain truth without -rate", err, plain, "params.py", "-rate")
	r, err := MatchUnitDirs(plain, sorted, 30000, 0.4, 0.8)
	if err != nil || r.WellDetected != 4 || r.Reference != "truth" || len(r.Warnings) != 0 {
		t.Errorf("plain truth with -rate 30000: %+v, %v", r, err)
	}
	// Detections need a simulation's truth (they are matched by depth);
	// a reference that does not exist is named.
	_, _, err = MatchDirs(plain, sorted, DefaultOptions())
	wantErr(t, "detections against a plain truth", err, plain, "truth.json", "-units")
	_, err = MatchUnitDirs(filepath.Join(dir, "nope"), sorted, 0, 0.4, 0.8)
	wantErr(t, "no reference", err, filepath.Join(dir, "nope"), "no such file")
	// The rate of a reference against the folder's: 25 kHz in params.py
	// (the tolerance would be 10 samples) against a 30-kHz recording.
	at25 := sortFolder(t, dir, "at25", tr.SpikeTimes, tr.SpikeClusters, false, false)
	os.WriteFile(filepath.Join(at25, "params.py"), []byte("sample_rate = 25000.0\n"), 0o644)
	_, err = MatchUnitDirs(at25, sorted, 0, 0.4, 0.8)
	wantErr(t, "25 kHz reference", err, filepath.Join(at25, "params.py"), "25000 Hz", filepath.Join(sorted, "dspk.json"), "30000 Hz")
	_, err = MatchUnitDirs(plain, sorted, 25000, 0.4, 0.8)
	wantErr(t, "-rate 25000", err, "-rate", "25000 Hz", "30000 Hz")
	_, err = MatchUnitDirs(at25, sorted, 30000, 0.4, 0.8)
	wantErr(t, "-rate against params.py", err, "-rate 30000 Hz contradicts", filepath.Join(at25, "params.py"))
	_, err = MatchUnitDirs(truthDir, sorted, 25000, 0.4, 0.8)
	wantErr(t, "-rate against truth.json", err, "-rate 25000 Hz contradicts", "truth.json")

	// An empty reference.
	empty := sortFolder(t, dir, "empty", nil, nil, true, true)
	_, err = MatchUnitDirs(empty, sorted, 0, 0.4, 0.8)
	wantErr(t, "empty reference", err, filepath.Join(empty, "spike_times.npy"), "no spikes")

	// Spike times out of order (unit by unit, as a script concatenating
	// per-unit trains writes them; then shuffled): sorted, with a
	// warning naming the file, and scored as in order.
	rng := rand.New(rand.NewPCG(46, 1))
	times := append([]int64(nil), tr.SpikeTimes...)
	labels := append([]int32(nil), tr.SpikeClusters...)
	rng.Shuffle(len(times), func(i, j int) {
		times[i], times[j] = times[j], times[i]
		labels[i], labels[j] = labels[j], labels[i]
	})
	shuffled := sortFolder(t, dir, "shuffled", times, labels, true, false)
	r, err = MatchUnitDirs(shuffled, sorted, 0, 0.4, 0.8)
	if err != nil || r.WellDetected != 4 || r.MeanAccuracy != 1 || len(r.Warnings) != 1 ||
		!strings.Contains(r.Warnings[0], filepath.Join(shuffled, "spike_times.npy")) || !strings.Contains(r.Warnings[0], "not in time order") {
		t.Errorf("shuffled reference: %+v, %v", r, err)
	}
	r, err = MatchUnitDirs(truthDir, shuffled, 0, 0.4, 0.8)
	if err != nil || r.MeanAccuracy != 1 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "not in time order") {
		t.Errorf("shuffled sort: %+v, %v", r, err)
	}
	neg := sortFolder(t, dir, "neg", []int64{-5, 10}, []int32{0, 0}, true, false)
	_, err = MatchUnitDirs(neg, sorted, 0, 0.4, 0.8)
	wantErr(t, "negative time", err, filepath.Join(neg, "spike_times.npy"), "-5 is negative")

	// A reference 100 s later than the sort shares no time with it.
	later := make([]int64, len(tr.SpikeTimes))
	for i, s := range tr.SpikeTimes {
		later[i] = s + 100*30000
	}
	late := sortFolder(t, dir, "late", later, tr.SpikeClusters, true, true)
	_, err = MatchUnitDirs(late, sorted, 0, 0.4, 0.8)
	wantErr(t, "reference 100 s later", err, late, "share no time", "0.000–2.000 s")
	_, err = MatchUnitDirs(truthDir, late, 0, 0.4, 0.8)
	wantErr(t, "sort 100 s later than the truth", err, "share no time")
}

// TestReferenceRecording refuses folders of another recording than the
// reference's, by the inputs their dspk.json files name, and warns on
// inputs of one length under other names.
func TestReferenceRecording(t *testing.T) {
	dir := t.TempDir()
	truthDir, tr := truthFolder(t, dir) // dir/truth: the input is dir/x.ap.bin
	ref := sortFolder(t, dir, "ref", tr.SpikeTimes, tr.SpikeClusters, true, true)
	writeProv(t, ref, `{"input": {"path": "/data/a.ap.bin", "sample_rate": 30000, "samples": 60000, "channels": 385}}`)
	folder := sortFolder(t, dir, "folder", tr.SpikeTimes, tr.SpikeClusters, true, true)
	for _, c := range []struct {
		input string
		want  []string // nil: accepted without warning; "warn" first: a warning
	}{
		{`"path": "/elsewhere/a.ap.bin", "sample_rate": 30000, "samples": 60000, "channels": 385`, nil},
		{`"path": "/data/b.ap.bin", "sample_rate": 30000, "samples": 90000, "channels": 385`, []string{"90000 samples", "another recording", "/data/a.ap.bin"}},
		{`"path": "/data/a.ap.bin", "sample_rate": 30000, "samples": 60000, "channels": 384`, []string{"384 channels", "another recording"}},
		{`"path": "/data/b.ap.bin", "sample_rate": 30000, "samples": 60000, "channels": 385`, []string{"warn", "/data/b.ap.bin", "other names"}},
	} {
		writeProv(t, folder, `{"input": {`+c.input+`}}`)
		r, err := MatchUnitDirs(ref, folder, 0, 0.4, 0.8)
		switch {
		case c.want == nil:
			if err != nil || len(r.Warnings) != 0 {
				t.Errorf("%s: %v, %v", c.input, r, err)
			}
		case c.want[0] == "warn":
			if err != nil || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], c.want[1]) || !strings.Contains(r.Warnings[0], c.want[2]) {
				t.Errorf("%s: %v, %v", c.input, r, err)
			}
		default:
			wantErr(t, c.input, err, append([]string{folder}, c.want...)...)
		}
	}
	// Against a simulation: the input's length, and the truth beside
	// the input file (the folder of another simulation of equal length).
	writeProv(t, folder, `{"input": {"path": "`+filepath.Join(dir, "x.ap.bin")+`", "sample_rate": 30000, "samples": 60000}}`)
	if r, err := MatchUnitDirs(truthDir, folder, 0, 0.4, 0.8); err != nil || r.WellDetected != 4 {
		t.Errorf("its own simulation: %+v, %v", r, err)
	}
	writeProv(t, folder, `{"input": {"path": "`+filepath.Join(dir, "x.ap.bin")+`", "sample_rate": 30000, "samples": 90000}}`)
	_, err := MatchUnitDirs(truthDir, folder, 0, 0.4, 0.8)
	wantErr(t, "simulation of another length", err, "90000 samples", "60000", "another recording")
	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o755)
	otherTruth, _ := truthFolder(t, other)
	b, _ := os.ReadFile(filepath.Join(otherTruth, "truth.json"))
	os.WriteFile(filepath.Join(otherTruth, "truth.json"), append(b, ' '), 0o644) // another simulation's truth
	writeProv(t, folder, `{"input": {"path": "`+filepath.Join(other, "x.ap.bin")+`", "sample_rate": 30000, "samples": 60000}}`)
	_, err = MatchUnitDirs(truthDir, folder, 0, 0.4, 0.8)
	wantErr(t, "folder of another simulation", err, filepath.Join(otherTruth, "truth.json"), "another recording")
	export.WriteNPYFile(filepath.Join(folder, "spike_positions.npy"), []int{len(tr.SpikeTimes), 2}, make([]float32, 2*len(tr.SpikeTimes)))
	_, _, err = MatchDirs(truthDir, folder, DefaultOptions())
	wantErr(t, "detections of another simulation", err, "another recording")
}

// TestScoreMotionDir warns on a drift estimate shorter than the truth
// and refuses one that shares no time with it.
func TestScoreMotionDir(t *testing.T) {
	dir := t.TempDir()
	truthDir, _ := truthFolder(t, dir) // 2 s
	drift := filepath.Join(dir, "drift")
	os.Mkdir(drift, 0o755)
	est := MotionEstimate{Times: []float64{0.5, 1.5}, Span: 1, Depths: []float64{100}, Dshift: []float64{0, 0}}
	r, err := ScoreMotionDir(truthDir, drift, est)
	if err != nil || len(r.Warnings) != 0 || r.RMS != 0 {
		t.Errorf("whole estimate: %+v, %v", r, err)
	}
	est = MotionEstimate{Times: []float64{0.5}, Depths: []float64{100}, Dshift: []float64{0}}
	writeProv(t, drift, `{"schedule": {"Start": 0, "End": 30000}}`)
	r, err = ScoreMotionDir(truthDir, drift, est)
	if err != nil || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "covers 0.000–1.000 s") ||
		!strings.Contains(r.Warnings[0], "0.000–2.000 s") {
		t.Errorf("half estimate: %+v, %v", r, err)
	}
	writeProv(t, drift, `{"schedule": {"Start": 90000, "End": 120000}}`)
	_, err = ScoreMotionDir(truthDir, drift, est)
	wantErr(t, "estimate after the truth", err, drift, "share no time")
	writeProv(t, drift, `{"input": {"path": "/x.ap.bin", "sample_rate": 30000, "samples": 120000}}`)
	_, err = ScoreMotionDir(truthDir, drift, est)
	wantErr(t, "estimate of a longer recording", err, "120000 samples", "another recording")
}
