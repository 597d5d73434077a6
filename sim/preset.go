package sim

import (
	"fmt"
	"slices"
	"strings"
)

// PresetNames lists the presets [Preset] knows, easiest first.
var PresetNames = []string{"ladder-easy", "ladder-dense", "ladder-drift", "ladder-steps", "ladder-nonrigid", "ladder-hard"}

// Preset returns the named benchmark configuration (docs/sim.md lists
// each one's parameters). Every ladder preset is 10 minutes of
// Neuropixels 1.0 with units at realistic distances from the probe and
// writes the motion truth; each rung adds one difficulty to ladder-easy,
// and ladder-hard has them all.
func Preset(name string) (Config, error) {
	c := DefaultConfig()
	c.Seconds = 600
	c.UnitZMinUm, c.UnitZMaxUm = 10, 80
	c.AmplitudeMin, c.AmplitudeMax = 6, 30
	c.MotionTruth = true
	dense := func() {
		c.Units = 600
		c.AmplitudeMin = 4
		c.SimilarPairs = 60
		c.BurstFraction = 0.2
	}
	breathing := func() { c.MotionSineUm, c.MotionSineHz = 3, 0.2 }
	steps := []MotionStep{{TimeS: 120, Um: 10}, {TimeS: 240, Um: -15}, {TimeS: 360, Um: 20}, {TimeS: 480, Um: -10}}
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "ladder-easy":
	case "ladder-dense":
		dense()
	case "ladder-drift":
		c.DriftUmPerS = 0.1
		breathing()
	case "ladder-steps":
		c.MotionSteps = steps
	case "ladder-nonrigid":
		c.DriftUmPerS = 0.05
		c.MotionTopGain = 2
	case "ladder-hard":
		dense()
		c.DriftUmPerS = 0.1
		breathing()
		c.MotionSteps = steps
		c.MotionTopGain = 2
	default:
		return Config{}, fmt.Errorf("sim: unknown preset %q (want one of %s)", name, strings.Join(PresetNames, ", "))
	}
	c.Preset = strings.ToLower(strings.TrimSpace(name))
	c.MotionSteps = slices.Clone(c.MotionSteps)
	return c, nil
}
