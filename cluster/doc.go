// Package cluster groups spikes into units by Kilosort4's graph clustering
// (its clustering_qr.run at Kilosort4's commit d947208, kilosort4-sort.md
// §5), and turns the clusters of the first clustering into learned
// templates ([PostprocessTemplates], §5.9).
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
//     ∝ D²). Groups small enough keep every drawn candidate's inner
//     products with all spikes and compute each once (kmeansmemo.go;
//     768 MiB shared by the groups in flight); the others prune the
//     spike × candidate products by the triangle inequality, exactly.
//     Where the CPU has AVX-512, vector kernels keep every sum's order
//     (dots_amd64.s; -tags noasm builds without them).
//  5. Alternating assignment (200 rounds, λ = 1) of landmark and spike
//     labels from sparse label counts minus the degree penalty, first
//     maximiser over all 200 labels; then relabelling in ascending order.
//  6. Merge tree (float64) by the greedy maximum of link counts over their
//     expectation, and split decisions from the root down: ρ < 0.2 keeps a
//     split, else the bimodality of a ridge-regression discriminant (score
//     ≥ 0.6 keeps it); Kilosort4's refractory veto is skipped: at
//     Kilosort4's commit d947208 it never fires.
//  7. Clusters are numbered by group (x outer, y inner) and within a group
//     by node id; Wall is each cluster's mean feature row on its group's
//     channels.
//
// # Exact and statistical
//
// Given the same draws, every step is deterministic and exact as
// described: the sparse assignment equals the dense score matrices, the
// memoised and the pruned k-means++ equal the plain loop bit for bit
// (which of the two a group takes does not matter), and the result
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
// On the CPU, groups run on goroutines. On a CUDA device the kNN search,
// the k-means++ scoring and updates and the assignment rounds of all
// groups run on the device, one launch per step for every group; the
// k-means++ draws, the trees and the splits stay on the host. Both back
// ends give the same result bit for bit (the candidate scores are summed
// in the same blocked order); docs/cluster.md §6 describes the CUDA back
// end.
package cluster
