package main

import (
	"flag"
	"fmt"
	"maps"
	"slices"

	"dspk/kilosort"
	"dspk/pipeline"
	"dspk/probe"
)

// pipelineFlags are the processing parameters shared by preprocess,
// detect, sort and drift; their defaults are [pipeline.DefaultConfig]'s,
// which the other commands' configurations share.
type pipelineFlags struct {
	tmin, tmax float64
	invert     bool
	noCAR      bool
	highpass   float64
	batch      int
	nskip      int
	thSingle   float64
	nearChans  int
	nearTempl  int
	groups     bool
	carGroups  bool
	fs         *flag.FlagSet // the flags were registered on, to tell which were given
}

func (f *pipelineFlags) register(fs *flag.FlagSet) {
	d := pipeline.DefaultConfig()
	fs.Float64Var(&f.tmin, "tmin", d.Tmin, "start of the data used, in seconds")
	fs.Float64Var(&f.tmax, "tmax", float64(d.Tmax), "end of the data used, in seconds")
	fs.BoolVar(&f.invert, "invert", d.InvertSign, "flip the sign of the data (Kilosort4's invert_sign)")
	fs.BoolVar(&f.noCAR, "no-car", !d.DoCAR, "skip the common average reference")
	fs.Float64Var(&f.highpass, "highpass", d.HighpassCutoff, "high-pass cut-off in Hz")
	fs.IntVar(&f.batch, "batch", d.BatchSize, "samples owned by each window (Kilosort4's batch_size)")
	fs.IntVar(&f.nskip, "nskip", d.NSkip, "use every nskip-th window for whitening and template learning (Kilosort4's nskip)")
	fs.Float64Var(&f.thSingle, "th-single-ch", d.ThSingleCh, "threshold in whitened SD of the single-channel peaks that teach the templates (Th_single_ch)")
	fs.IntVar(&f.nearChans, "nearest_chans", d.NearestChans, "channels per template centre (Kilosort4's nearest_chans)")
	fs.IntVar(&f.nearTempl, "nearest_templates", d.NearestTemplates, "nearest centres a detection must beat (Kilosort4's nearest_templates);\n"+
		"on small probes they span the whole array: lower it, or use -groups")
	fs.BoolVar(&f.groups, "groups", d.Groups, "detect each group of sites (shank_ids / kcoords: a shank, tetrode or stereotrode) on its own:\n"+
		"whitening and suppression stay within a group (not Kilosort4's rule); the CAR spans all channels")
	fs.BoolVar(&f.carGroups, "car-groups", d.CARGroups, fmt.Sprintf("with -groups, take the CAR within each group instead of over all channels\n"+
		"(shanks wired to their own reference; every group needs at least %d channels; CPU preprocessing only)", pipeline.MinCARChannels))
	f.fs = fs
}

// check refuses the flags that do not fit the run: -groups on a probe of
// one group, a -nearest_chans given larger than the probe (or with
// -groups, its smallest group), which would be clipped in silence, and
// any flag of unused (name → why it does not apply) that was given.
func (f *pipelineFlags) check(pr *probe.Probe, unused map[string]string) error {
	set := map[string]bool{}
	if f.fs != nil {
		f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	}
	for _, name := range slices.Sorted(maps.Keys(unused)) {
		if set[name] {
			return usagef("-%s does not apply: %s; leave it out", name, unused[name])
		}
	}
	if err := f.config().CheckProbe(pr, set["nearest_chans"]); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// detectUnused are the pipeline flags detect does not use with templates
// supplied (-templates).
var detectUnused = map[string]string{
	"th-single-ch": "it sets the threshold of the peaks that teach the templates, and -templates supplies them",
}

// preprocessUnused are the pipeline flags preprocess does not use: it
// whitens, and neither learns templates nor detects.
var preprocessUnused = map[string]string{
	"th-single-ch":      "preprocess learns no templates",
	"nearest_chans":     "preprocess does not detect",
	"nearest_templates": "preprocess does not detect",
}

// config is [pipeline.DefaultConfig] with the flags' values.
func (f *pipelineFlags) config() pipeline.Config { return f.configOf(pipeline.DefaultConfig()) }

// configOf is the configuration c with the flags' values.
func (f *pipelineFlags) configOf(c pipeline.Config) pipeline.Config {
	c.Tmin, c.Tmax = f.tmin, kilosort.EndLimit(f.tmax)
	c.InvertSign = f.invert
	c.DoCAR = !f.noCAR
	c.HighpassCutoff = f.highpass
	c.BatchSize = f.batch
	c.NSkip = f.nskip
	c.ThSingleCh = f.thSingle
	c.NearestChans = f.nearChans
	c.NearestTemplates = f.nearTempl
	c.Groups = f.groups
	c.CARGroups = f.carGroups
	return c
}
