// Package match provides Kilosort4's learned-template matching: the
// peeling of a whitened (and drift-corrected) window against the
// templates that clustering learned, giving each spike its time, template,
// amplitude and PCA features (shared/docs/kilosort4-sort.md §6,
// re-implemented from that description).
//
// A [Matcher] is built once for a set of templates and used for every
// window. Per window it projects the data on the templates (the inner
// product B[u,t] of template u centred at column t with the window), then
// peels: each round takes the columns where the best template's score
// max(B,0)²/‖U_u‖² is the largest within ±nt columns and above Th_learned²,
// records those spikes, and subtracts their fitted templates from B through
// the templates' cross-correlations (exact, so B always equals the
// projection of the residual) until no spike is left or MaxPeels rounds
// have run. The features of a spike are the PCA projections of the final
// residual on the 10 channels nearest to its template's best channel, plus
// its own fitted template.
//
// Differences from Kilosort4, on purpose:
//
//   - The temporal filtering of the window by the PCA basis is float32 with
//     float64 accumulation (Kilosort4: cuDNN TF32), so scores agree with a
//     float64 computation to float32 rounding; near-threshold and near-tie
//     events can flip against Kilosort4, as its own TF32 rounding flips them
//     against FP32.
//   - Templates are stored sparsely: only the channels where a template is
//     non-zero take part in the projection, the cross-correlations are kept
//     only for pairs of templates that share a channel, and after the first
//     round the scores are recomputed only in the columns the round's
//     subtractions changed. The spikes are those of the dense rule.
//   - There is no cap on the spikes of a window (Kilosort4 raises an error
//     above 10⁵).
//   - The spikes of a window are returned in order of column, then template.
//
// Back ends: the CPU implementation here (goroutines over channels,
// templates and column ranges). A CUDA back end (the projection as one
// SGEMM, the rounds on the device) is not built yet: [NewMatcher] refuses a
// CUDA device with an error that says so.
//
// Layouts: a whitened window is [C][T] float32 row-major (x[c*T+t]);
// templates are [N][C][P] (template, channel, PC) float32; the PCA basis is
// [P][nt]; features are [spike][NearestChans][P].
package match
