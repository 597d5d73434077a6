// Package cluster groups spikes into units by Kilosort4's graph clustering
// (clustering_qr.run at commit d947208, kilosort4-sort.md §5), and turns
// the clusters of the first clustering into learned templates
// ([PostprocessTemplates], §5.9).
//
// A [Clusterer] is built for a device by [NewClusterer](dev, [Params]) and
// clusters an [Input]: each spike's unit (a template centre in Kilosort4's
// mode 'spikes', a learned template in mode 'template'), the units'
// positions and channel lists, and the spikes' features tF [n][NC][P].
// [Clusterer.Cluster] returns a [Result]: the labels, the cluster counts
// and Wall [N][C][P]. [SpikesInput] builds the Input of the first
// clustering from detection's grid and spikes.
//
// # Algorithm
//
//  1. Groups: the units go to the nearest point of a grid, y from
//     min(unit y) + dmin − 1 in steps of 2·dmin ([YCenters]), x from the
//     channel positions ([XCenters]: k-means started from the peaks of the
//     x histogram, from given guesses or from k seeded draws).
//  2. Features: a group's spikes in ascending order, each spike's features
//     written at its unit's channels among the sorted union of the group's
//     channel lists (d = channels·P), zeros elsewhere. Groups of fewer than
//     MinGroup (1000) spikes are one cluster.
//  3. kNN graph: landmarks are every cluster_downsampling-th spike (at
//     most max_cluster_subset); every spike's cluster_neighbors nearest
//     landmarks by exact float64 squared distance, ties to the lower
//     landmark. The link matrix M drops the landmarks' self-links.
//  4. Initial labels: greedy k-means++ (200 rounds of 100 candidates drawn
//     ∝ D²), with an exact triangle-inequality pruning of the spike ×
//     candidate products and, where the CPU has AVX-512, a vector kernel
//     for them that keeps every sum's order (dots_amd64.s; -tags noasm
//     builds without it).
//  5. Alternating assignment (200 rounds, λ = 1) of landmark and spike
//     labels from sparse label counts minus the degree penalty, first
//     maximiser over all 200 labels; then relabelling in ascending order.
//  6. Merge tree (float64) by the greedy maximum of link counts over their
//     expectation, and split decisions from the root down: ρ < 0.2 keeps a
//     split, else the bimodality of a ridge-regression discriminant (score
//     ≥ 0.6 keeps it); Kilosort4's refractory veto is skipped, as at
//     d947208 where it never fires.
//  7. Clusters are numbered by group (x outer, y inner) and within a group
//     by node id; Wall is each cluster's mean feature row on its group's
//     channels.
//
// # Exact and statistical
//
// Given the same draws, every step is deterministic and exact as
// described: the sparse assignment equals the dense score matrices, the
// pruned k-means++ equals the unpruned loop bit for bit, and the result
// does not depend on Params.Workers or GOMAXPROCS. Kilosort4 draws its
// k-means++ candidates with torch.multinomial on the GPU (Philox, torch's
// own algorithm), which cannot be reproduced outside torch: dspk draws
// them by Efraimidis–Spirakis keys from a PCG generator seeded with
// (cluster_init_seed, 0), fresh for each group as Kilosort4 re-seeds for
// each group. The x grid's k-means draws its starts from PCG(5330, 0)
// instead of scipy's generator. So clusters agree with Kilosort4's
// statistically, not label for label (kilosort4-sort.md §11).
//
// # Devices
//
// Today every device runs the CPU back end, groups on goroutines. A CUDA
// back end will keep the spike table on the device and run the kNN search
// and the k-means++ and assignment rounds of all groups at once (one
// launch per round for every group), returning only the labels and the
// small per-group count matrices for the trees and splits on the host;
// docs/cluster.md has the plan.
package cluster
