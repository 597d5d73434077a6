package kilosort

// Clustering holds Kilosort4's settings of the graph clustering
// (clustering_qr.run, kilosort4-sort.md §5 and §9), named and defaulted as
// in Kilosort4. The vertical group step dmin is [Settings.Dmin].
type Clustering struct {
	// ClusterDownsampling makes every k-th spike of a group a landmark of
	// the kNN graph (cluster_downsampling, 20).
	ClusterDownsampling int `json:"cluster_downsampling"`
	// MaxClusterSubset caps the landmarks per group (max_cluster_subset,
	// 25000); 0 means None (no cap).
	MaxClusterSubset int `json:"max_cluster_subset"`
	// ClusterNeighbors is k of the kNN graph (cluster_neighbors, 10).
	ClusterNeighbors int `json:"cluster_neighbors"`
	// ClusterInitSeed seeds the initial labels of every group
	// (cluster_init_seed, 5).
	ClusterInitSeed int64 `json:"cluster_init_seed"`
	// XCenters is the number of x centres of the group grid (x_centers as
	// a count); 0 with no XCenterGuesses means None: automatic, from the
	// peaks of the channels' x histogram.
	XCenters int `json:"x_centers"`
	// XCenterGuesses are initial x centres in µm (x_centers as a list);
	// they take precedence over XCenters.
	XCenterGuesses []float64 `json:"x_center_guesses,omitempty"`
}

// Values Kilosort4's graph clustering hard-codes (kilosort4-sort.md §9).
const (
	// ClusterInitLabels is the number of k-means++ labels per group.
	ClusterInitLabels = 200
	// ClusterCandidates is the number of spikes drawn per k-means++ round.
	ClusterCandidates = 100
	// ClusterRounds is the number of alternating assignment rounds.
	ClusterRounds = 200
	// ClusterLambda weighs the degree penalty of the assignment (λ).
	ClusterLambda = 1.0
	// ClusterMinGroup is the fewest spikes a group needs to be clustered;
	// smaller groups are one cluster.
	ClusterMinGroup = 1000
	// SplitModularity keeps a split whose merge ratio ρ is below it.
	SplitModularity = 0.2
	// SplitBimodality keeps a split whose bimodality score reaches it.
	SplitBimodality = 0.6
	// SplitRidge is the ridge of the split's discriminant regression.
	SplitRidge = 0.01
	// SplitBins is the number of histogram bins of the split projections.
	SplitBins = 399
	// SplitSigma is the σ in bins of the split histogram's smoothing.
	SplitSigma = 4.0
	// XCentersSeed is the seed of the k-means of the x grid (scipy's in
	// Kilosort4; dspk's own generator, see package cluster).
	XCentersSeed = 5330
	// PostprocessR is the similarity above which postprocess_templates
	// merges learned templates.
	PostprocessR = 0.9
	// PostprocessNormTol is the relative norm difference below which
	// postprocess_templates merges similar templates.
	PostprocessNormTol = 0.2
)

// ClusteringDefaults returns Kilosort4's clustering defaults.
func ClusteringDefaults() Clustering {
	return Clustering{
		ClusterDownsampling: 20, MaxClusterSubset: 25000,
		ClusterNeighbors: 10, ClusterInitSeed: 5,
	}
}
