package compare

import (
	"fmt"
	"os"
	"path/filepath"

	"dspk/export"
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
	// units covering different time ranges or input files of other
	// names, spike times that had to be put in order.
	Warnings []string `json:"warnings,omitempty"`
	// Reference names what the units were scored against: "truth", or
	// "reference sort" for a sort folder (Reference.Kind).
	Reference string `json:"-"`
}

// MatchUnitDirs scores the units of the folder dir (spike_times.npy and
// spike_clusters.npy) against refDir (read by ReadReference, with rate
// for a reference without params.py; 0 when not given) as MatchUnits
// does, with SpikeInterface's defaults at the reference's sample rate
// but matching spikes within deltaMs milliseconds and calling a unit
// well detected from an accuracy of wellDetected. It refuses folders
// that cannot be of the reference's recording (other sample rates,
// other inputs, no common time) and warns where they cover different
// times.
func MatchUnitDirs(refDir, dir string, rate, deltaMs, wellDetected float64) (*UnitDirsReport, error) {
	ref, err := ReadReference(refDir, rate)
	if err != nil {
		return nil, err
	}
	so, err := ReadSorting(dir)
	if err != nil {
		return nil, err
	}
	warnings := ref.Warnings
	so, w := inTimeOrder(so, filepath.Join(dir, "spike_times.npy"))
	if w != "" {
		warnings = append(warnings, w)
	}
	more, err := ref.checkFolder(refDir, dir, detectionRange(dir, so.Times))
	if err != nil {
		return nil, err
	}
	opt := DefaultUnitOptions(ref.Rate)
	opt.Delta = int64(deltaMs / 1000 * ref.Rate)
	opt.WellDetected = wellDetected
	r, err := MatchUnits(ref.Sorting, so, opt)
	if err != nil {
		return nil, fmt.Errorf("compare: %s against %s: %w", dir, refDir, err)
	}
	return &UnitDirsReport{UnitReport: r, SpikeAgreement: SpikeAgreement(r), Reference: ref.Kind,
		Warnings: append(warnings, more...)}, nil
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
