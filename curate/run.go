package curate

import (
	"context"
	"slices"
)

// Result is what a sort folder needs from curation (kilosort4-sort.md §8;
// n spikes after deduplication, N units).
type Result struct {
	// Spikes are the final spikes, sorted by time (spike_times,
	// spike_clusters = spike_templates, spike_detection_templates).
	Spikes *Spikes
	// Kept marks, over the merged spikes before deduplication (in their
	// time order), those kept (kept_spikes.npy).
	Kept []bool
	// Units are the final templates (Wall), Merges the merges made.
	Units  *Units
	Merges []MergeStep
	// Copies is the number of spikes dropped as a weaker unit's copies of
	// another unit's (the coincident rule; [MergeResult.Copies]).
	Copies int
	// Sparse is the number of units dropped for firing under
	// Params.MinRate (their spikes are not kept).
	Sparse int
	// Doubles is the number of spikes dropped as another unit's event
	// counted twice (Params.DoubleCount).
	Doubles int
	// Splits is the number of units split in two by their amplitude
	// modes (Params.AmplitudeSplit).
	Splits int
	// Positions [n, 2] (x, y µm) and Amplitudes [n] (‖tF‖).
	Positions, Amplitudes []float32
	// Good and ContamPct (100·R12) per unit, from the deduplicated trains
	// (cluster_KSLabel.tsv, cluster_ContamPct.tsv); Amplitude per unit is
	// ‖W_k‖ (cluster_Amplitude.tsv).
	Good      []bool
	ContamPct []float64
	Amplitude []float64
	// Similar is [N, N] (similar_templates.npy).
	Similar []float32
	// PCFeatures [n, P, NC] and PCFeatureInd [N, NC] (pc_features.npy,
	// pc_feature_ind.npy).
	PCFeatures   []float32
	PCFeatureInd []uint32
	// Templates [N, NT, C] (templates.npy, dense over C).
	Templates []float32
}

// Run runs every curation stage in Kilosort4's order on the matched
// spikes s (rewritten and returned in Result.Spikes) and their cluster
// templates u: [Merge], [RemoveDuplicates] with p.DuplicateSpikeBins, the
// coincident rule's copies and the double counts of nearby units dropped
// (dspk's, p.DoubleCount), the units of two amplitude modes split
// (dspk's; the lower mode becomes a new unit), the units firing under
// p.MinRate dropped
// (dspk's; their spikes are not kept and the others are renumbered in
// order),
// [Positions] and [Amplitudes] of the kept spikes, [Refract] on the
// deduplicated trains, [ClusterAmplitude], [SimilarTemplates],
// [PCFeatures] (pcOverwrite: Kilosort4's "last cluster wins") and
// [DenseTemplates].
func Run(s *Spikes, u *Units, bs *Basis, ch *Channels, p Params, pcOverwrite bool) *Result {
	r, _ := RunContext(context.Background(), s, u, bs, ch, p, pcOverwrite)
	return r
}

// RunContext is [Run] that stops once ctx is done: inside the merges,
// the similarity rows and the PC features (between units), so that an interrupt is answered within a unit's work. It then
// returns the context's cause and no result; s is left part-way.
func RunContext(ctx context.Context, s *Spikes, u *Units, bs *Basis, ch *Channels, p Params, pcOverwrite bool) (*Result, error) {
	mr, err := merge(ctx, s, u, bs, ch, p)
	if err != nil {
		return nil, err
	}
	doubles := 0
	skip := doubleCounts(s, mr.Units, ch, p, slices.Clone(mr.Copies))
	for i, d := range skip {
		if d && (mr.Copies == nil || !mr.Copies[i]) {
			doubles++
		}
	}
	keep := removeDuplicates(s.Time, s.Cluster, p.DuplicateSpikeBins(), skip)
	s.Select(keep)
	var splits int
	mr.Units, splits = splitAmplitudeModes(s, mr.Units, ch, p)
	sparse := 0
	if p.MinRate > 0 {
		mr.Units, sparse = dropSparse(s, mr.Units, keep, p.MinRate*span(s.Time, p.FS))
	}
	N := mr.Units.N
	good, contam := Refract(s.Cluster, Seconds(s.Time, p.FS), p)
	good = append(good, make([]bool, N-len(good))...)
	contam = append(contam, make([]float64, N-len(contam))...)
	for k := range contam {
		contam[k] *= 100
	}
	copies := 0
	for _, c := range mr.Copies {
		if c {
			copies++
		}
	}
	r := &Result{Spikes: s, Kept: keep, Units: mr.Units, Merges: mr.Merges, Copies: copies, Doubles: doubles, Sparse: sparse, Splits: splits,
		Positions: Positions(s, ch, p.PositionLimit), Amplitudes: Amplitudes(s),
		Good: good, ContamPct: contam, Amplitude: ClusterAmplitude(mr.Units)}
	// The similarity rows look at ctx before each row, the PC features
	// before each cluster.
	if r.Similar, err = similarTemplates(ctx, mr.Units, bs); err != nil {
		return nil, err
	}
	r.Templates = DenseTemplates(mr.Units, bs)
	if r.PCFeatures, r.PCFeatureInd, err = pcFeatures(ctx, s, ch, N, pcOverwrite); err != nil {
		return nil, err
	}
	return r, nil
}

// Tables returns the cluster tables of the result ([Tables] of Good,
// ContamPct and Amplitude).
func (r *Result) Tables() map[string][]byte { return Tables(r.Good, r.ContamPct, r.Amplitude) }

// span returns the time in seconds from the first spike to the last.
func span(t []int64, fs float64) float64 {
	if len(t) == 0 {
		return 0
	}
	return float64(slices.Max(t)-slices.Min(t)) / fs
}

// dropSparse drops from s (kept spikes, labels 0…u.N−1) the units with
// fewer than least spikes, renumbers the others in order, clears their
// spikes' entries in keep (a mask over the spikes before s was selected
// by it) and returns the surviving units and how many were dropped.
func dropSparse(s *Spikes, u *Units, keep []bool, least float64) (*Units, int) {
	count := make([]int, u.N)
	for _, c := range s.Cluster {
		count[c]++
	}
	newID := make([]int32, u.N)
	out := &Units{C: u.C, P: u.P}
	m := u.C * u.P
	for k := range u.N {
		if float64(count[k]) < least {
			newID[k] = -1
			continue
		}
		newID[k] = int32(out.N)
		out.N++
		out.W = append(out.W, u.W[k*m:(k+1)*m]...)
	}
	if out.N == u.N {
		return u, 0
	}
	alive := make([]bool, s.Len())
	for i, c := range s.Cluster {
		alive[i] = newID[c] >= 0
	}
	i := 0
	for j, k := range keep {
		if k {
			keep[j] = alive[i]
			i++
		}
	}
	s.Select(alive)
	for i, c := range s.Cluster {
		s.Cluster[i] = newID[c]
	}
	return out, u.N - out.N
}
