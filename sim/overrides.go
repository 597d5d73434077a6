package sim

import (
	"fmt"
	"math"
)

// Overrides are settings to apply onto a base configuration, a [Preset]
// or [DefaultConfig], with [Overrides.Apply]: the settings of dspk
// simulate's command line, where flags given override a preset.
type Overrides struct {
	// Given names the settings given, by dspk simulate's flag names:
	// duration, units, seed, drift, steps, sine-um, sine-hz, top-gain,
	// zmin, zmax, amp-min, amp-max, bursts, pairs and motion-truth.
	Given map[string]bool
	// Seconds, Units, Seed and DriftUmPerS set the Config fields of the
	// same names.
	Seconds     float64
	Units       int
	Seed        uint64
	DriftUmPerS float64
	// Steps are the motion steps as [ParseSteps] reads them.
	Steps string
	// SineUm, SineHz, TopGain, ZMinUm, ZMaxUm, AmpMin, AmpMax and Bursts
	// set MotionSineUm, MotionSineHz, MotionTopGain, UnitZMinUm,
	// UnitZMaxUm, AmplitudeMin, AmplitudeMax and BurstFraction; they must
	// be finite.
	SineUm, SineHz, TopGain, ZMinUm, ZMaxUm, AmpMin, AmpMax, Bursts float64
	// Pairs sets SimilarPairs and MotionTruth the field of that name.
	Pairs       int
	MotionTruth bool
}

// Apply sets on c the settings o gives. On a configuration that is not a
// preset's (fromPreset false), Seconds, Units, Seed and DriftUmPerS are
// set whether given or not (their flags' defaults are the run's); the
// others, and all of them on a preset, only when given. Setting Units on
// a preset with similar pairs scales SimilarPairs to keep their share of
// the units. An error names the setting as its flag, -NAME, and leaves c
// part-way.
func (o *Overrides) Apply(c *Config, fromPreset bool) error {
	g := o.Given
	if !fromPreset || g["duration"] {
		c.Seconds = o.Seconds
	}
	if !fromPreset || g["units"] {
		if c.Units > 0 && c.SimilarPairs > 0 {
			c.SimilarPairs = int(math.Round(float64(c.SimilarPairs) * float64(o.Units) / float64(c.Units)))
		}
		c.Units = o.Units
	}
	if !fromPreset || g["seed"] {
		c.Seed = o.Seed
	}
	if !fromPreset || g["drift"] {
		c.DriftUmPerS = o.DriftUmPerS
	}
	if g["steps"] {
		st, err := ParseSteps(o.Steps)
		if err != nil {
			return fmt.Errorf("-steps: %w", err)
		}
		c.MotionSteps = st
	}
	for _, f := range []struct {
		name string
		dst  *float64
		v    float64
	}{
		{"sine-um", &c.MotionSineUm, o.SineUm}, {"sine-hz", &c.MotionSineHz, o.SineHz},
		{"top-gain", &c.MotionTopGain, o.TopGain}, {"zmin", &c.UnitZMinUm, o.ZMinUm},
		{"zmax", &c.UnitZMaxUm, o.ZMaxUm}, {"amp-min", &c.AmplitudeMin, o.AmpMin},
		{"amp-max", &c.AmplitudeMax, o.AmpMax}, {"bursts", &c.BurstFraction, o.Bursts},
	} {
		if g[f.name] {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				return fmt.Errorf("-%s %g: must be finite", f.name, f.v)
			}
			*f.dst = f.v
		}
	}
	if g["pairs"] {
		c.SimilarPairs = o.Pairs
	}
	if g["motion-truth"] {
		c.MotionTruth = o.MotionTruth
	}
	return nil
}
