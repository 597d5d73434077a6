package compare

import (
	"fmt"
	"math"
)

// MotionEstimate is a drift estimate as dspk drift and dspk detect
// -nblocks write it (drift.npy and its axes).
type MotionEstimate struct {
	// Times are the windows' centre times in seconds and Span the length
	// of a window in seconds (0: the truth is taken at the centre only).
	Times []float64
	Span  float64
	// Depths are the blocks' depths in µm (Kilosort4's yblk).
	Depths []float64
	// Dshift is Kilosort4's dshift [windows × blocks] in µm, row-major:
	// the shift that moves a window's content onto the reference, so the
	// tissue's displacement is estimated by −Dshift.
	Dshift []float64
}

// MotionReport scores a motion estimate against the true displacement.
type MotionReport struct {
	// Windows and Blocks are the estimate's size.
	Windows int `json:"windows"`
	Blocks  int `json:"blocks"`
	// RMS is the root-mean-square error in µm over every window and
	// block after each block's constant offset is removed; MaxAbs the
	// largest absolute error after that removal.
	RMS    float64 `json:"rms_um"`
	MaxAbs float64 `json:"max_abs_um"`
	// BlockDepths, BlockRMS, BlockMaxAbs and BlockOffset are per block:
	// its depth (µm), its RMS and largest error (µm) and the constant
	// removed (mean of estimate − truth, µm).
	BlockDepths []float64 `json:"block_depths_um"`
	BlockRMS    []float64 `json:"block_rms_um"`
	BlockMaxAbs []float64 `json:"block_max_abs_um"`
	BlockOffset []float64 `json:"block_offset_um"`
	// TruthRange is the peak-to-peak range of the true displacement at the
	// blocks' depths (µm): the size of the motion the errors compare with.
	TruthRange float64 `json:"truth_range_um"`
	// Unscored is the RMS error (µm) of the estimate 0 against the same
	// truth, offsets removed alike: what an estimate that saw no motion
	// would score.
	Unscored float64 `json:"rms_no_correction_um"`
	// Warnings say what makes the score doubtful (ScoreMotionDir): an
	// estimate that covers less time than the truth.
	Warnings []string `json:"warnings,omitempty"`
}

// motionSamples is the number of points a window's true displacement is
// averaged over (a window is shifted as a whole, so its mean is what an
// estimate can reach).
const motionSamples = 21

// ScoreMotion compares the estimated displacement −Dshift of est with
// truth(t, y), the true tissue displacement in µm at time t (s) and depth
// y (µm), positive where units appear at larger depth values. The truth
// of a window is its mean over the window's span at the block's depth.
// Each block's constant offset (the reference's own position, which no
// estimate can know) is removed before the errors are taken.
func ScoreMotion(est MotionEstimate, truth func(t, y float64) float64) (MotionReport, error) {
	W, B := len(est.Times), len(est.Depths)
	if W == 0 || B == 0 {
		return MotionReport{}, fmt.Errorf("motion estimate of %d windows and %d blocks: nothing to score", W, B)
	}
	if len(est.Dshift) != W*B {
		return MotionReport{}, fmt.Errorf("motion estimate: %d shifts for %d windows × %d blocks", len(est.Dshift), W, B)
	}
	if !(est.Span >= 0) {
		return MotionReport{}, fmt.Errorf("motion estimate: window span %g s", est.Span)
	}
	r := MotionReport{Windows: W, Blocks: B, BlockDepths: append([]float64(nil), est.Depths...),
		BlockRMS: make([]float64, B), BlockMaxAbs: make([]float64, B), BlockOffset: make([]float64, B)}
	tr := make([]float64, W*B)
	lo, hi := math.Inf(1), math.Inf(-1)
	for w, t := range est.Times {
		for j, y := range est.Depths {
			v := 0.0
			if est.Span == 0 {
				v = truth(t, y)
			} else {
				for k := range motionSamples {
					v += truth(t+est.Span*(float64(k)/(motionSamples-1)-0.5), y)
				}
				v /= motionSamples
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return MotionReport{}, fmt.Errorf("true displacement %g at %g s, depth %g µm", v, t, y)
			}
			tr[w*B+j] = v
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	r.TruthRange = hi - lo
	var sum, sum0 float64
	for j := range B {
		var off, off0 float64
		for w := range W {
			d := -est.Dshift[w*B+j]
			if math.IsNaN(d) || math.IsInf(d, 0) {
				return MotionReport{}, fmt.Errorf("motion estimate: shift %g at window %d, block %d", est.Dshift[w*B+j], w, j)
			}
			off += d - tr[w*B+j]
			off0 -= tr[w*B+j]
		}
		off /= float64(W)
		off0 /= float64(W)
		r.BlockOffset[j] = off
		var s float64
		for w := range W {
			e := -est.Dshift[w*B+j] - tr[w*B+j] - off
			s += e * e
			r.BlockMaxAbs[j] = max(r.BlockMaxAbs[j], math.Abs(e))
			e0 := -tr[w*B+j] - off0
			sum0 += e0 * e0
		}
		sum += s
		r.BlockRMS[j] = math.Sqrt(s / float64(W))
		r.MaxAbs = max(r.MaxAbs, r.BlockMaxAbs[j])
	}
	r.RMS = math.Sqrt(sum / float64(W*B))
	r.Unscored = math.Sqrt(sum0 / float64(W*B))
	return r, nil
}
