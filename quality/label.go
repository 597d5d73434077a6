package quality

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Range bounds one metric: a unit passes when Min ≤ value ≤ Max (both
// inclusive); a NaN bound is no bound. Abs tests |value|.
type Range struct {
	Min, Max float64
	Abs      bool
}

// in reports whether v passes r (NaN never does).
func (r Range) in(v float64) bool {
	if r.Abs {
		v = math.Abs(v)
	}
	if math.IsNaN(v) {
		return false
	}
	return (math.IsNaN(r.Min) || v >= r.Min) && (math.IsNaN(r.Max) || v <= r.Max)
}

// set reports whether r bounds anything.
func (r Range) set() bool { return !math.IsNaN(r.Min) || !math.IsNaN(r.Max) }

// LabelOptions are the thresholds of the automatic labels, by metric
// name, in three groups, as SpikeInterface 0.105's Bombcell port
// (spikeinterface.curation.bombcell_label_units, written with Bombcell's
// author) applies them:
//
//  1. noise: a unit failing any Noise range, or with NaN in any of them,
//     is "noise" (a non-physiological waveform).
//  2. mua: a unit that is not noise and fails any MUA range is "mua"
//     (a NaN metric is skipped).
//  3. non_soma: a unit that is not noise is "non_soma" when its main peak
//     is large against the trough (main_peak_to_trough_ratio above its
//     range), or when it is narrow (both peak_before_width and
//     trough_width below their ranges) and a peak before the trough is
//     large (peak_before_to_trough_ratio or
//     peak_before_to_peak_after_ratio above its range); NaN is skipped.
//  4. Any other unit is "good".
//
// Without templates the noise and non_soma rules are not applied.
type LabelOptions struct {
	// Noise are the waveform ranges: num_positive_peaks ≤ 2,
	// num_negative_peaks ≤ 1, peak_to_trough_duration 0.1–1.15 ms,
	// waveform_baseline_fraction ≤ 0.3, peak_after_to_trough_ratio ≤ 0.8,
	// exp_decay 0.01–0.1 /µm. SpikeInterface's port bounds its
	// waveform_baseline_flatness by 0.5 instead, measured after the ×10
	// upsampling, whose ripple at the template's start it counts; the
	// label follows Bombcell (maxWvBaselineFraction 0.3 on the template
	// as it is).
	Noise map[string]Range
	// MUA are the spike-train ranges: |amplitude_median| ≥ 30 µV,
	// raw_snr ≥ 5, amplitude_cutoff ≤ 0.2, num_spikes ≥ 300,
	// fraction_rpvs ≤ 0.1, presence_ratio ≥ 0.7, drift_ptp ≤ 100 µm, and
	// dspk's motion_presence ≥ 0.8 (a unit absent from a fifth of the
	// probe's positions is a piece of a neuron the sort split by the
	// probe's motion; NaN on a still recording, where the test is
	// skipped).
	// SpikeInterface's port bounds its snr (a template's peak over the
	// channel's noise) by 5; Bombcell's minSNR 5 bounds its own ratio of
	// raw snippets averaged over 100 spikes (raw_snr), which runs an order
	// of magnitude higher: the label follows Bombcell, so that a clear
	// unit of SpikeInterface snr 3–5 is not called mua. Without the raw
	// recording raw_snr is NaN and the bound is skipped, as Bombcell skips
	// it without raw data.
	// SpikeInterface's port tests rp_contamination (Llobet et al., a 1-ms
	// refractory period, no censored period) where Bombcell tests its
	// fractionRPVs (Hill et al., tauR 2 ms, tauC 0.1 ms): the label
	// follows Bombcell, fraction_rpvs.
	MUA map[string]Range
	// NonSomatic are the ranges whose excess marks a non-somatic unit:
	// peak_before_to_trough_ratio ≤ 3, peak_before_width ≥ 0.15 ms,
	// trough_width ≥ 0.2 ms, peak_before_to_peak_after_ratio ≤ 3,
	// main_peak_to_trough_ratio ≤ 0.8.
	NonSomatic map[string]Range
	// SkipNonSomatic leaves out rule 3.
	SkipNonSomatic bool
}

// DefaultLabelOptions returns the thresholds of
// bombcell_get_default_thresholds in SpikeInterface 0.105, the
// refractory-period contamination tested as Bombcell tests it
// (fraction_rpvs, see [LabelOptions.MUA]).
func DefaultLabelOptions() LabelOptions {
	none := math.NaN()
	return LabelOptions{
		Noise: map[string]Range{
			"num_positive_peaks":         {none, 2, false},
			"num_negative_peaks":         {none, 1, false},
			"peak_to_trough_duration":    {0.0001, 0.00115, false},
			"waveform_baseline_fraction": {none, 0.3, false},
			"peak_after_to_trough_ratio": {none, 0.8, false},
			"exp_decay":                  {0.01, 0.1, false},
		},
		MUA: map[string]Range{
			"amplitude_median": {30, none, true},
			"raw_snr":          {5, none, false},
			"amplitude_cutoff": {none, 0.2, false},
			"num_spikes":       {300, none, false},
			"fraction_rpvs":    {none, 0.1, false},
			"presence_ratio":   {0.7, none, false},
			"drift_ptp":        {none, 100, false},
			"motion_presence":  {0.8, none, false},
		},
		NonSomatic: map[string]Range{
			"peak_before_to_trough_ratio":     {none, 3, false},
			"peak_before_width":               {0.00015, none, false},
			"trough_width":                    {0.0002, none, false},
			"peak_before_to_peak_after_ratio": {none, 3, false},
			"main_peak_to_trough_ratio":       {none, 0.8, false},
		},
	}
}

// Label returns each unit's label ("noise", "non_soma", "mua", "good")
// by the rules of [LabelOptions]; waveform says whether t has template
// metrics, without which only the MUA rule applies. A threshold on a
// metric t lacks is ignored.
func Label(t *Table, lo LabelOptions, waveform bool) []string {
	labels := make([]string, len(t.UnitIDs))
	for i := range labels {
		labels[i] = "good"
	}
	fails := func(ranges map[string]Range, i int, nanFails bool) bool {
		for name, r := range ranges {
			col := t.Column(name)
			if col == nil || !r.set() {
				continue
			}
			v := col[i]
			if math.IsNaN(v) {
				if nanFails {
					return true
				}
				continue
			}
			if !r.in(v) {
				return true
			}
		}
		return false
	}
	for i := range labels {
		switch {
		case waveform && fails(lo.Noise, i, true):
			labels[i] = "noise"
		case fails(lo.MUA, i, false):
			labels[i] = "mua"
		}
		if waveform && !lo.SkipNonSomatic && labels[i] != "noise" && nonSomatic(t, lo.NonSomatic, i) {
			labels[i] = "non_soma"
		}
	}
	return labels
}

// nonSomatic applies rule 3 of LabelOptions to unit i.
func nonSomatic(t *Table, ns map[string]Range, i int) bool {
	// above reports a value beyond its range; NaN or no range is not.
	above := func(name string) bool {
		r, ok := ns[name]
		col := t.Column(name)
		if !ok || col == nil || !r.set() || math.IsNaN(col[i]) {
			return false
		}
		return !r.in(col[i])
	}
	// narrow: no width metric passes (NaN counts as not passing).
	narrow := true
	any := false
	for _, name := range []string{"peak_before_width", "trough_width"} {
		r, ok := ns[name]
		col := t.Column(name)
		if !ok || col == nil || !r.set() {
			continue
		}
		any = true
		if r.in(col[i]) {
			narrow = false
		}
	}
	if !any {
		narrow = false
	}
	large := above("peak_before_to_trough_ratio") || above("peak_before_to_peak_after_ratio")
	return (large && narrow) || above("main_peak_to_trough_ratio")
}

// MUAThresholds are the main thresholds of the MUA rule under the names a
// user sets them by: the bounds of num_spikes, fraction_rpvs,
// presence_ratio, amplitude_cutoff, raw_snr, amplitude_median (its absolute
// value), drift_ptp and motion_presence.
type MUAThresholds struct {
	MinSpikes, MaxRPContamination, MinPresenceRatio, MaxAmplitudeCutoff float64
	MinSNR, MinAmplitude, MaxDrift, MinMotionPresence                   float64
}

// MUAThresholdsOf returns the thresholds that lo's MUA ranges hold.
func MUAThresholdsOf(lo LabelOptions) MUAThresholds {
	m := lo.MUA
	return MUAThresholds{MinSpikes: m["num_spikes"].Min, MaxRPContamination: m["fraction_rpvs"].Max,
		MinPresenceRatio: m["presence_ratio"].Min, MaxAmplitudeCutoff: m["amplitude_cutoff"].Max,
		MinSNR: m["raw_snr"].Min, MinAmplitude: m["amplitude_median"].Min, MaxDrift: m["drift_ptp"].Max,
		MinMotionPresence: m["motion_presence"].Min}
}

// SetMUA returns lo with its MUA ranges bounded by t (a copy: lo's map
// is not changed). It returns an error naming the first threshold that
// is negative or not finite (by its name in the table's columns).
func (lo LabelOptions) SetMUA(t MUAThresholds) (LabelOptions, error) {
	mua := make(map[string]Range, len(lo.MUA))
	for k, r := range lo.MUA {
		mua[k] = r
	}
	for _, s := range []struct {
		metric string
		min    bool
		v      float64
	}{{"num_spikes", true, t.MinSpikes}, {"fraction_rpvs", false, t.MaxRPContamination},
		{"presence_ratio", true, t.MinPresenceRatio}, {"amplitude_cutoff", false, t.MaxAmplitudeCutoff},
		{"raw_snr", true, t.MinSNR}, {"amplitude_median", true, t.MinAmplitude}, {"drift_ptp", false, t.MaxDrift},
		{"motion_presence", true, t.MinMotionPresence}} {
		if math.IsNaN(s.v) || math.IsInf(s.v, 0) || s.v < 0 {
			return lo, fmt.Errorf("quality: the %s threshold %v must be a finite number ≥ 0", s.metric, s.v)
		}
		r := mua[s.metric]
		if s.min {
			r.Min = s.v
		} else {
			r.Max = s.v
		}
		mua[s.metric] = r
	}
	lo.MUA = mua
	return lo, nil
}

// LabelSummary says how many units carry each label, in Bombcell's order
// (good, mua, non_soma, noise, then any other).
func LabelSummary(labels []string) string {
	n := map[string]int{}
	for _, l := range labels {
		n[l]++
	}
	var parts []string
	for _, l := range []string{"good", "mua", "non_soma", "noise"} {
		parts = append(parts, fmt.Sprintf("%d %s", n[l], l))
		delete(n, l)
	}
	for _, l := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d %s", n[l], l))
	}
	return fmt.Sprintf("%d units: %s", len(labels), strings.Join(parts, ", "))
}
