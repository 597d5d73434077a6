package sim

import (
	"strings"
	"testing"
)

// TestSimulateDriftLimits checks the drift limits of a config: a drift
// faster than MaxDriftUmPerS, or one that moves the units beyond the
// probe's length (3820 µm of NP1) over the recording, is refused naming
// the limit; slower ones are taken.
func TestSimulateDriftLimits(t *testing.T) {
	cases := []struct {
		drift, seconds float64
		want           string // "" for accepted
	}{
		{0, 60, ""},
		{10, 60, ""},
		{-63, 60, ""},
		{1e9, 60, "want at most 100 µm/s"},
		{-101, 1, "want at most 100 µm/s"},
		{64, 60, "beyond the 3820 µm length of probe"},
		{5, 1000, "want at most 3.82 µm/s for this duration"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		cfg.DriftUmPerS, cfg.Seconds = c.drift, c.seconds
		_, err := cfg.resolved()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("drift %g over %g s refused: %v", c.drift, c.seconds, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("drift %g over %g s: got %v, want an error containing %q", c.drift, c.seconds, err, c.want)
		}
	}
}
