// Package compare matches detected spikes against ground truth (or
// against another sorter's spikes) and reports recall and precision,
// overall and per amplitude band.
//
// A detection matches a true spike when its sample lies within MaxLag
// samples of the true trough and its depth within MaxDepth µm of the
// unit's depth at that time. Matching is one-to-one: candidate pairs are
// taken in order of increasing time difference (then depth difference,
// then index), so the result does not depend on the order of the input.
package compare
