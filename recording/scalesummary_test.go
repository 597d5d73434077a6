package recording

import "testing"

func TestScaleSummary(t *testing.T) {
	for _, c := range []struct {
		uv   []float64
		want string
	}{
		{nil, "unknown"},
		{[]float64{0, 0}, "unknown"},
		{[]float64{2.34375, 2.34375, 0}, "2.34375 (2 ch); 1 unscaled (sync)"},
		{[]float64{3, 1, 3}, "1 (1 ch), 3 (2 ch)"},
		{[]float64{1, 2, 3, 4, 5}, "1 (1 ch), 2 (1 ch), 3 (1 ch), 4 (1 ch), … (5 distinct)"},
	} {
		if got := ScaleSummary(c.uv); got != c.want {
			t.Errorf("ScaleSummary(%v) = %q, want %q", c.uv, got, c.want)
		}
	}
}
