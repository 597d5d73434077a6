package kilosort

import (
	"encoding/json"
	"math"
)

// Settings are the Kilosort4 settings of dspk's detection front end, named
// and defaulted as in Kilosort4 (kilosort4.md §13).
type Settings struct {
	// Fs is the sample rate in Hz (fs, 30000).
	Fs float64 `json:"fs"`
	// BatchSize is the number of samples a window owns (batch_size,
	// 60000; Kilosort4's ops["NT"]).
	BatchSize int `json:"batch_size"`
	// NT is the template length in samples, odd, and the context added on
	// each side of a window (nt, 61).
	NT int `json:"nt"`
	// NT0Min is the trough index within a template (nt0min; None in
	// Kilosort4 means int(20·nt/61), [DefaultNT0Min]).
	NT0Min int `json:"nt0min"`
	// Tmin and Tmax limit the samples used, in seconds (tmin 0, tmax +Inf:
	// to the end).
	Tmin float64  `json:"tmin"`
	Tmax EndLimit `json:"tmax"`
	// NSkip is the stride of the windows used for the whitening statistic
	// and for template learning (nskip, 25).
	NSkip int `json:"nskip"`
	// WhiteningRange is the number of nearest channels of each channel's
	// local whitening (whitening_range, 32).
	WhiteningRange int `json:"whitening_range"`
	// HighpassCutoff is the Butterworth high-pass cut-off in Hz
	// (highpass_cutoff, 300).
	HighpassCutoff float64 `json:"highpass_cutoff"`
	// DoCAR subtracts the lower median across channels from every time
	// column (do_CAR, true).
	DoCAR bool `json:"do_CAR"`
	// InvertSign flips the sign of the data (invert_sign, false).
	InvertSign bool `json:"invert_sign"`
	// ThUniversal is the detection threshold on the best template
	// response, in whitened SD (Th_universal, 9).
	ThUniversal float64 `json:"Th_universal"`
	// ThSingleCh is the threshold on |x| of the single-channel peaks whose
	// clips teach the templates (Th_single_ch, 6).
	ThSingleCh float64 `json:"Th_single_ch"`
	// NTemplates is the number K of universal temporal templates
	// (n_templates, 6).
	NTemplates int `json:"n_templates"`
	// NPCs is the number P of PCA components of the feature basis (n_pcs,
	// 6).
	NPCs int `json:"n_pcs"`
	// TemplateSizes is the number S of spatial footprint sizes
	// (template_sizes, 5); sizes are MinTemplateSize·(s+1) µm.
	TemplateSizes int `json:"template_sizes"`
	// MinTemplateSize is the smallest footprint size σ in µm
	// (min_template_size, 10).
	MinTemplateSize float64 `json:"min_template_size"`
	// NearestChans is the number nC of channels per template centre
	// (nearest_chans, 10); clipped to the number of channels.
	NearestChans int `json:"nearest_chans"`
	// NearestTemplates is the number nC2 of centres over which a detection
	// must be the maximum (nearest_templates, 100); clipped to the number
	// of centres.
	NearestTemplates int `json:"nearest_templates"`
	// MaxChannelDistance drops centres farther than this from every
	// channel, in µm (max_channel_distance, 32).
	MaxChannelDistance float64 `json:"max_channel_distance"`
	// Dmin is the vertical centre step ×2 in µm; 0 means the median
	// spacing of the distinct channel depths (dmin, None).
	Dmin float64 `json:"dmin"`
	// Dminx is the horizontal centre step ×2 in µm (dminx, 32).
	Dminx float64 `json:"dminx"`
}

// Values Kilosort4 hard-codes (kilosort4.md §4–§10).
const (
	// HighpassOrder is the order of the Butterworth high-pass.
	HighpassOrder = 3
	// WhiteningEps is the absolute eigenvalue floor of the local ZCA.
	WhiteningEps = 1e-6
	// MaxClips bounds the clips collected to learn the universal
	// templates.
	MaxClips = 500000
)

// Defaults returns Kilosort4's defaults.
func Defaults() Settings {
	return Settings{
		Fs: 30000, BatchSize: 60000, NT: 61, NT0Min: DefaultNT0Min(61),
		Tmin: 0, Tmax: EndLimit(math.Inf(1)),
		NSkip: 25, WhiteningRange: 32,
		HighpassCutoff: 300, DoCAR: true, InvertSign: false,
		ThUniversal: 9, ThSingleCh: 6,
		NTemplates: 6, NPCs: 6,
		TemplateSizes: 5, MinTemplateSize: 10,
		NearestChans: 10, NearestTemplates: 100,
		MaxChannelDistance: 32, Dmin: 0, Dminx: 32,
	}
}

// DefaultNT0Min is Kilosort4's trough index for templates of nt samples
// when nt0min is None: int(20·nt/61), 20 for nt = 61.
func DefaultNT0Min(nt int) int { return 20 * nt / 61 }

// EndLimit is an upper time limit in seconds; +Inf, or any value ≤ 0 or
// NaN, means none (to the end). JSON, which has no infinity, writes none
// as null and reads null as +Inf.
type EndLimit float64

// None reports whether l sets no limit.
func (l EndLimit) None() bool { return !(l > 0) || math.IsInf(float64(l), 1) }

// MarshalJSON writes l, or null for no limit.
func (l EndLimit) MarshalJSON() ([]byte, error) {
	if l.None() {
		return []byte("null"), nil
	}
	return json.Marshal(float64(l))
}

// UnmarshalJSON reads a number, or null as +Inf.
func (l *EndLimit) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*l = EndLimit(math.Inf(1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*l = EndLimit(f)
	return nil
}
