package pipeline

import (
	"testing"

	"dspk/motion"
)

// TestAutoRule checks the auto correction's choice at the edges of its
// range rule, for one and several blocks.
func TestAutoRule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dshift []float64
		blocks int
		want   motion.Rule
	}{
		{"still", []float64{0, 1.5, -2, 0.5}, 1, motion.CorrectionKilosort},
		{"just below", []float64{-4.9, 5.0}, 1, motion.CorrectionKilosort},
		{"at the threshold", []float64{-5, 5}, 1, motion.CorrectionSmooth},
		{"linear drift", []float64{30, 10, -10, -30}, 1, motion.CorrectionSmooth},
		{"one moving block", []float64{0, 0, 0, 12, 0, 0}, 3, motion.CorrectionSmooth},
		{"empty", nil, 1, motion.CorrectionKilosort},
	} {
		est := &motion.Estimate{Windows: len(tc.dshift) / max(1, tc.blocks), Blocks: tc.blocks, Dshift: tc.dshift}
		if got := autoRule(est); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if autoRule(nil) != motion.CorrectionKilosort {
		t.Error("nil estimate: want Kilosort4's rule")
	}
	if !validRule(CorrectionAuto) {
		t.Error("auto is not a valid rule name")
	}
}
