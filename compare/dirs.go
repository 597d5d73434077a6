package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"dspk/export"
	"dspk/recording"
	"dspk/sim"
)

// RangeOverlapWarn is the least share of the union of the truth's and the
// detections' sample ranges that their overlap must cover before a
// comparison of folders warns that they cover different times (the
// precision and recall then count spikes outside the other's range as
// misses).
const RangeOverlapWarn = 0.99

// TruthDir is the ground-truth folder that dir names: dir itself, or
// the truth/ folder of a folder dspk simulate wrote (dir holds no
// truth.json but dir/truth does), so that a simulation can be named by
// its own folder. Any other dir (a sort folder given as the reference,
// a folder that does not exist) is returned as it is.
func TruthDir(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, sim.FileTruthJSON)); err == nil {
		return dir
	}
	sub := filepath.Join(dir, "truth")
	if _, err := os.Stat(filepath.Join(sub, sim.FileTruthJSON)); err == nil {
		return sub
	}
	return dir
}

// MatchDirs matches the spikes of a detection folder (spike_times.npy,
// spike_positions.npy) against a ground-truth folder written by sim, and
// returns warnings beside the report: the truth and the detections
// covering different time ranges, on different probes or at different
// sample rates. The detections' range is the schedule in their
// dspk.json, else the span of their spike times.
func MatchDirs(truthDir, detDir string, opt Options) (Report, []string, error) {
	if err := opt.Check(); err != nil {
		return Report{}, nil, err
	}
	truth, err := sim.ReadTruthDir(truthDir)
	if err != nil {
		return Report{}, nil, err
	}
	det, err := ReadDetections(detDir)
	if err != nil {
		return Report{}, nil, err
	}
	r, err := Match(Spikes{Times: truth.SpikeTimes, Y: truth.SpikeY(), Amplitude: truth.SpikeAmplitude()}, det, opt)
	if err != nil {
		return Report{}, nil, err
	}
	var warnings []string
	start, end, ok := detectionRange(detDir, det.Times)
	if ok {
		lo, hi := max(start, 0), min(end, truth.Samples)
		union := max(end, truth.Samples) - min(start, 0)
		if union > 0 && float64(max(hi-lo, 0)) < RangeOverlapWarn*float64(union) {
			fs := truth.Config.SampleRate
			warnings = append(warnings, fmt.Sprintf("the truth in %s covers %.3f–%.3f s but the detections in %s cover %.3f–%.3f s; "+
				"spikes outside the common range count against recall or precision",
				truthDir, 0.0, float64(truth.Samples)/fs, detDir, float64(start)/fs, float64(end)/fs))
		}
	}
	if w := probeMismatch(truthDir, detDir, truth); w != "" {
		warnings = append(warnings, w)
	}
	if w := rateMismatch(truthDir, detDir, truth.Config.SampleRate); w != "" {
		warnings = append(warnings, w)
	}
	return r, warnings, nil
}

// probeMismatch describes how the probe of a detection folder
// (channel_map.npy and channel_positions.npy) differs from the probe the
// truth was simulated on: other file rows, or sites more than
// recording.ProbeTolUm away. Matching by depth then compares positions on
// different probes. It is "" if they agree or the folder lacks the files.
func probeMismatch(truthDir, detDir string, truth *sim.Truth) string {
	tp := truth.Config.Probe
	cmA, err1 := export.ReadNPYFile(filepath.Join(detDir, "channel_map.npy"))
	posA, err2 := export.ReadNPYFile(filepath.Join(detDir, "channel_positions.npy"))
	if err1 != nil || err2 != nil || tp == nil {
		return ""
	}
	cm, err1 := cmA.Int64()
	pos, err2 := posA.Float64()
	if err1 != nil || err2 != nil || len(pos) != 2*len(cm) {
		return ""
	}
	at := map[int64][2]float64{}
	for i, r := range tp.ChanMap {
		at[int64(r)] = [2]float64{tp.X[i], tp.Y[i]}
	}
	off := 0
	for i, r := range cm {
		p, ok := at[r]
		if !ok || math.Abs(p[0]-pos[2*i]) > recording.ProbeTolUm || math.Abs(p[1]-pos[2*i+1]) > recording.ProbeTolUm {
			off++
		}
	}
	if off == 0 && len(cm) == tp.Len() {
		return ""
	}
	return fmt.Sprintf("the truth in %s was simulated on probe %s (%d sites) but the detections in %s used %d sites, %d of them on other file rows or positions; "+
		"spikes are matched by depth, so recall and precision compare different probes", truthDir, tp.Name, tp.Len(), detDir, len(cm), off)
}

// rateMismatch describes a detection folder whose recording (dspk.json's
// input.sample_rate) has another sample rate than the truth: spike times
// then count different samples. It is "" if they agree or the rate is
// not recorded.
func rateMismatch(truthDir, detDir string, rate float64) string {
	var prov struct {
		Input struct {
			SampleRate float64 `json:"sample_rate"`
		} `json:"input"`
	}
	b, err := os.ReadFile(filepath.Join(detDir, "dspk.json"))
	if err != nil || json.Unmarshal(b, &prov) != nil || prov.Input.SampleRate == 0 || prov.Input.SampleRate == rate {
		return ""
	}
	return fmt.Sprintf("the truth in %s is at %g Hz but the detections in %s come from a recording at %g Hz; spike times count different samples",
		truthDir, rate, detDir, prov.Input.SampleRate)
}

// detectionRange returns the samples [start, end) a detection folder
// covers: its dspk.json's schedule, else the span of its spike times.
func detectionRange(dir string, times []int64) (start, end int64, ok bool) {
	var prov struct {
		Schedule *struct{ Start, End int64 } `json:"schedule"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "dspk.json")); err == nil && json.Unmarshal(b, &prov) == nil &&
		prov.Schedule != nil && prov.Schedule.End > prov.Schedule.Start {
		return prov.Schedule.Start, prov.Schedule.End, true
	}
	if len(times) == 0 {
		return 0, 0, false
	}
	start, end = times[0], times[0]
	for _, t := range times {
		start, end = min(start, t), max(end, t+1)
	}
	return start, end, true
}

// ReadDetections reads the spike times and depths of a detection folder
// (spike_times.npy and spike_positions.npy).
func ReadDetections(dir string) (Spikes, error) {
	a, err := export.ReadNPYFile(filepath.Join(dir, "spike_times.npy"))
	if err != nil {
		return Spikes{}, err
	}
	times, err := a.Int64()
	if err != nil {
		return Spikes{}, fmt.Errorf("%s: %w", filepath.Join(dir, "spike_times.npy"), err)
	}
	if a, err = export.ReadNPYFile(filepath.Join(dir, "spike_positions.npy")); err != nil {
		return Spikes{}, err
	}
	pos, err := a.Float32()
	if err != nil {
		return Spikes{}, fmt.Errorf("%s: %w", filepath.Join(dir, "spike_positions.npy"), err)
	}
	if len(pos) != 2*len(times) {
		return Spikes{}, fmt.Errorf("%s: %d positions for %d spikes", filepath.Join(dir, "spike_positions.npy"), len(pos)/2, len(times))
	}
	y := make([]float64, len(times))
	for i := range y {
		y[i] = float64(pos[2*i+1])
	}
	return Spikes{Times: times, Y: y}, nil
}

// HasSpikes reports whether dir holds detections (spike_times.npy: a
// detect or sort folder, not a drift folder).
func HasSpikes(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "spike_times.npy"))
	return err == nil
}

// TrueMotion returns the true tissue displacement of a ground-truth
// folder as ScoreMotion takes it: the simulation's motion field, else
// its plain rigid drift (DriftUmPerS·t, zero without drift).
func TrueMotion(truthDir string) (func(t, y float64) float64, error) {
	tr, err := sim.ReadTruthDir(truthDir)
	if err != nil {
		return nil, err
	}
	if tr.Motion != nil {
		return tr.Motion.At, nil
	}
	return func(t, y float64) float64 { return tr.Config.DriftUmPerS * t }, nil
}
