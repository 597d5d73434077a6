package compare

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"dspk/export"
	"dspk/sim"
)

// SortMarker is the file whose presence makes a folder a sort (units,
// not provisional per-centre clusters).
const SortMarker = "cluster_KSLabel.tsv"

// IsSort reports whether dir is a sort folder (it holds SortMarker).
func IsSort(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, SortMarker))
	return err == nil
}

// UnitDirsReport is the unit-level score of a sort folder against a
// ground-truth folder or a reference sort.
type UnitDirsReport struct {
	*UnitReport
	// SpikeAgreement is the fraction of the reference's spikes that the
	// one-to-one assignment pairs with a spike of the corresponding
	// sorted unit (see SpikeAgreement).
	SpikeAgreement float64 `json:"spike_agreement"`
	// Warnings say what makes the score doubtful: the reference and the
	// units covering different time ranges.
	Warnings []string `json:"warnings,omitempty"`
	// Reference names what the units were scored against: "truth", or
	// "reference sort" for a sort folder.
	Reference string `json:"-"`
}

// MatchUnitDirs scores the units of the folder dir (spike_times.npy and
// spike_clusters.npy) against refDir (read by ReadReference) as
// MatchUnits does, with SpikeInterface's defaults at the reference's
// sample rate but matching spikes within deltaMs milliseconds and
// calling a unit well detected from an accuracy of wellDetected.
func MatchUnitDirs(refDir, dir string, deltaMs, wellDetected float64) (*UnitDirsReport, error) {
	ref, fs, samples, err := ReadReference(refDir)
	if err != nil {
		return nil, err
	}
	so, err := ReadSorting(dir)
	if err != nil {
		return nil, err
	}
	opt := DefaultUnitOptions(fs)
	opt.Delta = int64(deltaMs / 1000 * fs)
	opt.WellDetected = wellDetected
	r, err := MatchUnits(ref, so, opt)
	if err != nil {
		return nil, fmt.Errorf("compare: %s against %s: %w", dir, refDir, err)
	}
	out := &UnitDirsReport{UnitReport: r, SpikeAgreement: SpikeAgreement(r), Reference: "truth"}
	if ref.Units == nil {
		out.Reference = "reference sort"
	}
	if start, end, ok := detectionRange(dir, so.Times); ok && samples > 0 {
		lo, hi := max(start, 0), min(end, samples)
		union := max(end, samples) - min(start, 0)
		if union > 0 && float64(max(hi-lo, 0)) < RangeOverlapWarn*float64(union) {
			out.Warnings = append(out.Warnings, fmt.Sprintf("the truth in %s covers %.3f–%.3f s but the units in %s cover %.3f–%.3f s; "+
				"spikes outside the common range count against accuracy", refDir, 0.0, float64(samples)/fs, dir,
				float64(start)/fs, float64(end)/fs))
		}
	}
	return out, nil
}

// SpikeAgreement is the fraction of the reference's spikes that the
// one-to-one assignment of r pairs with a spike of the corresponding
// sorted unit: ΣTP / Σspikes over the reference units. Two sorts of one
// recording (the CPU's and the GPU's, two seeds) agree spike for spike
// at 1.
func SpikeAgreement(r *UnitReport) float64 {
	var tp, n int64
	for _, u := range r.Truth {
		tp += u.TP
		n += int64(u.Spikes)
	}
	if n == 0 {
		return 0
	}
	return float64(tp) / float64(n)
}

// ReadReference reads a reference to score units against: a simulator's
// truth folder, or another sort folder (spike_times.npy and
// spike_clusters.npy without the truth's truth.json, its sample rate
// from params.py), whose units then take the truth's place. It returns
// the reference's spikes (Units nil for a sort folder), the sample rate
// and the recording's length in samples (0 when a sort folder does not
// say).
func ReadReference(dir string) (Sorting, float64, int64, error) {
	_, noTruth := os.Stat(filepath.Join(dir, "truth.json"))
	if _, err := os.Stat(filepath.Join(dir, "spike_clusters.npy")); err == nil && noTruth != nil {
		so, err := ReadSorting(dir)
		if err != nil {
			return Sorting{}, 0, 0, err
		}
		fs, err := paramsSampleRate(filepath.Join(dir, "params.py"))
		if err != nil {
			return Sorting{}, 0, 0, err
		}
		return so, fs, 0, nil
	}
	truth, err := sim.ReadTruthDir(dir)
	if err != nil {
		return Sorting{}, 0, 0, err
	}
	ids := make([]int32, truth.Units())
	for i := range ids {
		ids[i] = int32(i)
	}
	return Sorting{Times: truth.SpikeTimes, Labels: truth.SpikeClusters, Units: ids}, truth.Config.SampleRate, truth.Samples, nil
}

// paramsSampleRate reads the sample_rate line of a Phy params.py.
func paramsSampleRate(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("compare: a sort folder given as -truth needs its params.py: %w", err)
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

// ReadSorting reads the spike times and unit labels of a folder
// (spike_times.npy and spike_clusters.npy).
func ReadSorting(dir string) (Sorting, error) {
	read := func(name string) ([]int64, error) {
		a, err := export.ReadNPYFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		v, err := a.Int64()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		return v, nil
	}
	times, err := read("spike_times.npy")
	if err != nil {
		return Sorting{}, err
	}
	cl, err := read("spike_clusters.npy")
	if err != nil {
		return Sorting{}, err
	}
	if len(cl) != len(times) {
		return Sorting{}, fmt.Errorf("%s: %d cluster labels for %d spikes in spike_times.npy",
			filepath.Join(dir, "spike_clusters.npy"), len(cl), len(times))
	}
	labels := make([]int32, len(cl))
	for i, c := range cl {
		if c < 0 || c > 1<<31-1 {
			return Sorting{}, fmt.Errorf("%s: spike %d has cluster %d", filepath.Join(dir, "spike_clusters.npy"), i, c)
		}
		labels[i] = int32(c)
	}
	return Sorting{Times: times, Labels: labels}, nil
}
