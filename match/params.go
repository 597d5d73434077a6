package match

import (
	"fmt"
	"math"

	"dspk/kilosort"
)

// Params are the settings of learned-template matching under Kilosort4's
// names: its matching settings ([kilosort.Matching]) and those of the
// detection front end it shares (nt, nt0min, nearest_chans);
// [DefaultParams] gives Kilosort4's defaults of all of them.
type Params struct {
	kilosort.Matching
	// NT is the template length nt (61); the window has NT columns of
	// context on each side.
	NT int `json:"nt"`
	// NT0Min is the trough sample within a template (nt0min, 20).
	NT0Min int `json:"nt0min"`
	// NearestChans is the number of feature channels per spike
	// (nearest_chans, 10).
	NearestChans int `json:"nearest_chans"`
}

// DefaultParams returns Kilosort4's defaults ([kilosort.MatchingDefaults]
// and [kilosort.Defaults]).
func DefaultParams() Params {
	ks := kilosort.Defaults()
	return Params{Matching: kilosort.MatchingDefaults(), NT: ks.NT, NT0Min: ks.NT0Min, NearestChans: ks.NearestChans}
}

// ValidateSettings reports the first of Kilosort4's matching settings s
// that cannot work, naming it.
func ValidateSettings(s kilosort.Matching) error {
	switch {
	case !(s.ThLearned > 0) || math.IsInf(s.ThLearned, 0):
		return fmt.Errorf("match: Th_learned = %g must be positive and finite", s.ThLearned)
	case s.MaxPeels < 1:
		return fmt.Errorf("match: max_peels = %d must be at least 1", s.MaxPeels)
	}
	return nil
}

// Validate reports settings that cannot work.
func (p Params) Validate() error {
	if err := ValidateSettings(p.Matching); err != nil {
		return err
	}
	switch {
	case p.NT < 3 || p.NT%2 == 0:
		return fmt.Errorf("match: template length nt = %d must be odd and at least 3", p.NT)
	case p.NT0Min < 0 || p.NT0Min >= p.NT:
		return fmt.Errorf("match: trough index nt0min = %d outside 0..%d", p.NT0Min, p.NT-1)
	case p.NearestChans < 1:
		return fmt.Errorf("match: nearest_chans = %d must be at least 1", p.NearestChans)
	}
	return nil
}

// Templates are the learned templates in the PCA basis: Kilosort4's U
// (there [N', P, C]) stored here as [N][C][P], with the basis wPCA.
type Templates struct {
	// N, C and P are the templates, channels and PCs.
	N, C, P int
	// U holds the coefficients, U[(u*C+c)*P+p].
	U []float32
	// WPCA is the PCA basis, P×nt row-major.
	WPCA []float32
}

// check reports templates that do not fit nt.
func (tm *Templates) check(nt int) error {
	switch {
	case tm.N < 1 || tm.C < 1 || tm.P < 1:
		return fmt.Errorf("match: %d templates of %d channels and %d PCs", tm.N, tm.C, tm.P)
	case len(tm.U) != tm.N*tm.C*tm.P:
		return fmt.Errorf("match: %d template values for %d×%d×%d", len(tm.U), tm.N, tm.C, tm.P)
	case len(tm.WPCA) != tm.P*nt:
		return fmt.Errorf("match: %d basis values for %d PCs of %d samples", len(tm.WPCA), tm.P, nt)
	}
	for i, v := range tm.U {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("match: template %d channel %d PC %d is %g", i/(tm.C*tm.P), i/tm.P%tm.C, i%tm.P, v)
		}
	}
	for i, v := range tm.WPCA {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("match: basis PC %d sample %d is %g", i/nt, i%nt, v)
		}
	}
	for u := 0; u < tm.N; u++ {
		var s float64
		for _, v := range tm.U[u*tm.C*tm.P : (u+1)*tm.C*tm.P] {
			s += float64(v) * float64(v)
		}
		if s == 0 {
			return fmt.Errorf("match: template %d is all zero", u)
		}
	}
	return nil
}

// Spikes holds matched spikes as a struct of slices, one entry per spike
// (features NC·P per spike).
type Spikes struct {
	// NC and P are the feature channels and PCs per spike.
	NC, P int
	// Sample is the file sample of the spike's trough.
	Sample []int64
	// Template is the learned template u.
	Template []int32
	// Amplitude is Kilosort4's q = B[u,t]/‖U_u‖, the template's projection
	// in whitened units (its st[:, 2]).
	Amplitude []float32
	// Coef is the least-squares coefficient a = B[u,t]/‖U_u‖² of the
	// subtracted template.
	Coef []float32
	// Features holds tF: Features[(n*NC+r)*P+p] for the r-th channel of
	// [Matcher.Channels] of the spike's template.
	Features []float32
}

// Len returns the number of spikes.
func (s *Spikes) Len() int { return len(s.Sample) }

// Reset empties s, keeping its capacity.
func (s *Spikes) Reset() {
	s.Sample, s.Template, s.Amplitude, s.Coef, s.Features = s.Sample[:0], s.Template[:0], s.Amplitude[:0], s.Coef[:0], s.Features[:0]
}
