package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"dspk/sim"
)

// Reference is what the units of a folder are scored against, as
// [ReadReference] reads it.
type Reference struct {
	// Sorting holds the reference's spikes in time order (Units nil
	// unless it is a simulator's truth, whose silent units count).
	Sorting
	// Rate is the sample rate its spike times count (Hz) and RateFrom
	// the file or flag that gave it.
	Rate     float64
	RateFrom string
	// Kind is "truth" (a simulator's truth, or a folder of spike times
	// and labels that is not a sort) or "reference sort" (a folder with
	// cluster_KSLabel.tsv or dspk.json).
	Kind string
	// Warnings say what was changed on reading: spike times not in time
	// order, which were sorted (labels with them).
	Warnings []string
	// sim is the simulator's truth (nil for any other reference).
	sim *sim.Truth
	// span is the samples the reference covers: a simulation's whole
	// recording, the schedule of a dspk folder's dspk.json, else the
	// span of its spike times.
	span timeRange
}

// ReadReference reads a reference to score units against from dir: a
// simulator's truth folder (truth.json), or any folder of
// spike_times.npy and spike_clusters.npy (another sort, a
// SpikeInterface truth), whose sample rate is params.py's sample_rate
// or, without params.py, rate (a caller's -rate; 0 when not given).
// rate, if not 0, must agree with the rate the folder records. It
// refuses a reference without spikes, with negative spike times or
// without a known sample rate, naming the file and what to do; spike
// times out of time order are sorted (with their labels) and a warning
// says so, since the order of a spike list carries no meaning and lists
// written unit by unit are common.
func ReadReference(dir string, rate float64) (*Reference, error) {
	if !(rate >= 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("compare: sample rate %g Hz of the reference must be positive and finite", rate)
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("compare: reference: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, sim.FileTruthJSON)); err == nil {
		return readSimReference(dir, rate)
	}
	ref := &Reference{Kind: "truth"}
	if IsSort(dir) || fileExists(filepath.Join(dir, "dspk.json")) {
		ref.Kind = "reference sort"
	}
	if !fileExists(filepath.Join(dir, "spike_times.npy")) {
		return nil, fmt.Errorf("compare: %s is not a reference: it has neither %s (a dspk simulate truth) nor spike_times.npy and "+
			"spike_clusters.npy (a sort or a truth of spike times and unit labels)", dir, sim.FileTruthJSON)
	}
	so, err := ReadSorting(dir)
	if err != nil {
		return nil, err
	}
	ref.Sorting = so
	params := filepath.Join(dir, "params.py")
	switch fs, err := paramsSampleRate(params); {
	case err == nil && rate != 0 && fs != rate:
		return nil, fmt.Errorf("compare: -rate %g Hz contradicts the sample_rate %g of %s: leave -rate out or correct params.py", rate, fs, params)
	case err == nil:
		ref.Rate, ref.RateFrom = fs, params
	case fileExists(params):
		return nil, err
	case rate == 0:
		return nil, fmt.Errorf("compare: %s has no params.py to give the sample rate its spike times count: "+
			"pass -rate HZ (the sample rate of the recording the reference comes from)", dir)
	default:
		ref.Rate, ref.RateFrom = rate, "-rate"
	}
	if err := ref.check(dir); err != nil {
		return nil, err
	}
	ref.span = detectionRange(dir, ref.Times)
	return ref, nil
}

// readSimReference reads the truth of dspk simulate in dir.
func readSimReference(dir string, rate float64) (*Reference, error) {
	truth, err := sim.ReadTruthDir(dir)
	if err != nil {
		return nil, err
	}
	tj := filepath.Join(dir, sim.FileTruthJSON)
	if fs := truth.Config.SampleRate; rate != 0 && rate != fs {
		return nil, fmt.Errorf("compare: -rate %g Hz contradicts the sample rate %g Hz of %s: leave -rate out", rate, fs, tj)
	}
	ids := make([]int32, truth.Units())
	for i := range ids {
		ids[i] = int32(i)
	}
	ref := &Reference{Sorting: Sorting{Times: truth.SpikeTimes, Labels: truth.SpikeClusters, Units: ids},
		Rate: truth.Config.SampleRate, RateFrom: tj, Kind: "truth", sim: truth, span: timeRange{0, truth.Samples, true}}
	if err := ref.check(dir); err != nil {
		return nil, err
	}
	return ref, nil
}

// check refuses a reference without spikes or with negative spike
// times, and puts spike times out of order into order (labels with
// them), with a warning.
func (r *Reference) check(dir string) error {
	path := filepath.Join(dir, "spike_times.npy")
	if len(r.Times) == 0 {
		return fmt.Errorf("compare: %s holds no spikes: there is nothing to score against; give a reference with spikes", path)
	}
	var w string
	r.Sorting, w = inTimeOrder(r.Sorting, path)
	if w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	if t := r.Times[0]; t < 0 {
		return fmt.Errorf("compare: %s: spike time %d is negative; spike times count samples from the recording's first", path, t)
	}
	return nil
}

// inTimeOrder returns s with its spikes in time order (a stable sort,
// labels with their times) and, if they were not, a warning naming the
// file at path and the first spike out of order.
func inTimeOrder(s Sorting, path string) (Sorting, string) {
	if slices.IsSorted(s.Times) {
		return s, ""
	}
	first := 1
	for s.Times[first] >= s.Times[first-1] {
		first++
	}
	w := fmt.Sprintf("%s: spike %d (sample %d) comes before spike %d (sample %d): the spike times are not in time order; "+
		"they were sorted (with their labels) before scoring", path, first, s.Times[first], first-1, s.Times[first-1])
	idx := make([]int, len(s.Times))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.Times[idx[a]] < s.Times[idx[b]] })
	out := Sorting{Times: make([]int64, len(idx)), Labels: make([]int32, len(idx)), Units: s.Units}
	for k, i := range idx {
		out.Times[k], out.Labels[k] = s.Times[i], s.Labels[i]
	}
	return out, w
}

// paramsSampleRate reads the sample_rate line of a Phy params.py.
func paramsSampleRate(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("compare: a sort folder given as -truth needs its params.py (or -rate): %w", err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "sample_rate" {
			continue
		}
		fs, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(fs > 0) || math.IsInf(fs, 0) {
			return 0, fmt.Errorf("%s:%d: sample_rate %q is not a positive number", path, i+1, strings.TrimSpace(v))
		}
		return fs, nil
	}
	return 0, fmt.Errorf("%s: no sample_rate line", path)
}

// fileExists reports whether path names an existing file or folder.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// folderInput is the recording a dspk folder's dspk.json names.
type folderInput struct {
	Path       string   `json:"path"`
	Files      []string `json:"files"`
	SampleRate float64  `json:"sample_rate"`
	Samples    int64    `json:"samples"`
	Channels   int      `json:"channels"`
}

// readInput returns the "input" of dir's dspk.json (ok false without
// one).
func readInput(dir string) (in folderInput, ok bool) {
	var prov struct {
		Input *folderInput `json:"input"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "dspk.json"))
	if err != nil || json.Unmarshal(b, &prov) != nil || prov.Input == nil {
		return folderInput{}, false
	}
	return *prov.Input, true
}

// folderRate returns the sample rate of the recording of a folder and
// the file that says so: dspk.json's input.sample_rate, else params.py's
// sample_rate (0 when neither says).
func folderRate(dir string) (float64, string) {
	if in, ok := readInput(dir); ok && in.SampleRate > 0 {
		return in.SampleRate, filepath.Join(dir, "dspk.json")
	}
	if fs, err := paramsSampleRate(filepath.Join(dir, "params.py")); err == nil {
		return fs, filepath.Join(dir, "params.py")
	}
	return 0, ""
}

// checkFolder refuses to score the folder dir, which covers the samples
// fr, against the reference refDir when they cannot be of one
// recording: other sample rates, other recordings by their dspk.json
// inputs (or, for a simulation, by the truth beside the folder's input
// file), or no common time. It returns a warning when they cover
// different times (less than RangeOverlapWarn in common, see coverage)
// or name input files of other names with the same length.
func (r *Reference) checkFolder(refDir, dir string, fr timeRange) ([]string, error) {
	if fs, from := folderRate(dir); fs != 0 && fs != r.Rate {
		return nil, fmt.Errorf("compare: the reference %s counts samples at %g Hz (%s) but %s comes from a recording at %g Hz (%s): "+
			"spike times and tolerances would count different samples; score folders of one recording at one rate", refDir, r.Rate,
			r.RateFrom, dir, fs, from)
	}
	var warnings []string
	if w, err := r.sameRecording(refDir, dir); err != nil {
		return nil, err
	} else if w != "" {
		warnings = append(warnings, w)
	}
	if fr.End <= fr.Start || r.span.End <= r.span.Start {
		return warnings, nil
	}
	fs := r.Rate
	span := fmt.Sprintf("the reference %s covers %.3f–%.3f s but %s covers %.3f–%.3f s", refDir, float64(r.span.Start)/fs,
		float64(r.span.End)/fs, dir, float64(fr.Start)/fs, float64(fr.End)/fs)
	share, ok := coverage(r.span, fr)
	if !ok {
		return nil, fmt.Errorf("compare: %s: they share no time, so every spike would count as a miss; "+
			"score a folder against the reference of its own recording and time range", span)
	}
	if share < RangeOverlapWarn {
		warnings = append(warnings, span+"; spikes outside the common range count as misses")
	}
	return warnings, nil
}

// sameRecording refuses a folder whose dspk.json names a recording that
// cannot be the reference's: of another length or channel count than a
// reference folder's dspk.json, of another length than a simulation's
// truth, or a simulation whose own truth (truth/truth.json beside the
// input file) differs from the reference's. Input files of the same
// length under other names give a warning (a copy renamed is the same
// recording).
func (r *Reference) sameRecording(refDir, dir string) (string, error) {
	in, ok := readInput(dir)
	if !ok {
		return "", nil
	}
	other := func(what string) error {
		return fmt.Errorf("compare: %s was made from %s, %s: it is a folder of another recording; "+
			"score it against that recording's reference", dir, in.Path, what)
	}
	if r.sim != nil {
		if in.Samples != 0 && in.Samples != r.sim.Samples {
			return "", other(fmt.Sprintf("%d samples long, but the simulation of %s has %d", in.Samples, refDir, r.sim.Samples))
		}
		own := filepath.Join(filepath.Dir(in.Path), "truth", sim.FileTruthJSON)
		mine := filepath.Join(refDir, sim.FileTruthJSON)
		a, errA := os.ReadFile(own)
		b, errB := os.ReadFile(mine)
		if errA == nil && errB == nil && !bytes.Equal(a, b) {
			return "", other(fmt.Sprintf("whose own truth %s is not %s", own, mine))
		}
		return "", nil
	}
	rin, ok := readInput(refDir)
	if !ok {
		return "", nil
	}
	switch {
	case in.Samples != 0 && rin.Samples != 0 && in.Samples != rin.Samples:
		return "", other(fmt.Sprintf("%d samples long, but the reference %s was made from %s, %d samples long",
			in.Samples, refDir, rin.Path, rin.Samples))
	case in.Channels != 0 && rin.Channels != 0 && in.Channels != rin.Channels:
		return "", other(fmt.Sprintf("%d channels, but the reference %s was made from %s, %d channels",
			in.Channels, refDir, rin.Path, rin.Channels))
	case filepath.Base(in.Path) != filepath.Base(rin.Path):
		return fmt.Sprintf("%s was made from %s but the reference %s from %s: files of the same length under other names; "+
			"if they are not one recording the scores mean nothing", dir, in.Path, refDir, rin.Path), nil
	}
	return "", nil
}
