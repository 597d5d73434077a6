package pipeline

import (
	"encoding/json"
	"fmt"
	"math"

	"dspk/recording"
)

// Config holds the effective parameters of a run. Field names follow
// Kilosort4's settings (kilosort4.md §13) in their JSON form, so that the
// provenance file dspk.json reads like Kilosort4's ops.
type Config struct {
	// NT is the number of samples a window owns (batch_size).
	NT int `json:"batch_size"`
	// Pad is the context on each side of a window (nt), also the length of
	// a template.
	Pad int `json:"nt"`
	// Tmin and Tmax limit the samples used, in seconds (Tmax +Inf: to the
	// end). Tmin must be finite and ≥ 0 and Tmax > Tmin.
	Tmin float64 `json:"tmin"`
	Tmax float64 `json:"tmax"`
	// NSkip is the stride of the windows used for whitening and template
	// learning (nskip).
	NSkip int `json:"nskip"`
	// WhiteningRange is the number of nearest channels of local whitening.
	WhiteningRange int `json:"whitening_range"`
	// Invert flips the sign of the data (invert_sign).
	Invert bool `json:"invert_sign"`
	// CAR enables the lower-median common average reference (do_CAR).
	CAR bool `json:"do_CAR"`
	// HighpassHz is the high-pass cut-off (highpass_cutoff).
	HighpassHz float64 `json:"highpass_cutoff"`
	// ThUniversal is the detection threshold in whitened SD (Th_universal).
	ThUniversal float64 `json:"Th_universal"`
	// ThSingleCh is the threshold of the clips used to learn templates
	// (Th_single_ch).
	ThSingleCh float64 `json:"Th_single_ch"`
	// Seed seeds template learning (k-means).
	Seed uint64 `json:"seed"`
	// InFlight is the number of windows read ahead.
	InFlight int `json:"read_ahead"`
	// NearestChans is the number of channels per template centre
	// (nearest_chans, 10).
	NearestChans int `json:"nearest_chans"`
	// NearestTemplates is the number of nearest centres a detection must
	// beat (nearest_templates, 100).
	NearestTemplates int `json:"nearest_templates"`
	// Groups keeps CAR, whitening neighbourhoods and detection within
	// each group of sites (the probe's shanks: shank_ids, kcoords), so
	// that every stereotrode, tetrode or shank is detected on its own.
	// dspk's extension; off by default (Kilosort4).
	Groups bool `json:"groups"`
}

// WhiteningEps is the absolute eigenvalue floor of Kilosort4's local ZCA.
const WhiteningEps = 1e-6

// DefaultConfig returns Kilosort4's defaults.
func DefaultConfig() Config {
	return Config{
		NT: recording.DefaultNT, Pad: recording.DefaultPad,
		Tmax: math.Inf(1), NSkip: 25, WhiteningRange: 32,
		CAR: true, HighpassHz: 300, ThUniversal: 9, ThSingleCh: 6,
		Seed: 1, InFlight: 2,
		NearestChans: 10, NearestTemplates: 100,
	}
}

// validate checks the parameters that do not depend on the recording.
func (c Config) validate() error {
	switch {
	case c.NT <= 0:
		return fmt.Errorf("batch size %d must be positive", c.NT)
	case c.Pad <= 0 || c.Pad%2 == 0:
		return fmt.Errorf("template length nt = %d must be positive and odd", c.Pad)
	case c.NSkip <= 0:
		return fmt.Errorf("nskip %d must be positive", c.NSkip)
	case c.NearestChans <= 0 || c.NearestTemplates <= 0:
		return fmt.Errorf("nearest_chans %d and nearest_templates %d must be positive", c.NearestChans, c.NearestTemplates)
	case c.WhiteningRange <= 0:
		return fmt.Errorf("whitening range %d must be positive", c.WhiteningRange)
	case !(c.HighpassHz > 0) || math.IsInf(c.HighpassHz, 0):
		return fmt.Errorf("high-pass cut-off %g Hz must be positive and finite", c.HighpassHz)
	case !(c.ThUniversal > 0) || !(c.ThSingleCh > 0) || math.IsInf(c.ThUniversal, 0) || math.IsInf(c.ThSingleCh, 0):
		return fmt.Errorf("thresholds must be positive and finite (Th_universal %g, Th_single_ch %g)", c.ThUniversal, c.ThSingleCh)
	case !(c.Tmin >= 0) || math.IsInf(c.Tmin, 0):
		return fmt.Errorf("tmin %g s must be finite and at least 0", c.Tmin)
	case math.IsNaN(c.Tmax) || c.Tmax <= c.Tmin:
		return fmt.Errorf("tmax %g s must be greater than tmin %g s (leave tmax out to use the recording to its end)", c.Tmax, c.Tmin)
	}
	return nil
}

// MarshalJSON writes the configuration with an unbounded Tmax as null
// (JSON has no infinity; validate refuses every other non-finite value).
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	var tmax any = c.Tmax
	if math.IsInf(c.Tmax, 0) || math.IsNaN(c.Tmax) {
		tmax = nil
	}
	return json.Marshal(struct {
		plain
		Tmax any `json:"tmax"`
	}{plain(c), tmax})
}
