package sim

import (
	"fmt"
	"math"
	"slices"

	"dspk/probe"
)

// Config describes a synthetic recording. Start from [DefaultConfig]; the
// zero value is not valid. Counts are int16 ADC units of the file.
type Config struct {
	// Seconds is the duration; the recording has round(Seconds·SampleRate)
	// samples.
	Seconds float64 `json:"seconds"`
	// SampleRate is the sampling rate in Hz (30000).
	SampleRate float64 `json:"sample_rate"`
	// Units is the number of simulated neurons (120).
	Units int `json:"units"`
	// Seed selects the random streams; equal configs give equal bytes.
	Seed uint64 `json:"seed"`
	// Probe is the site geometry; nil means [probe.NP1] (384 sites in a
	// 385-channel file whose last row is the sync channel).
	Probe *probe.Probe `json:"probe,omitempty"`

	// NoiseSD is the standard deviation of each site's local noise in
	// counts (10); unit amplitudes are multiples of it.
	NoiseSD float64 `json:"noise_sd"`
	// NoiseCorrUm is the σ in µm of the Gaussian kernel that correlates
	// the noise of neighbouring sites (20); 0 gives independent sites.
	NoiseCorrUm float64 `json:"noise_corr_um"`
	// CommonModeSD is the SD in counts of the broadband noise shared by
	// all sites (3).
	CommonModeSD float64 `json:"common_mode_sd"`
	// CommonModeSine is the amplitude in counts of a shared sine of
	// frequency CommonModeHz (20 counts at 7 Hz).
	CommonModeSine float64 `json:"common_mode_sine"`
	// CommonModeHz is the frequency of the shared sine (7).
	CommonModeHz float64 `json:"common_mode_hz"`
	// OffsetMax bounds the per-site DC offsets, drawn uniformly from
	// [−OffsetMax, OffsetMax] counts (300).
	OffsetMax float64 `json:"offset_max"`
	// DriftUmPerS is the speed of a rigid upward drift of all units in
	// µm/s (0: none).
	DriftUmPerS float64 `json:"drift_um_per_s"`
	// MicrovoltsPerCount is the scale of the site channels (2.34375, the
	// Neuropixels 1.0 gain of 500).
	MicrovoltsPerCount float64 `json:"microvolts_per_count"`

	// AmplitudeMin and AmplitudeMax bound the units' peak amplitudes on
	// their best site, in noise SDs (5 and 25); the distribution is
	// log-uniform.
	AmplitudeMin float64 `json:"amplitude_min"`
	AmplitudeMax float64 `json:"amplitude_max"`
	// RateMin and RateMax bound the units' mean firing rates in Hz (3 and
	// 15); the distribution is uniform.
	RateMin float64 `json:"rate_min"`
	RateMax float64 `json:"rate_max"`
	// RefractoryMs is the dead time after each spike in ms (2).
	RefractoryMs float64 `json:"refractory_ms"`

	// The fields below default to zero, which keeps the model above; see
	// docs/sim.md for what each adds and the presets that use them.

	// MotionSineUm is the amplitude in µm of a sinusoidal motion of the
	// tissue (breathing, heartbeat), MotionSineHz its frequency; the
	// displacement is MotionSineUm·sin(2π·MotionSineHz·t), 0 at t = 0.
	MotionSineUm float64 `json:"motion_sine_um,omitempty"`
	MotionSineHz float64 `json:"motion_sine_hz,omitempty"`
	// MotionSteps are sudden displacements: from the first sample at or
	// after TimeS on, the tissue is Um µm further up.
	MotionSteps []MotionStep `json:"motion_steps,omitempty"`
	// MotionTopGain makes the motion non-rigid: the displacement of the
	// tissue at the top of the probe (its largest site y) is MotionTopGain
	// times that at the bottom (its smallest y), linearly in between
	// (tissue depths at time 0). 0 (or 1) is rigid.
	MotionTopGain float64 `json:"motion_top_gain,omitempty"`
	// MotionTruth asks for the motion truth ([Truth.Motion],
	// [Truth.SpikePos]) even when nothing moves; any motion also gives it.
	MotionTruth bool `json:"motion_truth,omitempty"`

	// UnitZMinUm and UnitZMaxUm, when UnitZMaxUm > 0, bound the units'
	// distances from the probe plane, and the distance depends on the
	// amplitude (a large unit cannot be far): see docs/sim.md. Both 0
	// place units 2–10 µm from the plane whatever their amplitude.
	UnitZMinUm float64 `json:"unit_z_min_um,omitempty"`
	UnitZMaxUm float64 `json:"unit_z_max_um,omitempty"`
	// SimilarPairs is the number of unit pairs whose second unit is a
	// near copy of the first (same waveform family, times and rebound
	// within ±3 %, amplitude within ×0.8–1.25), 10–30 µm away from it:
	// units 2i and 2i+1 for i < SimilarPairs.
	SimilarPairs int `json:"similar_pairs,omitempty"`
	// BurstFraction is the fraction of units that fire bursts: a quarter
	// of their spikes start a burst of 2–5 spikes 3–10 ms apart, each
	// 15–30 % smaller than the one before (the unit's mean rate counts
	// every spike).
	BurstFraction float64 `json:"burst_fraction,omitempty"`
	// Preset is the name of the preset the config came from, if any; it
	// changes nothing in the output but its provenance.
	Preset string `json:"preset,omitempty"`
}

// MotionStep is a sudden displacement of the tissue (see
// Config.MotionSteps).
type MotionStep struct {
	// TimeS is the time of the step in seconds.
	TimeS float64 `json:"time_s"`
	// Um is its size in µm; positive moves units up (to larger y).
	Um float64 `json:"um"`
}

// DefaultConfig returns a 60-s Neuropixels 1.0 recording of 120 units,
// the set-up of Kilosort4's reference detection run (kilosort4.md §11.3).
func DefaultConfig() Config {
	return Config{
		Seconds:            60,
		SampleRate:         30000,
		Units:              120,
		Seed:               1,
		NoiseSD:            10,
		NoiseCorrUm:        20,
		CommonModeSD:       3,
		CommonModeSine:     20,
		CommonModeHz:       7,
		OffsetMax:          300,
		MicrovoltsPerCount: 2.34375,
		AmplitudeMin:       5,
		AmplitudeMax:       25,
		RateMin:            3,
		RateMax:            15,
		RefractoryMs:       2,
	}
}

// Samples returns the number of samples the config describes.
func (c Config) Samples() int64 { return int64(math.Round(c.Seconds * c.SampleRate)) }

// resolved returns a copy of c with the default probe filled in and a deep
// copy of the probe, after checking every field.
func (c Config) resolved() (Config, error) {
	bad := func(format string, a ...any) (Config, error) {
		return Config{}, fmt.Errorf("sim: config: "+format, a...)
	}
	finite := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("sim: config: %s is %g", name, v)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"Seconds", c.Seconds}, {"SampleRate", c.SampleRate}, {"NoiseSD", c.NoiseSD},
		{"NoiseCorrUm", c.NoiseCorrUm}, {"CommonModeSD", c.CommonModeSD},
		{"CommonModeSine", c.CommonModeSine}, {"CommonModeHz", c.CommonModeHz},
		{"OffsetMax", c.OffsetMax}, {"DriftUmPerS", c.DriftUmPerS},
		{"MicrovoltsPerCount", c.MicrovoltsPerCount}, {"AmplitudeMin", c.AmplitudeMin},
		{"AmplitudeMax", c.AmplitudeMax}, {"RateMin", c.RateMin}, {"RateMax", c.RateMax},
		{"RefractoryMs", c.RefractoryMs}, {"MotionSineUm", c.MotionSineUm},
		{"MotionSineHz", c.MotionSineHz}, {"MotionTopGain", c.MotionTopGain},
		{"UnitZMinUm", c.UnitZMinUm}, {"UnitZMaxUm", c.UnitZMaxUm},
		{"BurstFraction", c.BurstFraction},
	} {
		if err := finite(f.name, f.v); err != nil {
			return Config{}, err
		}
	}
	switch {
	case c.SampleRate < 10000 || c.SampleRate > 1e6:
		return bad("SampleRate %g Hz: want 10 kHz to 1 MHz", c.SampleRate)
	case c.Seconds <= 0 || c.Samples() < 1:
		return bad("Seconds %g gives no samples at %g Hz", c.Seconds, c.SampleRate)
	case c.Samples() > 1<<40:
		return bad("Seconds %g is too long", c.Seconds)
	case c.Units < 0 || c.Units > 1<<20:
		return bad("Units %d: want 0 to %d", c.Units, 1<<20)
	case c.NoiseSD <= 0:
		return bad("NoiseSD %g: want > 0 (amplitudes are in noise SDs)", c.NoiseSD)
	case c.NoiseCorrUm < 0:
		return bad("NoiseCorrUm %g: want ≥ 0", c.NoiseCorrUm)
	case c.CommonModeSD < 0 || c.CommonModeSine < 0 || c.CommonModeHz < 0 || c.OffsetMax < 0:
		return bad("CommonModeSD %g, CommonModeSine %g, CommonModeHz %g and OffsetMax %g must be ≥ 0",
			c.CommonModeSD, c.CommonModeSine, c.CommonModeHz, c.OffsetMax)
	case c.MicrovoltsPerCount <= 0:
		return bad("MicrovoltsPerCount %g: want > 0", c.MicrovoltsPerCount)
	case c.AmplitudeMin <= 0 || c.AmplitudeMax < c.AmplitudeMin:
		return bad("amplitudes %g to %g noise SD: want 0 < min ≤ max", c.AmplitudeMin, c.AmplitudeMax)
	case c.RateMin <= 0 || c.RateMax < c.RateMin:
		return bad("rates %g to %g Hz: want 0 < min ≤ max", c.RateMin, c.RateMax)
	case c.RefractoryMs < 0:
		return bad("RefractoryMs %g: want ≥ 0", c.RefractoryMs)
	}
	if tau := math.Ceil(c.RefractoryMs * 1e-3 * c.SampleRate); tau >= c.SampleRate/c.RateMax {
		return bad("rate %g Hz is impossible with a %g-ms refractory period", c.RateMax, c.RefractoryMs)
	}
	for i, st := range c.MotionSteps {
		if err := finite(fmt.Sprintf("MotionSteps[%d]", i), st.TimeS+st.Um); err != nil {
			return Config{}, err
		}
		if st.TimeS < 0 {
			return bad("MotionSteps[%d] at %g s: want ≥ 0", i, st.TimeS)
		}
	}
	switch {
	case c.MotionSineHz < 0 || c.MotionSineHz > c.SampleRate/2:
		return bad("MotionSineHz %g: want 0 to the Nyquist rate %g", c.MotionSineHz, c.SampleRate/2)
	case c.MotionSineUm != 0 && c.MotionSineHz == 0:
		return bad("MotionSineUm %g needs MotionSineHz > 0", c.MotionSineUm)
	case c.MotionTopGain < 0 || c.MotionTopGain > 10:
		return bad("MotionTopGain %g: want 0 to 10 (0 or 1: rigid)", c.MotionTopGain)
	case c.UnitZMaxUm == 0 && c.UnitZMinUm != 0:
		return bad("UnitZMinUm %g needs UnitZMaxUm", c.UnitZMinUm)
	case c.UnitZMaxUm != 0 && (c.UnitZMinUm < 0 || c.UnitZMaxUm < c.UnitZMinUm || c.UnitZMaxUm > 1000):
		return bad("unit distances %g to %g µm: want 0 ≤ min ≤ max ≤ 1000", c.UnitZMinUm, c.UnitZMaxUm)
	case c.SimilarPairs < 0 || 2*c.SimilarPairs > c.Units:
		return bad("SimilarPairs %d: want 0 to Units/2 = %d", c.SimilarPairs, c.Units/2)
	case c.BurstFraction < 0 || c.BurstFraction > 1:
		return bad("BurstFraction %g: want 0 to 1", c.BurstFraction)
	}
	if c.Probe == nil {
		c.Probe = probe.NP1()
	} else {
		if err := c.Probe.Validate(); err != nil {
			return Config{}, fmt.Errorf("sim: config: %w", err)
		}
		c.Probe = cloneProbe(c.Probe)
	}
	c.MotionSteps = slices.Clone(c.MotionSteps)
	if err := checkNonRigid(c); err != nil {
		return Config{}, err
	}
	if err := checkDrift(c); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Check returns why c cannot be simulated, as [Generate] would refuse
// it, without rendering anything: a command checks its flags with it
// before it creates its output folder.
func (c Config) Check() error {
	_, err := c.resolved()
	return err
}

// MaxDriftUmPerS is the fastest rigid drift, in µm/s, a simulation
// takes: probes in tissue drift by at most a few µm/s, and a faster one
// is a value typed in the wrong unit.
const MaxDriftUmPerS = 100

// checkDrift refuses a rigid drift faster than MaxDriftUmPerS, or one
// that moves the units further than the probe's length (its span of site
// depths) over the recording: they would leave the probe. A probe of
// one row of sites has no length to leave.
func checkDrift(c Config) error {
	d := math.Abs(c.DriftUmPerS)
	if d > MaxDriftUmPerS {
		return fmt.Errorf("sim: config: drift %g µm/s: want at most %d µm/s in magnitude (probes drift by a few µm/s)", c.DriftUmPerS, MaxDriftUmPerS)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, y := range c.Probe.Y {
		lo, hi = min(lo, y), max(hi, y)
	}
	if span := hi - lo; span > 0 && d*c.Seconds > span {
		return fmt.Errorf("sim: config: drift %g µm/s over %g s moves the units %g µm, beyond the %g µm length of probe %s; "+
			"want at most %.4g µm/s for this duration", c.DriftUmPerS, c.Seconds, d*c.Seconds, span, c.Probe.Name, span/c.Seconds)
	}
	return nil
}

// cloneProbe returns a deep copy of p.
func cloneProbe(p *probe.Probe) *probe.Probe {
	return &probe.Probe{
		Name:      p.Name,
		X:         append([]float64(nil), p.X...),
		Y:         append([]float64(nil), p.Y...),
		Shank:     append([]int(nil), p.Shank...),
		ChanMap:   append([]int(nil), p.ChanMap...),
		NChanFile: p.NChanFile,
	}
}
