package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dspk/sim"
)

// TestSimulatePreset checks -preset and that the flags given override it,
// that the motion truth is written and read back, and that the default
// output has neither the motion files nor the newer provenance keys.
func TestSimulatePreset(t *testing.T) {
	dir := t.TempDir()
	hard := filepath.Join(dir, "hard")
	code, out, stderr := dspk(t, "simulate", "-o", hard, "-preset", "ladder-hard", "-duration", "1s", "-units", "20", "-pairs", "3", "-sine-hz", "0.5", "-steps", "0.5:12")
	if code != 0 {
		t.Fatalf("simulate -preset: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "20 units") {
		t.Errorf("output %q", out)
	}
	tr, err := sim.ReadTruthDir(filepath.Join(hard, "truth"))
	if err != nil {
		t.Fatal(err)
	}
	c := tr.Config
	if c.Preset != "ladder-hard" || c.Seconds != 1 || c.Units != 20 || c.SimilarPairs != 3 || c.MotionSineHz != 0.5 ||
		c.MotionSineUm != 3 || len(c.MotionSteps) != 1 || c.MotionSteps[0] != (sim.MotionStep{TimeS: 0.5, Um: 12}) ||
		c.MotionTopGain != 2 || c.DriftUmPerS != 0.1 || c.BurstFraction != 0.2 || c.UnitZMaxUm != 80 {
		t.Errorf("config %+v", c)
	}
	if tr.Motion == nil || len(tr.SpikePos) != 3*len(tr.SpikeTimes) || tr.SpikeScale == nil {
		t.Errorf("motion truth missing: motion %v, %d positions, scales %v", tr.Motion != nil, len(tr.SpikePos), tr.SpikeScale != nil)
	}
	var prov map[string]any
	if b, err := os.ReadFile(filepath.Join(hard, "dspk.json")); err != nil || json.Unmarshal(b, &prov) != nil || prov["preset"] != "ladder-hard" {
		t.Errorf("dspk.json: %v, %v", err, prov)
	}

	// -units on a preset keeps the share of units in similar pairs.
	dense := filepath.Join(dir, "dense")
	if code, _, stderr := dspk(t, "simulate", "-o", dense, "-preset", "ladder-dense", "-duration", "0.5s", "-units", "50"); code != 0 {
		t.Fatalf("simulate -preset ladder-dense -units 50: exit %d: %s", code, stderr)
	}
	if tr, err := sim.ReadTruthDir(filepath.Join(dense, "truth")); err != nil || tr.Config.SimilarPairs != 5 || tr.Config.Units != 50 {
		t.Errorf("ladder-dense with 50 units: %v, config %+v", err, tr.Config)
	}

	plain := filepath.Join(dir, "plain")
	if code, _, stderr := dspk(t, "simulate", "-o", plain, "-duration", "1s"); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, stderr)
	}
	for _, f := range []string{sim.FileMotion, sim.FileMotionTimes, sim.FileMotionDepths, sim.FileSpikePositions, sim.FileSpikeScales} {
		if _, err := os.Stat(filepath.Join(plain, "truth", f)); err == nil {
			t.Errorf("default output has %s", f)
		}
	}
	b, err := os.ReadFile(filepath.Join(plain, "dspk.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"preset", "motion", "similar_pairs", "burst", "unit_z"} {
		if strings.Contains(string(b), k) {
			t.Errorf("default dspk.json has %q:\n%s", k, b)
		}
	}

	for _, bad := range [][]string{
		{"-preset", "nope"},
		{"-steps", "1:x"},
		{"-sine-um", "3"},
		{"-preset", "ladder-easy", "-pairs", "70"},
	} {
		args := append([]string{"simulate", "-o", filepath.Join(dir, "bad"), "-duration", "1s"}, bad...)
		if code, _, stderr := dspk(t, args...); code == 0 || stderr == "" {
			t.Errorf("%v: exit %d, %q", bad, code, stderr)
		}
	}
}
