package kilosort

// Motion holds Kilosort4's settings of the motion estimate and correction
// (datashift, kilosort4-sort.md §3 and §9), named and defaulted as in
// Kilosort4.
type Motion struct {
	// NBlocks is nblocks (1): 0 leaves the windows uncorrected, 1
	// estimates one rigid shift per window and k > 1 a shift per block of
	// 2k − 1 half-overlapping blocks along depth.
	NBlocks int `json:"nblocks"`
	// SigInterp is sig_interp (20): σ in µm of the kriging kernel
	// exp(−d²/2σ²) that corrects the windows.
	SigInterp float64 `json:"sig_interp"`
	// BinningDepth is binning_depth (5): µm per depth bin of the motion
	// histograms (also the unit of the shifts before refinement).
	BinningDepth float64 `json:"binning_depth"`
	// DriftSmoothing is drift_smoothing ([0.5, 0.5, 0.5]): the Gaussian σ
	// over the axes (shift, window, block) of the block registration
	// scores, in samples of each axis.
	DriftSmoothing [3]float64 `json:"drift_smoothing"`
}

// MotionDefaults returns Kilosort4's motion defaults.
func MotionDefaults() Motion {
	return Motion{NBlocks: 1, SigInterp: 20, BinningDepth: 5, DriftSmoothing: [3]float64{0.5, 0.5, 0.5}}
}

// Matching holds Kilosort4's settings of learned-template matching
// (kilosort4-sort.md §6 and §9). The template length nt, the trough index
// nt0min and nearest_chans are [Settings] of the detection front end.
type Matching struct {
	// ThLearned is Th_learned (8): a spike needs B/‖U‖ > ThLearned.
	ThLearned float64 `json:"Th_learned"`
	// MaxPeels is max_peels (100): the most matching rounds per window.
	MaxPeels int `json:"max_peels"`
}

// MatchingDefaults returns Kilosort4's matching defaults.
func MatchingDefaults() Matching {
	return Matching{ThLearned: 8, MaxPeels: 100}
}

// Curation holds Kilosort4's settings of the merges, the duplicate
// removal, the labels and the spike positions (kilosort4-sort.md §7–§9).
type Curation struct {
	// ACGThreshold is acg_threshold (0.2): a unit is good when its
	// autocorrelogram has R12 < ACGThreshold and Q12 < 0.2.
	ACGThreshold float64 `json:"acg_threshold"`
	// CCGThreshold is ccg_threshold (0.25): two units merge when their
	// cross-correlogram has R12 < CCGThreshold and Q12 < 0.05.
	CCGThreshold float64 `json:"ccg_threshold"`
	// DuplicateSpikeMs is duplicate_spike_ms (0.25): the least time in ms
	// between two kept spikes of a unit.
	DuplicateSpikeMs float64 `json:"duplicate_spike_ms"`
	// PositionLimit is position_limit (100): the largest distance in µm
	// of a channel from the template's best channel that weighs in a
	// spike's position.
	PositionLimit float64 `json:"position_limit"`
}

// CurationDefaults returns Kilosort4's curation defaults.
func CurationDefaults() Curation {
	return Curation{ACGThreshold: 0.2, CCGThreshold: 0.25, DuplicateSpikeMs: 0.25, PositionLimit: 100}
}

// MergeRThresh is the least template similarity of a candidate of the
// correlogram merges (r_thresh of merging_function in mode 'ccg', which
// Kilosort4 hard-codes; kilosort4-sort.md §7.2).
const MergeRThresh = 0.5
