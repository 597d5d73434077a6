package cluster

import (
	"context"
	"fmt"

	"dspk/kilosort"
)

// Params are the settings of a [Clusterer]: Kilosort4's named clustering
// settings and the values Kilosort4 hard-codes, each a field here so that
// tests and experiments can change them.
type Params struct {
	kilosort.Clustering
	// Dmin is the vertical step ×2 of the group grid in µm; 0 means the
	// median spacing of the distinct channel depths of [Input.ChanY]
	// (Kilosort4's dmin, None).
	Dmin float64
	// InitLabels is the number of k-means++ labels (200).
	InitLabels int
	// Candidates is the number of spikes drawn per k-means++ round (100).
	Candidates int
	// Rounds is the number of alternating assignment rounds (200).
	Rounds int
	// Lambda weighs the degree penalty of the assignment (1).
	Lambda float64
	// MinGroup is the fewest spikes a group needs to be clustered (1000);
	// a smaller group is one cluster.
	MinGroup int
	// SplitModularity keeps a split whose merge ratio is below it (0.2).
	SplitModularity float64
	// SplitBimodality keeps a split whose bimodality score reaches it
	// (0.6).
	SplitBimodality float64
	// Ridge is the ridge of the split's regression (0.01).
	Ridge float64
	// Bins is the number of histogram bins of the split projections (399).
	Bins int
	// Sigma is the smoothing σ in bins of that histogram (4).
	Sigma float64
	// Workers is the number of groups clustered at once on the CPU; 0
	// means GOMAXPROCS. The result does not depend on it.
	Workers int

	// ctx, set by [Clusterer.ClusterContext] for one call: once it is
	// done, the groups not begun are skipped and the rounds stop.
	ctx context.Context
}

// halted reports whether the call these settings belong to was stopped.
func (p *Params) halted() bool { return p.ctx != nil && p.ctx.Err() != nil }

// DefaultParams returns Kilosort4's defaults.
func DefaultParams() Params {
	return Params{
		Clustering: kilosort.ClusteringDefaults(),
		InitLabels: kilosort.ClusterInitLabels, Candidates: kilosort.ClusterCandidates,
		Rounds: kilosort.ClusterRounds, Lambda: kilosort.ClusterLambda,
		MinGroup:        kilosort.ClusterMinGroup,
		SplitModularity: kilosort.SplitModularity, SplitBimodality: kilosort.SplitBimodality,
		Ridge: kilosort.SplitRidge, Bins: kilosort.SplitBins, Sigma: kilosort.SplitSigma,
	}
}

// Validate reports the first setting out of range.
func (p *Params) Validate() error {
	switch {
	case p.ClusterDownsampling < 1:
		return fmt.Errorf("cluster: cluster_downsampling %d < 1", p.ClusterDownsampling)
	case p.MaxClusterSubset < 0:
		return fmt.Errorf("cluster: max_cluster_subset %d < 0", p.MaxClusterSubset)
	case p.ClusterNeighbors < 1:
		return fmt.Errorf("cluster: cluster_neighbors %d < 1", p.ClusterNeighbors)
	case p.XCenters < 0:
		return fmt.Errorf("cluster: x_centers %d < 0", p.XCenters)
	case !(p.Dmin >= 0):
		return fmt.Errorf("cluster: dmin %v < 0", p.Dmin)
	case p.InitLabels < 1 || p.Candidates < 1 || p.Rounds < 0:
		return fmt.Errorf("cluster: %d initial labels, %d candidates, %d rounds", p.InitLabels, p.Candidates, p.Rounds)
	case !(p.Lambda >= 0) || !(p.Ridge >= 0) || !(p.Sigma > 0):
		return fmt.Errorf("cluster: lambda %v, ridge %v, sigma %v", p.Lambda, p.Ridge, p.Sigma)
	case p.Bins < 3:
		return fmt.Errorf("cluster: %d split bins < 3", p.Bins)
	case p.MinGroup < 1:
		return fmt.Errorf("cluster: group minimum %d < 1", p.MinGroup)
	case p.Workers < 0:
		return fmt.Errorf("cluster: %d workers", p.Workers)
	}
	return nil
}
