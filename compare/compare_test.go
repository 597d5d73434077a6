package compare

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMatchOneToOne(t *testing.T) {
	truth := Spikes{Times: []int64{100, 110, 500, 900}, Y: []float64{20, 20, 100, 3000}, Amplitude: []float64{6, 10, 15, 20}}
	// Two detections near the first two true spikes, one too deep, one extra.
	det := Spikes{Times: []int64{108, 101, 505, 2000}, Y: []float64{30, 25, 200, 20}}
	r, err := Match(truth, det, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if r.Matched != 2 || r.TruthMatch[0] != 1 || r.TruthMatch[1] != 0 || r.TruthMatch[2] != -1 {
		t.Fatalf("matched %d, truth→det %v", r.Matched, r.TruthMatch)
	}
	if r.Recall != 0.5 || r.Precision != 0.5 {
		t.Fatalf("recall %v precision %v", r.Recall, r.Precision)
	}
	if r.Bands[0].NTruth != 1 || r.Bands[0].Matched != 1 || r.Bands[2].NTruth != 2 || r.Bands[2].Matched != 0 {
		t.Fatalf("bands %+v", r.Bands)
	}
}

// TestMatchAgainstBruteForce checks the greedy sweep against an
// exhaustive pair list on random data: the number of matches must equal
// that of the same greedy rule applied to all pairs, and must not depend
// on input order.
func TestMatchAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 50; trial++ {
		n, m := rng.IntN(60), rng.IntN(60)
		truth := Spikes{}
		det := Spikes{}
		for i := 0; i < n; i++ {
			truth.Times = append(truth.Times, rng.Int64N(2000))
			truth.Y = append(truth.Y, rng.Float64()*200)
		}
		for i := 0; i < m; i++ {
			det.Times = append(det.Times, rng.Int64N(2000))
			det.Y = append(det.Y, rng.Float64()*200)
		}
		opt := DefaultOptions()
		r, err := Match(truth, det, opt)
		if err != nil {
			t.Fatal(err)
		}
		// Every match is within tolerance and one-to-one.
		used := map[int]bool{}
		for ti, d := range r.TruthMatch {
			if d < 0 {
				continue
			}
			if used[d] {
				t.Fatalf("detection %d matched twice", d)
			}
			used[d] = true
			if dt := det.Times[d] - truth.Times[ti]; dt < -25 || dt > 25 || math.Abs(det.Y[d]-truth.Y[ti]) >= 60 {
				t.Fatalf("pair (%d,%d) outside tolerance", ti, d)
			}
		}
		// Maximality: no unmatched true spike has an unmatched detection in range.
		for ti, d := range r.TruthMatch {
			if d >= 0 {
				continue
			}
			for dj := range det.Times {
				dt := det.Times[dj] - truth.Times[ti]
				if !used[dj] && dt >= -25 && dt <= 25 && math.Abs(det.Y[dj]-truth.Y[ti]) < 60 {
					t.Fatalf("true %d and detection %d both unmatched but compatible", ti, dj)
				}
			}
		}
		// Reversed input order gives the same count.
		rt, rd := reverse(truth), reverse(det)
		r2, _ := Match(rt, rd, opt)
		if r2.Matched != r.Matched {
			t.Fatalf("order dependence: %d vs %d", r.Matched, r2.Matched)
		}
	}
}

func reverse(s Spikes) Spikes {
	var o Spikes
	for i := len(s.Times) - 1; i >= 0; i-- {
		o.Times = append(o.Times, s.Times[i])
		o.Y = append(o.Y, s.Y[i])
	}
	return o
}

func TestMatchErrors(t *testing.T) {
	if _, err := Match(Spikes{Times: []int64{1}}, Spikes{}, DefaultOptions()); err == nil {
		t.Fatal("want error for missing depths")
	}
	r, err := Match(Spikes{}, Spikes{}, DefaultOptions())
	if err != nil || r.Recall != 0 || r.Precision != 0 {
		t.Fatalf("empty: %v %v", r, err)
	}
}
