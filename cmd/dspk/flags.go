package main

import (
	"flag"
	"math"

	"dspk/kilosort"
	"dspk/pipeline"
)

// pipelineFlags are the processing parameters shared by preprocess and
// detect.
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
}

func (f *pipelineFlags) register(fs *flag.FlagSet) {
	d := pipeline.DefaultConfig()
	fs.Float64Var(&f.tmin, "tmin", 0, "start of the data used, in seconds")
	fs.Float64Var(&f.tmax, "tmax", math.Inf(1), "end of the data used, in seconds")
	fs.BoolVar(&f.invert, "invert", false, "flip the sign of the data (Kilosort4's invert_sign)")
	fs.BoolVar(&f.noCAR, "no-car", false, "skip the common average reference")
	fs.Float64Var(&f.highpass, "highpass", d.HighpassCutoff, "high-pass cut-off in Hz")
	fs.IntVar(&f.batch, "batch", d.BatchSize, "samples owned by each window (Kilosort4's batch_size)")
	fs.IntVar(&f.nskip, "nskip", d.NSkip, "use every nskip-th window for whitening and template learning (Kilosort4's nskip)")
	fs.Float64Var(&f.thSingle, "th-single-ch", d.ThSingleCh, "threshold in whitened SD of the single-channel peaks that teach the templates (Th_single_ch)")
	fs.IntVar(&f.nearChans, "nearest_chans", d.NearestChans, "channels per template centre (Kilosort4's nearest_chans)")
	fs.IntVar(&f.nearTempl, "nearest_templates", d.NearestTemplates, "nearest centres a detection must beat (Kilosort4's nearest_templates);\n"+
		"on small probes they span the whole array: lower it, or use -groups")
	fs.BoolVar(&f.groups, "groups", false, "detect each group of sites (shank_ids / kcoords: a shank, tetrode or stereotrode) on its own:\n"+
		"CAR, whitening and suppression stay within a group (not Kilosort4's rule; CPU preprocessing only)")
}

func (f *pipelineFlags) config() pipeline.Config {
	c := pipeline.DefaultConfig()
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
	return c
}
