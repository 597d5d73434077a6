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
// covering different time ranges, or different probes. Like
// MatchUnitDirs it refuses a truth without spikes and a folder of
// another sample rate, another recording or no common time. The
// detections' range is the schedule in their dspk.json, else the span
// of their spike times.
func MatchDirs(truthDir, detDir string, opt Options) (Report, []string, error) {
	if err := opt.Check(); err != nil {
		return Report{}, nil, err
	}
	if _, err := os.Stat(truthDir); err != nil {
		return Report{}, nil, fmt.Errorf("compare: reference: %w", err)
	}
	if !fileExists(filepath.Join(truthDir, sim.FileTruthJSON)) {
		return Report{}, nil, fmt.Errorf("compare: %s has no %s: detections are matched by time and depth, against the truth of dspk simulate; "+
			"score a sort's units against it with -units", truthDir, sim.FileTruthJSON)
	}
	ref, err := ReadReference(truthDir, 0)
	if err != nil {
		return Report{}, nil, err
	}
	truth := ref.sim
	det, err := ReadDetections(detDir)
	if err != nil {
		return Report{}, nil, err
	}
	warnings, err := ref.checkFolder(truthDir, detDir, detectionRange(detDir, det.Times))
	if err != nil {
		return Report{}, nil, err
	}
	r, err := Match(Spikes{Times: truth.SpikeTimes, Y: truth.SpikeY(), Amplitude: truth.SpikeAmplitude()}, det, opt)
	if err != nil {
		return Report{}, nil, err
	}
	if w := probeMismatch(truthDir, detDir, truth); w != "" {
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

// timeRange is the samples [Start, End) a folder covers. Known is
// true for a recording's length or a run's schedule and false for the
// span of spike times, which may cover less than the recording did.
type timeRange struct {
	Start, End int64
	Known      bool
}

// detectionRange returns the samples a folder covers: its dspk.json's
// schedule, else the span of its spike times (End == Start: neither).
func detectionRange(dir string, times []int64) timeRange {
	var prov struct {
		Schedule *struct{ Start, End int64 } `json:"schedule"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "dspk.json")); err == nil && json.Unmarshal(b, &prov) == nil &&
		prov.Schedule != nil && prov.Schedule.End > prov.Schedule.Start {
		return timeRange{prov.Schedule.Start, prov.Schedule.End, true}
	}
	if len(times) == 0 {
		return timeRange{}
	}
	start, end := times[0], times[0]
	for _, t := range times {
		start, end = min(start, t), max(end, t+1)
	}
	return timeRange{start, end, false}
}

// coverage compares the ranges a and b: it returns false when they
// share no sample, and the share of the range they must both cover that
// they do: of their union, but only of a span of spike times when the
// other range is known (a recording's spikes need not reach its ends).
func coverage(a, b timeRange) (float64, bool) {
	lo, hi := max(a.Start, b.Start), min(a.End, b.End)
	if hi <= lo {
		return 0, false
	}
	need := max(a.End, b.End) - min(a.Start, b.Start)
	switch {
	case a.Known && !b.Known:
		need = b.End - b.Start
	case b.Known && !a.Known:
		need = a.End - a.Start
	}
	return float64(hi-lo) / float64(need), true
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

// ScoreMotionDir scores the drift estimate est, read from the folder
// dir, against the true motion of truthDir (TrueMotion) as ScoreMotion
// does. It refuses an estimate of another sample rate or recording (as
// MatchUnitDirs does) or that shares no time with the truth, and
// warns when it covers less than RangeOverlapWarn of their union (a
// 10-s estimate of a 20-s truth is scored on its 10 s only). The
// estimate's range is the schedule in dir's dspk.json, else its
// windows.
func ScoreMotionDir(truthDir, dir string, est MotionEstimate) (*MotionReport, error) {
	tr, err := sim.ReadTruthDir(truthDir)
	if err != nil {
		return nil, err
	}
	ref := &Reference{Rate: tr.Config.SampleRate, RateFrom: filepath.Join(truthDir, sim.FileTruthJSON), sim: tr}
	if _, err := ref.checkFolder(truthDir, dir, timeRange{}); err != nil {
		return nil, err
	}
	r, err := ScoreMotion(est, trueMotion(tr))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "drift.npy"), err)
	}
	fs := tr.Config.SampleRate
	lo, hi := est.Times[0]-est.Span/2, est.Times[len(est.Times)-1]+est.Span/2
	if sr := detectionRange(dir, nil); sr.Known {
		lo, hi = float64(sr.Start)/fs, float64(sr.End)/fs
	} else if est.Span == 0 {
		return &r, nil
	}
	span := fmt.Sprintf("the drift estimate in %s covers %.3f–%.3f s but the truth in %s covers 0.000–%.3f s", dir, lo, hi,
		truthDir, float64(tr.Samples)/fs)
	share, ok := coverage(timeRange{int64(math.Round(lo * fs)), int64(math.Round(hi * fs)), true}, timeRange{0, tr.Samples, true})
	if !ok {
		return nil, fmt.Errorf("compare: %s: they share no time; score a drift estimate against the truth of its own recording", span)
	}
	if share < RangeOverlapWarn {
		r.Warnings = append(r.Warnings, span+"; the motion error covers the common time only")
	}
	return &r, nil
}

// TrueMotion returns the true tissue displacement of a ground-truth
// folder as ScoreMotion takes it: the simulation's motion field, else
// its plain rigid drift (DriftUmPerS·t, zero without drift).
func TrueMotion(truthDir string) (func(t, y float64) float64, error) {
	tr, err := sim.ReadTruthDir(truthDir)
	if err != nil {
		return nil, err
	}
	return trueMotion(tr), nil
}

// trueMotion is TrueMotion of a truth read.
func trueMotion(tr *sim.Truth) func(t, y float64) float64 {
	if tr.Motion != nil {
		return tr.Motion.At
	}
	return func(t, y float64) float64 { return tr.Config.DriftUmPerS * t }
}
