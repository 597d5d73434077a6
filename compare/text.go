package compare

import (
	"fmt"
	"io"
)

// WriteText writes the spike comparison r as a table: counts, recall,
// precision and the recall of each amplitude band.
func (r Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "true spikes      %d\n", r.NTruth)
	fmt.Fprintf(w, "detections       %d\n", r.NDetected)
	fmt.Fprintf(w, "matched          %d (mean lag %+.2f samples)\n", r.Matched, r.MeanLag)
	fmt.Fprintf(w, "recall           %.3f\n", r.Recall)
	fmt.Fprintf(w, "precision        %.3f\n", r.Precision)
	for _, b := range r.Bands {
		fmt.Fprintf(w, "recall %4.0f–%-3.0f SD %.3f  (%d of %d)\n", b.Band.Lo, b.Band.Hi, b.Recall, b.Matched, b.NTruth)
	}
}

// WriteText writes the unit comparison r as a table, a line per truth
// unit; ref names what the units were scored against ("truth", or
// "reference sort" for two sorts).
func (r *UnitReport) WriteText(w io.Writer, ref string) {
	o := r.Options
	if ref != "truth" {
		fmt.Fprintf(w, "scored against a %s: its units take the truth's place below\n", ref)
	}
	fmt.Fprintf(w, "truth units      %d\n", r.NTruth)
	fmt.Fprintf(w, "sorted units     %d\n", r.NSorted)
	fmt.Fprintf(w, "well detected    %d (accuracy ≥ %.2f, spikes within ±%d samples)\n", r.WellDetected, o.WellDetected, o.Delta)
	fmt.Fprintf(w, "redundant        %d (over-split pieces)\n", r.Redundant)
	fmt.Fprintf(w, "over-merged      %d\n", r.Overmerged)
	fmt.Fprintf(w, "false positive   %d\n", r.FalsePositive)
	fmt.Fprintf(w, "bad (unmatched)  %d\n", r.Bad)
	fmt.Fprintf(w, "mean accuracy    %.3f (recall %.3f, precision %.3f)\n", r.MeanAccuracy, r.MeanRecall, r.MeanPrecision)
	fmt.Fprintf(w, "\n%6s %8s %8s %8s %9s %7s %9s %6s %9s\n", "truth", "spikes", "matched", "found", "accuracy", "recall", "precision", "best", "best acc")
	for _, u := range r.Truth {
		fmt.Fprintf(w, "%6d %8d %8d %8d %9.3f %7.3f %9.3f %6d %9.3f\n", u.Unit, u.Spikes, u.Matched, u.Found, u.Accuracy,
			u.Recall, u.Precision, u.Best, u.BestAccuracy)
	}
}

// WriteText writes the motion score r as a table: overall, then per
// block.
func (r *MotionReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "motion windows   %d × %d blocks (true motion spans %.1f µm; no correction would score %.2f µm RMS)\n",
		r.Windows, r.Blocks, r.TruthRange, r.Unscored)
	fmt.Fprintf(w, "motion RMS error %.2f µm (max %.2f µm), each block's constant offset removed\n", r.RMS, r.MaxAbs)
	if r.Blocks > 1 {
		for j := range r.Blocks {
			fmt.Fprintf(w, "  block %7.1f µm  RMS %.2f µm  max %.2f µm  offset %+.2f µm\n",
				r.BlockDepths[j], r.BlockRMS[j], r.BlockMaxAbs[j], r.BlockOffset[j])
		}
	}
}
