package compare

import (
	"fmt"
	"math"
	"sort"
)

// Spikes is a set of spikes: sample times and depths (µm), and for ground
// truth the amplitude of each spike's unit in noise standard deviations.
type Spikes struct {
	Times []int64
	Y     []float64
	// Amplitude is optional for detections; for ground truth it places
	// each spike in an amplitude band.
	Amplitude []float64
}

// Band is an amplitude range [Lo, Hi) in noise standard deviations.
type Band struct{ Lo, Hi float64 }

// Options are the matching tolerances.
type Options struct {
	// MaxLag is the largest |detected − true| sample difference (25).
	MaxLag int64
	// MaxDepth is the largest depth difference in µm, exclusive (60).
	MaxDepth float64
	// Bands are the amplitude bands reported separately.
	Bands []Band
}

// Check returns an error if the tolerances are not usable: MaxLag < 0,
// MaxDepth not a positive finite number, or a band whose bounds are not
// finite with Lo < Hi.
func (opt Options) Check() error {
	if opt.MaxLag < 0 {
		return fmt.Errorf("compare: largest lag %d samples must be at least 0", opt.MaxLag)
	}
	if !(opt.MaxDepth > 0) || math.IsInf(opt.MaxDepth, 0) {
		return fmt.Errorf("compare: largest depth difference %g µm must be positive and finite", opt.MaxDepth)
	}
	for _, b := range opt.Bands {
		if !(b.Lo < b.Hi) || math.IsInf(b.Lo, 0) || math.IsInf(b.Hi, 0) {
			return fmt.Errorf("compare: amplitude band %g–%g SD: want finite bounds, low below high", b.Lo, b.Hi)
		}
	}
	return nil
}

// DefaultOptions returns the tolerances of Kilosort4's reference
// comparison: ±25 samples, < 60 µm, bands 5–9, 9–12 and 12–25 noise SD.
func DefaultOptions() Options {
	return Options{MaxLag: 25, MaxDepth: 60, Bands: []Band{{5, 9}, {9, 12}, {12, 25}}}
}

// BandReport is the recall of the true spikes in one amplitude band.
type BandReport struct {
	Band    Band    `json:"band"`
	NTruth  int     `json:"n_truth"`
	Matched int     `json:"matched"`
	Recall  float64 `json:"recall"`
}

// Report is the result of a comparison.
type Report struct {
	Recall     float64      `json:"recall"`
	Precision  float64      `json:"precision"`
	NTruth     int          `json:"n_truth"`
	NDetected  int          `json:"n_detected"`
	Matched    int          `json:"matched"`
	MeanLag    float64      `json:"mean_lag"`
	Bands      []BandReport `json:"bands"`
	TruthMatch []int        `json:"-"` // index of the matched detection per true spike, −1 if none
}

// Match matches det against truth one-to-one. Times need not be sorted.
// It returns an error if the slices of a set disagree in length or the
// tolerances fail [Options.Check].
func Match(truth, det Spikes, opt Options) (Report, error) {
	if err := opt.Check(); err != nil {
		return Report{}, err
	}
	if len(truth.Y) != len(truth.Times) || len(det.Y) != len(det.Times) {
		return Report{}, fmt.Errorf("compare: %d true times with %d depths, %d detected times with %d depths",
			len(truth.Times), len(truth.Y), len(det.Times), len(det.Y))
	}
	if len(truth.Amplitude) != 0 && len(truth.Amplitude) != len(truth.Times) {
		return Report{}, fmt.Errorf("compare: %d true times with %d amplitudes", len(truth.Times), len(truth.Amplitude))
	}
	ti := order(truth.Times)
	di := order(det.Times)

	// Candidate pairs within the tolerances, by a sliding window over the
	// time-sorted detections.
	type pair struct {
		t, d   int
		dt, dy float64
	}
	var pairs []pair
	lo := 0
	for _, t := range ti {
		tt := truth.Times[t]
		for lo < len(di) && det.Times[di[lo]] < tt-opt.MaxLag {
			lo++
		}
		for k := lo; k < len(di) && det.Times[di[k]] <= tt+opt.MaxLag; k++ {
			d := di[k]
			dy := math.Abs(det.Y[d] - truth.Y[t])
			if !(dy < opt.MaxDepth) {
				continue
			}
			pairs = append(pairs, pair{t, d, math.Abs(float64(det.Times[d] - tt)), dy})
		}
	}
	sort.Slice(pairs, func(a, b int) bool {
		p, q := pairs[a], pairs[b]
		switch {
		case p.dt != q.dt:
			return p.dt < q.dt
		case p.dy != q.dy:
			return p.dy < q.dy
		case p.t != q.t:
			return p.t < q.t
		}
		return p.d < q.d
	})
	tm := make([]int, len(truth.Times))
	for i := range tm {
		tm[i] = -1
	}
	dUsed := make([]bool, len(det.Times))
	var matched int
	var lagSum float64
	for _, p := range pairs {
		if tm[p.t] >= 0 || dUsed[p.d] {
			continue
		}
		tm[p.t] = p.d
		dUsed[p.d] = true
		matched++
		lagSum += float64(det.Times[p.d] - truth.Times[p.t])
	}
	r := Report{NTruth: len(truth.Times), NDetected: len(det.Times), Matched: matched, TruthMatch: tm}
	r.Recall = ratio(matched, r.NTruth)
	r.Precision = ratio(matched, r.NDetected)
	if matched > 0 {
		r.MeanLag = lagSum / float64(matched)
	}
	if len(truth.Amplitude) != 0 {
		for _, b := range opt.Bands {
			br := BandReport{Band: b}
			for i, a := range truth.Amplitude {
				if a >= b.Lo && a < b.Hi {
					br.NTruth++
					if tm[i] >= 0 {
						br.Matched++
					}
				}
			}
			br.Recall = ratio(br.Matched, br.NTruth)
			r.Bands = append(r.Bands, br)
		}
	}
	return r, nil
}

// ratio returns a/b, or 0 when b is 0 (an empty set has no recall or
// precision to speak of; 0 keeps reports JSON-encodable).
func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// order returns the indices of x sorted by value, ties by index.
func order(x []int64) []int {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	return idx
}
