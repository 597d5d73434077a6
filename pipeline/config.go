package pipeline

import (
	"fmt"
	"math"

	"dspk/kilosort"
	"dspk/motion"
)

// Config holds the effective parameters of a run: Kilosort4's settings
// ([kilosort.Settings], with their names in the JSON form, so that the
// provenance file dspk.json reads like Kilosort4's ops) and dspk's own.
type Config struct {
	kilosort.Settings
	// Seed seeds template learning (k-means).
	Seed uint64 `json:"seed"`
	// InFlight is the number of windows read ahead.
	InFlight int `json:"read_ahead"`
	// Groups keeps whitening neighbourhoods and detection (the
	// suppression of neighbouring centres) within each group of sites
	// (the probe's shanks: shank_ids, kcoords), so that every
	// stereotrode, tetrode or shank is detected on its own. The common
	// average reference still spans all channels, as the probe is wired
	// to one reference (Kilosort4's rule), unless CARGroups. dspk's
	// extension; off by default (Kilosort4).
	Groups bool `json:"groups"`
	// CARGroups takes the common average reference within each group
	// instead of over all channels: for shanks wired to their own
	// reference. It needs Groups and DoCAR, and every group must have at
	// least [MinCARChannels] channels (a median of a few wires follows
	// the spikes they share, and subtracting it removes part of every
	// spike). dspk's extension; off by default.
	CARGroups bool `json:"car_groups"`
	// Motion holds Kilosort4's motion settings: NBlocks 0 leaves the
	// windows uncorrected; 1 estimates one rigid shift per window and
	// k > 1 a shift per block of 2k − 1 half-overlapping blocks along
	// depth, from a first detection pass, and the later passes then run
	// on windows corrected for it (../shared/docs/kilosort4-sort.md
	// §2–§3). SigInterp, BinningDepth and DriftSmoothing matter only with
	// NBlocks > 0. Kilosort4's default nblocks is 1; dspk detect's is 0
	// ([DefaultConfig]).
	kilosort.Motion
	// Correction names the rule that corrects the windows
	// ([motion.Rule]'s names): "kilosort" (Kilosort4's kriging, the
	// default of dspk detect and drift; "" means it too), "smooth" (dspk's wider, regularised
	// kriging, docs/motion.md) or "auto" ([CorrectionAuto]: smooth when
	// the estimate moves by [AutoSmoothRangeUm] or more, the default of
	// dspk sort).
	Correction string `json:"drift_correction"`
	// Registration names how the motion estimate registers the windows
	// ([motion.Registration]'s names): "kilosort" (Kilosort4's iterated
	// reference; "" means it too) or "pairwise" (every pair of windows
	// within a horizon, solved together; docs/motion.md).
	Registration string `json:"drift_registration,omitempty"`
}

// DefaultConfig returns the configuration of dspk detect with no flags:
// Kilosort4's settings ([kilosort.Defaults]) and motion settings
// ([kilosort.MotionDefaults]) but for nblocks, which is 0 (dspk's choice:
// no motion correction, the detection of Kilosort4's second pass on
// uncorrected windows), and dspk's own: seed 1, two windows read ahead,
// no groups, the correction rule "kilosort" (used only with nblocks > 0).
func DefaultConfig() Config {
	m := kilosort.MotionDefaults()
	m.NBlocks = 0
	return Config{Settings: kilosort.Defaults(), Seed: 1, InFlight: 2, Motion: m,
		Correction: motion.CorrectionKilosort.String()}
}

// DefaultSortConfig returns the configuration of dspk sort with no
// flags: [DefaultConfig] with Kilosort4's nblocks, 1, and dspk's
// correction rule [CorrectionAuto] and pairwise registration
// ([motion.RegisterPairwise]: every pair of windows registered and solved
// together; Kilosort4's registration can put a window that resembles its
// reference at a wrong shift there, docs/motion.md).
func DefaultSortConfig() Config {
	c := DefaultConfig()
	c.NBlocks = kilosort.MotionDefaults().NBlocks
	c.Correction = CorrectionAuto
	c.Registration = motion.RegisterPairwise.String()
	return c
}

// DefaultDriftConfig returns the configuration of dspk drift with no
// flags: [DefaultConfig] with Kilosort4's nblocks, 1, and Kilosort4's
// correction rule (the kriging of [motion.CorrectionKilosort]).
func DefaultDriftConfig() Config {
	c := DefaultConfig()
	c.NBlocks = kilosort.MotionDefaults().NBlocks
	return c
}

// validate checks the parameters that do not depend on the recording.
func (c Config) validate() error {
	switch {
	case c.BatchSize <= 0:
		return fmt.Errorf("batch size %d must be positive", c.BatchSize)
	case c.NT <= 0 || c.NT%2 == 0:
		return fmt.Errorf("template length nt = %d must be positive and odd", c.NT)
	case c.NSkip <= 0:
		return fmt.Errorf("nskip %d must be positive", c.NSkip)
	case c.NearestChans <= 0 || c.NearestTemplates <= 0:
		return fmt.Errorf("nearest_chans %d and nearest_templates %d must be positive", c.NearestChans, c.NearestTemplates)
	case c.WhiteningRange <= 0:
		return fmt.Errorf("whitening range %d must be positive", c.WhiteningRange)
	case !(c.HighpassCutoff > 0) || math.IsInf(c.HighpassCutoff, 0):
		return fmt.Errorf("high-pass cut-off %g Hz must be positive and finite", c.HighpassCutoff)
	case !(c.ThUniversal > 0) || !(c.ThSingleCh > 0) || math.IsInf(c.ThUniversal, 0) || math.IsInf(c.ThSingleCh, 0):
		return fmt.Errorf("thresholds must be positive and finite (Th_universal %g, Th_single_ch %g)", c.ThUniversal, c.ThSingleCh)
	case c.CARGroups && (!c.Groups || !c.DoCAR):
		return fmt.Errorf("CAR within groups needs groups and CAR (-car-groups needs -groups and no -no-car)")
	case c.NBlocks < 0:
		return fmt.Errorf("nblocks %d must be 0 (no motion correction) or positive", c.NBlocks)
	case c.NBlocks > 0 && !validRule(c.Correction):
		return fmt.Errorf("drift correction %q: want one of %s", c.Correction, ruleNames())
	case c.Registration != "" && !validRegistration(c.Registration):
		return fmt.Errorf("drift registration %q: want kilosort or pairwise", c.Registration)
	case c.NBlocks > 0 && (!(c.SigInterp > 0) || math.IsInf(c.SigInterp, 0)):
		return fmt.Errorf("sig_interp %g µm must be positive and finite", c.SigInterp)
	case c.NBlocks > 0 && (!(c.BinningDepth > 0) || math.IsInf(c.BinningDepth, 0)):
		return fmt.Errorf("binning_depth %g µm must be positive and finite", c.BinningDepth)
	case !(c.Tmin >= 0) || math.IsInf(c.Tmin, 0):
		return fmt.Errorf("tmin %g s must be finite and at least 0", c.Tmin)
	case math.IsNaN(float64(c.Tmax)) || !math.IsInf(float64(c.Tmax), 1) && float64(c.Tmax) <= c.Tmin:
		return fmt.Errorf("tmax %g s must be greater than tmin %g s (leave tmax out to use the recording to its end)", float64(c.Tmax), c.Tmin)
	}
	return nil
}

// validRegistration reports whether name is a registration of
// [motion.ParseRegistration].
func validRegistration(name string) bool {
	_, err := motion.ParseRegistration(name)
	return err == nil
}
