package detect

import "fmt"

// Params are the settings of universal-template detection, named after
// Kilosort4's (kilosort4.md §13); [DefaultParams] gives Kilosort4's
// defaults.
type Params struct {
	// NT is the template length in samples (nt, odd).
	NT int `json:"nt"`
	// NT0Min is the trough index within a template (nt0min).
	NT0Min int `json:"nt0min"`
	// ThUniversal is the detection threshold on the best template
	// response, in whitened SD (Th_universal).
	ThUniversal float64 `json:"Th_universal"`
	// ThSingleCh is the threshold on |x| for the single-channel peaks
	// whose clips teach the templates (Th_single_ch).
	ThSingleCh float64 `json:"Th_single_ch"`
	// NTemplates is the number of universal temporal templates K
	// (n_templates).
	NTemplates int `json:"n_templates"`
	// NPCs is the number of PCA components P of the feature basis
	// (n_pcs).
	NPCs int `json:"n_pcs"`
	// TemplateSizes is the number S of spatial footprint sizes
	// (template_sizes); sizes are MinTemplateSize·(s+1) µm.
	TemplateSizes int `json:"template_sizes"`
	// MinTemplateSize is the smallest footprint size σ in µm
	// (min_template_size).
	MinTemplateSize float64 `json:"min_template_size"`
	// NearestChans is the number of channels per centre nC
	// (nearest_chans); clipped to the number of channels.
	NearestChans int `json:"nearest_chans"`
	// NearestTemplates is the number of centres nC2 over which a
	// detection must be the maximum (nearest_templates); clipped to the
	// number of centres.
	NearestTemplates int `json:"nearest_templates"`
	// MaxChannelDistance drops centres farther than this from every
	// channel, in µm (max_channel_distance).
	MaxChannelDistance float64 `json:"max_channel_distance"`
	// Dmin is the vertical centre step ×2 in µm; 0 means the median
	// spacing of the distinct channel depths (dmin = None).
	Dmin float64 `json:"dmin"`
	// Dminx is the horizontal centre step ×2 in µm (dminx).
	Dminx float64 `json:"dminx"`
	// MaxClips bounds the clips collected to learn templates (500 000
	// in Kilosort4, hard-coded there).
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

// DefaultParams returns Kilosort4's defaults: nt 61, nt0min 20,
// Th_universal 9, Th_single_ch 6, 6 templates, 6 PCs, 5 sizes from
// 10 µm, 10 nearest channels, 100 nearest centres, 32 µm maximum channel
// distance, dmin from the geometry, dminx 32 µm, 500 000 clips.
func DefaultParams() Params {
	return Params{
		NT: 61, NT0Min: 20,
		ThUniversal: 9, ThSingleCh: 6,
		NTemplates: 6, NPCs: 6,
		TemplateSizes: 5, MinTemplateSize: 10,
		NearestChans: 10, NearestTemplates: 100,
		MaxChannelDistance: 32, Dmin: 0, Dminx: 32,
		MaxClips: 500000,
		Seed:     1,
	}
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
