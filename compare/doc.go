// Package compare matches detected spikes against ground truth (or
// against another sorter's spikes) and reports recall and precision,
// overall and per amplitude band.
//
// A detection matches a true spike when its sample lies within MaxLag
// samples of the true trough and its depth within MaxDepth µm of the
// unit's depth at that time. Matching is one-to-one: candidate pairs are
// taken in order of increasing time difference (then depth difference,
// then index), so the result does not depend on the order of the input.
//
// The folders dspk writes are compared as they lie on disk: [MatchDirs]
// reads a detection folder and a ground-truth folder and warns where
// they cover other times, probes or sample rates; [MatchUnitDirs] scores
// the units of a sort folder against a ground-truth folder or another
// sort; [TrueMotion] gives a truth folder's motion to [ScoreMotion].
// [TruthDir] finds the truth folder of a simulation's folder.
package compare
