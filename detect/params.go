package detect

import (
	"fmt"

	"dspk/kilosort"
)

// Params are the settings of universal-template detection: Kilosort4's
// ([kilosort.Settings]: NT, NT0Min, ThUniversal, ThSingleCh, NTemplates,
// NPCs, TemplateSizes, MinTemplateSize, NearestChans, NearestTemplates,
// MaxChannelDistance, Dmin and Dminx are read here) and two of dspk's;
// [DefaultParams] gives Kilosort4's defaults.
type Params struct {
	kilosort.Settings
	// MaxClips bounds the clips collected to learn templates
	// (kilosort.MaxClips, hard-coded in Kilosort4).
	MaxClips int `json:"max_clips"`
	// Seed seeds the k-means initialisation of template learning.
	Seed uint64 `json:"seed"`
	// Groups keeps detection within each group of sites (the probe's
	// Shank: shank_ids, kcoords), dspk's extension for stereotrodes,
	// tetrodes and shanks that see different cells: a centre's channels
	// and the centres a detection must beat are of its own group only.
	// Off (Kilosort4's rule) by default.
	Groups bool `json:"groups"`
}

// DefaultParams returns Kilosort4's defaults (kilosort.Defaults) with
// kilosort.MaxClips clips and seed 1.
func DefaultParams() Params {
	return Params{Settings: kilosort.Defaults(), MaxClips: kilosort.MaxClips, Seed: 1}
}

// Validate reports settings that cannot work.
func (p Params) Validate() error {
	switch {
	case p.NT < 3 || p.NT%2 == 0:
		return fmt.Errorf("detect: template length nt = %d must be odd and at least 3", p.NT)
	case p.NT0Min < 0 || p.NT0Min >= p.NT:
		return fmt.Errorf("detect: trough index nt0min = %d outside 0..%d", p.NT0Min, p.NT-1)
	case !(p.ThUniversal > 0):
		return fmt.Errorf("detect: Th_universal = %g must be positive", p.ThUniversal)
	case !(p.ThSingleCh > 0):
		return fmt.Errorf("detect: Th_single_ch = %g must be positive", p.ThSingleCh)
	case p.NTemplates < 1 || p.NPCs < 1 || p.NPCs > p.NT:
		return fmt.Errorf("detect: %d templates and %d PCs of length %d", p.NTemplates, p.NPCs, p.NT)
	case p.TemplateSizes < 1 || !(p.MinTemplateSize > 0):
		return fmt.Errorf("detect: %d template sizes from %g µm", p.TemplateSizes, p.MinTemplateSize)
	case p.NearestChans < 1 || p.NearestTemplates < 1:
		return fmt.Errorf("detect: %d nearest channels and %d nearest centres", p.NearestChans, p.NearestTemplates)
	case !(p.MaxChannelDistance >= 0) || p.Dmin < 0 || !(p.Dminx > 0):
		return fmt.Errorf("detect: max channel distance %g, dmin %g, dminx %g µm", p.MaxChannelDistance, p.Dmin, p.Dminx)
	case p.MaxClips < 1:
		return fmt.Errorf("detect: at most %d clips", p.MaxClips)
	}
	return nil
}
