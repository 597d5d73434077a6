package motion

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestBandNP1 measures the banded matrix on NP1 (384 sites, 20-µm rows)
// for shifts across one site pitch: the magnitude of M's entries against
// the depth distance between output target and input site, and the
// entries Apply keeps (about 50 per row at BandTol 10⁻⁶: |M| falls by
// about 3 per 20 µm). It fails above 64 per row (a sixth of the dense
// matrix).
func TestBandNP1(t *testing.T) {
	x, y := testProbe(384)
	C := len(x)
	for _, c := range []struct {
		rule Rule
		sh   float64
	}{{CorrectionKilosort, 0}, {CorrectionKilosort, 5}, {CorrectionKilosort, 10}, {CorrectionKilosort, 20}, {CorrectionKilosort, 37.5}, {CorrectionSmooth, 0}, {CorrectionSmooth, 10}} {
		sh := c.sh
		est := &Estimate{Windows: 1, Blocks: 1, Dshift: []float64{sh}, Yblk: []float64{1929}, Spikes: []int{1}}
		k, err := NewCorrectorRule(nil, x, y, DefaultParams(), est, c.rule)
		if err != nil {
			t.Fatal(err)
		}
		M := k.Matrix(0)
		kept := k.Kept(0)
		// Largest |M| per 20-µm distance band, over rows away from the ends.
		var mx [12]float64
		for c := 40; c < C-40; c++ {
			for j := range C {
				d := int(math.Abs(y[c]-sh-y[j]) / 20)
				if d < len(mx) {
					mx[d] = math.Max(mx[d], math.Abs(float64(M[c*C+j])))
				}
			}
		}
		var b strings.Builder
		for d, v := range mx {
			fmt.Fprintf(&b, " %d:%.1e", 20*d, v)
		}
		t.Logf("%s, shift %4.1f µm: kept %d of %d entries (%.1f per row); max |M| by distance (µm):%s", c.rule, sh, kept, C*C, float64(kept)/float64(C), b.String())
		if c.rule == CorrectionKilosort && kept > 64*C {
			t.Errorf("shift %v: band of %d entries", sh, kept)
		}
	}
}
