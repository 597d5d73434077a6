package quality

// Options are the metrics' parameters, named after SpikeInterface's.
// [DefaultOptions] returns SpikeInterface 0.105's defaults; Compute uses
// the values as given.
type Options struct {
	// PresenceRatioBinS is presence_ratio's bin_duration_s (60).
	PresenceRatioBinS float64
	// PresenceRatioMeanFRRatio is presence_ratio's mean_fr_ratio_thresh (0).
	PresenceRatioMeanFRRatio float64

	// ISIThresholdMs and MinISIMs are isi_violation's isi_threshold_ms
	// (1.5) and min_isi_ms (0).
	ISIThresholdMs, MinISIMs float64
	// RefractoryPeriodMs and CensoredPeriodMs are rp_violation's
	// refractory_period_ms (1) and censored_period_ms (0).
	RefractoryPeriodMs, CensoredPeriodMs float64
	// RPVTauRMs and RPVTauCMs are Bombcell's refractory period tauR (2)
	// and censored period tauC (0.1) of fraction_rpvs, the
	// contamination its labels test.
	RPVTauRMs, RPVTauCMs float64

	// SlidingRPMinSpikes is sliding_rp_violation's min_spikes (0): a unit
	// with at most this many spikes gets NaN.
	SlidingRPMinSpikes int
	// SlidingRPBinMs, SlidingRPWindowS, SlidingRPExcludeBelowMs and
	// SlidingRPMaxRefMs are bin_size_ms (0.25), window_size_s (1),
	// exclude_ref_period_below_ms (0.5) and max_ref_period_ms (10).
	SlidingRPBinMs, SlidingRPWindowS, SlidingRPExcludeBelowMs, SlidingRPMaxRefMs float64
	// SlidingRPContamination are the contamination fractions tested; nil
	// means 0.005, 0.010, …, 0.350.
	SlidingRPContamination []float64

	// FiringRangeBinS and FiringRangePercentiles are firing_range's
	// bin_size_s (5) and percentiles (5, 95).
	FiringRangeBinS        float64
	FiringRangePercentiles [2]float64

	// AmplitudeCVSpikesPerBin, AmplitudeCVPercentiles and
	// AmplitudeCVMinBins are amplitude_cv's average_num_spikes_per_bin
	// (50), percentiles (5, 95) and min_num_bins (10).
	AmplitudeCVSpikesPerBin float64
	AmplitudeCVPercentiles  [2]float64
	AmplitudeCVMinBins      int

	// AmplitudeCutoffBins, AmplitudeCutoffSmoothing and
	// AmplitudeCutoffMinRatio are amplitude_cutoff's num_histogram_bins
	// (100), histogram_smoothing_value (3) and amplitudes_bins_min_ratio (5).
	AmplitudeCutoffBins      int
	AmplitudeCutoffSmoothing float64
	AmplitudeCutoffMinRatio  float64

	// DriftIntervalS, DriftMinSpikesPerInterval,
	// DriftMinFractionValidIntervals and DriftMinBins are drift's
	// interval_s (60), min_spikes_per_interval (100),
	// min_fraction_valid_intervals (0.5) and min_num_bins (2).
	DriftIntervalS                 float64
	DriftMinSpikesPerInterval      int
	DriftMinFractionValidIntervals float64
	DriftMinBins                   int

	// SDRatioCensoredMs, SDRatioCorrectDrift and SDRatioCorrectTemplate
	// are sd_ratio's censored_period_ms (4), correct_for_drift (true) and
	// correct_for_template_itself (true).
	SDRatioCensoredMs      float64
	SDRatioCorrectDrift    bool
	SDRatioCorrectTemplate bool

	// NNMaxSpikes and NNNeighbors are nearest_neighbor's max_spikes
	// (10000) and n_neighbors (5).
	NNMaxSpikes, NNNeighbors int
	// SkipNN leaves out nn_hit_rate and nn_miss_rate, the slowest metrics
	// by far (a k-nearest-neighbour search over up to NNMaxSpikes spikes
	// per unit): the Table then has no such columns.
	SkipNN bool

	// Shape holds the template metrics' parameters.
	Shape ShapeOptions
	// Labels holds the labelling thresholds.
	Labels LabelOptions
}

// ShapeOptions are the parameters of the template shape metrics, named
// after SpikeInterface's template_metrics extension.
type ShapeOptions struct {
	// UpsamplingFactor is upsampling_factor (10): the main-channel
	// template is upsampled by scipy's resample_poly rule first.
	UpsamplingFactor int
	// MinThreshDetectPeaksTroughs is min_thresh_detect_peaks_troughs
	// (0.3): the least prominence of a peak, as a fraction of max |template|.
	MinThreshDetectPeaksTroughs float64
	// EdgeExclusionMs is edge_exclusion_ms (0.09).
	EdgeExclusionMs float64
	// MinPeakTroughDistanceRatio and MinExtremumDistanceSamples are
	// min_peak_trough_distance_ratio (0.2) and
	// min_extremum_distance_samples (3).
	MinPeakTroughDistanceRatio float64
	MinExtremumDistanceSamples int
	// BaselineWindowMs is waveform_baseline_flatness's baseline_window_ms
	// (0, 0.5).
	BaselineWindowMs [2]float64
	// ExpDecayMinR2 is exp_decay's min_r2 (0.2).
	ExpDecayMinR2 float64
}

// DefaultOptions returns SpikeInterface 0.105's default parameters and
// the Bombcell thresholds of [DefaultLabelOptions].
func DefaultOptions() Options {
	return Options{
		PresenceRatioBinS:              60,
		ISIThresholdMs:                 1.5,
		RefractoryPeriodMs:             1,
		RPVTauRMs:                      2,
		RPVTauCMs:                      0.1,
		SlidingRPBinMs:                 0.25,
		SlidingRPWindowS:               1,
		SlidingRPExcludeBelowMs:        0.5,
		SlidingRPMaxRefMs:              10,
		FiringRangeBinS:                5,
		FiringRangePercentiles:         [2]float64{5, 95},
		AmplitudeCVSpikesPerBin:        50,
		AmplitudeCVPercentiles:         [2]float64{5, 95},
		AmplitudeCVMinBins:             10,
		AmplitudeCutoffBins:            100,
		AmplitudeCutoffSmoothing:       3,
		AmplitudeCutoffMinRatio:        5,
		DriftIntervalS:                 60,
		DriftMinSpikesPerInterval:      100,
		DriftMinFractionValidIntervals: 0.5,
		DriftMinBins:                   2,
		SDRatioCensoredMs:              4,
		SDRatioCorrectDrift:            true,
		SDRatioCorrectTemplate:         true,
		NNMaxSpikes:                    10000,
		NNNeighbors:                    5,
		Shape: ShapeOptions{
			UpsamplingFactor:            10,
			MinThreshDetectPeaksTroughs: 0.3,
			EdgeExclusionMs:             0.09,
			MinPeakTroughDistanceRatio:  0.2,
			MinExtremumDistanceSamples:  3,
			BaselineWindowMs:            [2]float64{0, 0.5},
			ExpDecayMinR2:               0.2,
		},
		Labels: DefaultLabelOptions(),
	}
}

// columnSpec names the Table's columns in order; the integer ones are
// counts.
var columnSpec = []struct {
	name    string
	integer bool
}{
	{"num_spikes", true}, {"firing_rate", false}, {"presence_ratio", false}, {"snr", false}, {"raw_snr", false},
	{"isi_violations_ratio", false}, {"isi_violations_count", true},
	{"rp_contamination", false}, {"rp_violations", true}, {"sliding_rp_violation", false},
	{"fraction_rpvs", false},
	{"firing_range", false}, {"amplitude_cv_median", false}, {"amplitude_cv_range", false},
	{"amplitude_cutoff", false}, {"amplitude_median", false},
	{"drift_ptp", false}, {"drift_std", false}, {"drift_mad", false}, {"motion_presence", false}, {"sd_ratio", false},
	{"isolation_distance", false}, {"l_ratio", false}, {"d_prime", false},
	{"nn_hit_rate", false}, {"nn_miss_rate", false}, {"silhouette", false},
	{"num_positive_peaks", true}, {"num_negative_peaks", true},
	{"peak_to_trough_duration", false}, {"waveform_baseline_flatness", false}, {"waveform_baseline_fraction", false},
	{"peak_before_to_trough_ratio", false}, {"peak_after_to_trough_ratio", false},
	{"peak_before_to_peak_after_ratio", false}, {"main_peak_to_trough_ratio", false},
	{"trough_width", false}, {"peak_before_width", false}, {"peak_after_width", false},
	{"exp_decay", false},
}

// columns is the Table's columns while Compute fills them: every unit
// writes only its own row, so goroutines share it without locks.
type columns struct {
	list   []Column
	byName map[string][]float64
}

func newColumns(n int) *columns {
	c := &columns{byName: map[string][]float64{}}
	for _, s := range columnSpec {
		v := make([]float64, n)
		for i := range v {
			v[i] = nan
		}
		c.list = append(c.list, Column{Name: s.name, Values: v, Integer: s.integer})
		c.byName[s.name] = v
	}
	return c
}

// set stores unit i's value of the metric name.
func (c *columns) set(name string, i int, v float64) {
	col, ok := c.byName[name]
	if !ok {
		panic("quality: no column " + name)
	}
	col[i] = v
}
