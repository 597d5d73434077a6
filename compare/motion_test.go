package compare

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScoreMotion scores an estimate −(truth + per-block offset + known
// error) and checks the report against the errors put in.
func TestScoreMotion(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range [][2]int{{1, 1}, {7, 1}, {13, 9}} {
		W, B := size[0], size[1]
		truth := func(t, y float64) float64 { return 0.5*t - 0.01*y + 3*math.Sin(t) }
		est := MotionEstimate{Span: 0}
		for w := range W {
			est.Times = append(est.Times, 2*float64(w)+1)
		}
		for j := range B {
			est.Depths = append(est.Depths, 100*float64(j)+50)
		}
		errs := make([]float64, W*B)
		for j := range B {
			var m float64
			for w := range W {
				errs[w*B+j] = rng.NormFloat64()
				m += errs[w*B+j]
			}
			for w := range W { // zero mean per block: the offset takes the rest
				errs[w*B+j] -= m / float64(W)
			}
		}
		for w, tm := range est.Times {
			for j, y := range est.Depths {
				est.Dshift = append(est.Dshift, -(truth(tm, y) + 7*float64(j) - 4 + errs[w*B+j]))
			}
		}
		r, err := ScoreMotion(est, truth)
		if err != nil {
			t.Fatal(err)
		}
		var s, mx float64
		for _, e := range errs {
			s += e * e
			mx = max(mx, math.Abs(e))
		}
		if want := math.Sqrt(s / float64(W*B)); math.Abs(r.RMS-want) > 1e-9 {
			t.Errorf("%d×%d: RMS %g, want %g", W, B, r.RMS, want)
		}
		if math.Abs(r.MaxAbs-mx) > 1e-9 {
			t.Errorf("%d×%d: max %g, want %g", W, B, r.MaxAbs, mx)
		}
		for j := range B {
			if want := 7*float64(j) - 4; math.Abs(r.BlockOffset[j]-want) > 1e-9 {
				t.Errorf("%d×%d: block %d offset %g, want %g", W, B, j, r.BlockOffset[j], want)
			}
		}
	}
}

// TestScoreMotionSign: an estimate with the wrong sign scores badly.
func TestScoreMotionSign(t *testing.T) {
	truth := func(t, y float64) float64 { return 2 * t }
	est := MotionEstimate{Times: []float64{1, 3, 5, 7}, Span: 2, Depths: []float64{0}}
	for _, tm := range est.Times {
		est.Dshift = append(est.Dshift, -2*tm)
	}
	r, err := ScoreMotion(est, truth)
	if err != nil || r.RMS > 1e-9 || !(r.Unscored > 4) {
		t.Fatalf("right sign: %+v, %v", r, err)
	}
	for i := range est.Dshift {
		est.Dshift[i] = -est.Dshift[i]
	}
	if r, _ := ScoreMotion(est, truth); !(r.RMS > 8) {
		t.Fatalf("wrong sign scored %g µm", r.RMS)
	}
	if _, err := ScoreMotion(MotionEstimate{Times: []float64{1}, Depths: []float64{0, 1}, Dshift: []float64{1}}, truth); err == nil {
		t.Error("mismatched sizes accepted")
	}
}

// TestScoreMotionSpan: a window's truth is its mean over the window's
// span, so a step inside a window counts by the share of the window past
// it.
func TestScoreMotionSpan(t *testing.T) {
	step := func(t, y float64) float64 {
		if t >= 3.5 {
			return 10
		}
		return 0
	}
	// Windows [0, 2], [2, 4], [4, 6], each sampled at 21 points: six of
	// the second window's (3.5, 3.6, …, 4.0) are past the step at 3.5 s.
	est := MotionEstimate{Times: []float64{1, 3, 5}, Span: 2, Depths: []float64{0}}
	want := []float64{0, 10 * 6.0 / 21, 10}
	for _, v := range want {
		est.Dshift = append(est.Dshift, -v)
	}
	r, err := ScoreMotion(est, step)
	if err != nil {
		t.Fatal(err)
	}
	if r.RMS > 1e-9 || math.Abs(r.TruthRange-10) > 1e-9 {
		t.Errorf("estimate equal to the windows' mean truth scored RMS %g, range %g", r.RMS, r.TruthRange)
	}
	est.Span = 0 // at the centres only: the second window's truth is 0
	if r, _ := ScoreMotion(est, step); !(r.RMS > 1) {
		t.Errorf("without the span the step's window scored %g", r.RMS)
	}
}
