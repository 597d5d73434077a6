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
// reads a detection folder and a ground-truth folder; [MatchUnitDirs]
// scores the units of a sort folder against a reference that
// [ReadReference] reads (a simulation's truth, another sort, any folder
// of spike times and unit labels with its sample rate);
// [ScoreMotionDir] scores a drift estimate against a truth's motion.
// All three refuse what cannot give a meaningful score (an empty
// reference, another sample rate, a folder of another recording by the
// inputs its dspk.json names, no common time) and warn where the score
// is doubtful (different time ranges or probes, spike times out of
// order). [TruthDir] finds the truth folder of a simulation's folder.
package compare
