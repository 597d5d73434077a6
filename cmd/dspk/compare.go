package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"dspk/compare"
	"dspk/export"
	"dspk/recording"
	"dspk/sim"
)

func init() {
	register(&command{
		name:  "compare",
		short: "match detected spikes against ground truth: recall, precision, recall per amplitude band; score a drift estimate",
		usage: "DETDIR|DRIFTDIR",
		example: `dspk simulate -o sim1 -duration 60s
dspk detect -o det1 sim1/sim_g0_t0.imec0.ap.bin
dspk compare -truth sim1/truth det1
dspk compare -json -truth sim1/truth det1
dspk compare -truth sim1/truth -units sort1
dspk compare -truth sort-cpu sort-gpu      # two sorts: units of one against the other
dspk drift -o drift1 sim1/sim_g0_t0.imec0.ap.bin
dspk compare -truth sim1/truth drift1`,
		writesNothing: true,
		setup: func(fs *flag.FlagSet) func([]string) error {
			truthDir := fs.String("truth", "", "ground-truth folder written by dspk simulate, or a sort folder to score another sort's units against (required)")
			asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
			opt := compare.DefaultOptions()
			fs.Int64Var(&opt.MaxLag, "max-lag", opt.MaxLag, "largest time difference in samples")
			fs.Float64Var(&opt.MaxDepth, "max-depth", opt.MaxDepth, "largest depth difference in µm (exclusive)")
			units := addUnitFlags(fs)
			return func(args []string) error {
				if len(args) != 1 {
					return usagef("compare takes one detection or drift folder")
				}
				if *truthDir == "" {
					return usagef("-truth DIR is required")
				}
				if units.wanted(args[0]) {
					return units.run(*truthDir, args[0], *asJSON)
				}
				mr, err := compareMotion(*truthDir, args[0])
				if err != nil {
					return err
				}
				if mr != nil && !hasSpikes(args[0]) {
					return printMotionOnly(cmdOut, mr, *asJSON)
				}
				r, warnings, err := compareDirsWarn(*truthDir, args[0], opt)
				if err != nil {
					return err
				}
				printWarnings(cmdErr, warnings)
				if *asJSON {
					enc := json.NewEncoder(cmdOut)
					enc.SetIndent("", "  ")
					return enc.Encode(struct {
						compare.Report
						Motion   *compare.MotionReport `json:"motion,omitempty"`
						Warnings []string              `json:"warnings,omitempty"`
					}{r, mr, warnings})
				}
				printReport(cmdOut, r)
				if mr != nil {
					printMotionReport(cmdOut, mr)
				}
				return nil
			}
		},
	})
}

// compareDirs matches the spikes of a detection folder against a
// ground-truth folder.
func compareDirs(truthDir, detDir string, opt compare.Options) (compare.Report, error) {
	r, _, err := compareDirsWarn(truthDir, detDir, opt)
	return r, err
}

// RangeOverlapWarn is the least share of the union of the truth's and the
// detections' sample ranges that their overlap must cover before compare
// warns that they cover different times (the precision and recall then
// count spikes outside the other's range as misses).
const RangeOverlapWarn = 0.99

// compareDirsWarn is compareDirs that also returns warnings: the truth
// and the detections covering different time ranges, on different probes
// (probeMismatch) or at different sample rates (rateMismatch). The detections'
// range is the schedule in their dspk.json, else the span of their spike
// times.
func compareDirsWarn(truthDir, detDir string, opt compare.Options) (compare.Report, []string, error) {
	if err := opt.Check(); err != nil {
		return compare.Report{}, nil, err
	}
	truth, err := sim.ReadTruthDir(truthDir)
	if err != nil {
		return compare.Report{}, nil, err
	}
	det, err := readDetections(detDir)
	if err != nil {
		return compare.Report{}, nil, err
	}
	r, err := compare.Match(compare.Spikes{Times: truth.SpikeTimes, Y: truth.SpikeY(), Amplitude: truth.SpikeAmplitude()}, det, opt)
	if err != nil {
		return compare.Report{}, nil, err
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
	cmA, err1 := readNPY(filepath.Join(detDir, "channel_map.npy"))
	posA, err2 := readNPY(filepath.Join(detDir, "channel_positions.npy"))
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

// readDetections reads spike_times.npy and spike_positions.npy of a
// detection folder.
func readDetections(dir string) (compare.Spikes, error) {
	a, err := readNPY(filepath.Join(dir, "spike_times.npy"))
	if err != nil {
		return compare.Spikes{}, err
	}
	times, err := a.Int64()
	if err != nil {
		return compare.Spikes{}, fmt.Errorf("%s: %w", filepath.Join(dir, "spike_times.npy"), err)
	}
	if a, err = readNPY(filepath.Join(dir, "spike_positions.npy")); err != nil {
		return compare.Spikes{}, err
	}
	pos, err := a.Float32()
	if err != nil {
		return compare.Spikes{}, fmt.Errorf("%s: %w", filepath.Join(dir, "spike_positions.npy"), err)
	}
	if len(pos) != 2*len(times) {
		return compare.Spikes{}, fmt.Errorf("%s: %d positions for %d spikes", filepath.Join(dir, "spike_positions.npy"), len(pos)/2, len(times))
	}
	y := make([]float64, len(times))
	for i := range y {
		y[i] = float64(pos[2*i+1])
	}
	return compare.Spikes{Times: times, Y: y}, nil
}

// readNPY reads the .npy array at path.
func readNPY(path string) (*export.NPY, error) {
	return export.ReadNPYFile(path)
}

func printReport(w io.Writer, r compare.Report) {
	fmt.Fprintf(w, "true spikes      %d\n", r.NTruth)
	fmt.Fprintf(w, "detections       %d\n", r.NDetected)
	fmt.Fprintf(w, "matched          %d (mean lag %+.2f samples)\n", r.Matched, r.MeanLag)
	fmt.Fprintf(w, "recall           %.3f\n", r.Recall)
	fmt.Fprintf(w, "precision        %.3f\n", r.Precision)
	for _, b := range r.Bands {
		fmt.Fprintf(w, "recall %4.0f–%-3.0f SD %.3f  (%d of %d)\n", b.Band.Lo, b.Band.Hi, b.Recall, b.Matched, b.NTruth)
	}
}
