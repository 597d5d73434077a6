package motion

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
)

// TestRegistrationOnSpikes compares the two registrations on the spikes
// of a real detection: DSPK_MOTION_SPIKES names a file of float64 triples
// (window, depth µm, amplitude) and DSPK_MOTION_TRUTH one of the true
// displacement per window (float64, µm). It prints each estimate's RMS
// error after removing the mean offset. An experiment: skipped unless the
// files are named.
func TestRegistrationOnSpikes(t *testing.T) {
	sp, tr := os.Getenv("DSPK_MOTION_SPIKES"), os.Getenv("DSPK_MOTION_TRUTH")
	if sp == "" || tr == "" {
		t.Skip("DSPK_MOTION_SPIKES and DSPK_MOTION_TRUTH not set")
	}
	read := func(p string) []float64 {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float64, len(b)/8)
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		return v
	}
	s, truth := read(sp), read(tr)
	nb := len(truth)
	_, yc := testProbe(384)
	for _, reg := range []Registration{RegisterKilosort, RegisterPairwise} {
		p := DefaultParams()
		p.Registration = reg
		p.Pairwise = DefaultPairwiseParams()
		e, err := NewEstimator(nil, yc, nb, p)
		if err != nil {
			t.Fatal(err)
		}
		ys := make([][]float32, nb)
		as := make([][]float32, nb)
		for i := 0; i+2 < len(s); i += 3 {
			w := int(s[i])
			ys[w] = append(ys[w], float32(s[i+1]))
			as[w] = append(as[w], float32(s[i+2]))
		}
		for w := range nb {
			if err := e.Add(w, ys[w], as[w]); err != nil {
				t.Fatal(err)
			}
		}
		est, err := e.Estimate()
		if err != nil {
			t.Fatal(err)
		}
		var m float64
		for w := range nb {
			m += (est.Dshift[w] + truth[w]) / float64(nb)
		}
		var rms, worst float64
		for w := range nb {
			v := est.Dshift[w] + truth[w] - m
			rms += v * v / float64(nb)
			worst = max(worst, math.Abs(v))
		}
		t.Logf("%v: RMS error %.2f µm, worst %.2f µm", reg, math.Sqrt(rms), worst)
		if os.Getenv("DSPK_MOTION_PRINT") != "" {
			for w := range nb {
				t.Logf("%3d %7.2f %7.2f", w, -est.Dshift[w]+m, truth[w])
			}
		}
	}
}
