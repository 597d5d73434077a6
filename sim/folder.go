package sim

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"dspk/export"
)

// FolderBase is the SpikeGLX run name of the recording in a folder that
// [WriteFolder] writes: FolderBase.imec0.ap.bin and .meta.
const FolderBase = "sim_g0_t0"

// FolderKind is the kind of folder [WriteFolder] writes (recorded in its
// manifest): overwriting replaces only a folder of this kind.
const FolderKind = "simulate"

// FolderOptions configures [WriteFolder].
type FolderOptions struct {
	// Overwrite replaces an existing folder out if it is one dspk wrote
	// (of kind FolderKind) and is unchanged since.
	Overwrite bool
	// Version is the dspk version recorded in dspk.json.
	Version string
}

// WriteFolder writes cfg into the new folder out, atomically (whole or
// not at all): the SpikeGLX pair FolderBase.imec0.ap.{bin,meta}, the
// ground truth in out/truth ([Truth.WriteDir]) and dspk.json, the
// provenance (version, recording, probe, duration, units, seed, drift and
// spike count; preset and the harder models' settings only when used, so
// that the default folder keeps its bytes). It returns the path of the
// .bin file under out and the truth. ctx stops the writing.
func WriteFolder(ctx context.Context, out string, cfg Config, opt FolderOptions) (bin string, truth *Truth, err error) {
	od, err := export.CreateOutputDir(out, export.OutputOptions{Kind: FolderKind, Overwrite: opt.Overwrite, Context: ctx})
	if err != nil {
		return "", nil, err
	}
	defer od.Abort()
	bin, truth, err = WriteSpikeGLXContext(ctx, od.Dir(), FolderBase, cfg)
	if err != nil {
		return "", nil, err
	}
	if cfg.Probe == nil { // the default probe, as the recording has it
		cfg.Probe = truth.Config.Probe
	}
	if err := export.WriteJSON(od.Path("dspk.json"), provenance(cfg, opt.Version, filepath.Base(bin), len(truth.SpikeTimes))); err != nil {
		return "", nil, err
	}
	if err := os.Mkdir(od.Path("truth"), 0o755); err != nil {
		return "", nil, err
	}
	if err := truth.WriteDir(od.Path("truth")); err != nil {
		return "", nil, err
	}
	if err := od.Commit(); err != nil {
		return "", nil, err
	}
	return filepath.Join(out, filepath.Base(bin)), truth, nil
}

// provenance returns the dspk.json of a folder of cfg holding the
// recording file rec with spikes spikes.
func provenance(cfg Config, version, rec string, spikes int) map[string]any {
	prov := map[string]any{
		"dspk_version": version, "command": "simulate", "recording": rec,
		"probe": cfg.Probe.Name, "seconds": cfg.Seconds, "units": cfg.Units, "seed": cfg.Seed,
		"drift_um_per_s": cfg.DriftUmPerS, "spikes": spikes,
	}
	// Keys for the newer models only when they are used, so that the
	// default output keeps its bytes.
	if cfg.Preset != "" {
		prov["preset"] = cfg.Preset
	}
	if cfg.MotionSineUm != 0 || len(cfg.MotionSteps) > 0 || cfg.MotionTopGain != 0 || cfg.UnitZMaxUm != 0 ||
		cfg.SimilarPairs != 0 || cfg.BurstFraction != 0 || cfg.MotionTruth {
		prov["motion_sine_um"], prov["motion_sine_hz"] = cfg.MotionSineUm, cfg.MotionSineHz
		prov["motion_steps"], prov["motion_top_gain"] = cfg.MotionSteps, cfg.MotionTopGain
		prov["unit_z_um"] = []float64{cfg.UnitZMinUm, cfg.UnitZMaxUm}
		prov["similar_pairs"], prov["burst_fraction"] = cfg.SimilarPairs, cfg.BurstFraction
	}
	return prov
}

// ParseSteps parses sudden motion steps written "T:UM,T:UM…" (seconds
// and µm; blank items are skipped). The error names the first bad step
// by its position.
func ParseSteps(s string) ([]MotionStep, error) {
	var out []MotionStep
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		a, b, ok := strings.Cut(f, ":")
		t, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		um, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if !ok || err1 != nil || err2 != nil || math.IsNaN(t+um) || math.IsInf(t+um, 0) || t < 0 {
			return nil, fmt.Errorf("step %d %q: want TIME_S:UM with finite numbers and TIME_S ≥ 0", i+1, f)
		}
		out = append(out, MotionStep{TimeS: t, Um: um})
	}
	return out, nil
}
