package batch

import (
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"dspk/kilosort"
	"dspk/pipeline"
	"dspk/recording"
)

// The kinds of plan: what each row runs.
const (
	KindDetect = "detect" // detection (dspk detect's folder)
	KindSort   = "sort"   // the whole sort (dspk sort's folder)
)

// Options are the settings every row of a plan runs with.
type Options struct {
	// Input says how the recordings are opened and which probe they were
	// recorded with. Its Stream is each row's own and is not used here.
	Input recording.Input
	// Config is the pipeline's configuration: of the detection for a
	// detect plan (ThUniversal its threshold), of the sort for a sort
	// plan.
	Config pipeline.Config
	// Templates, for a detect plan, names universal templates to use
	// instead of learning them (an .npz with wTEMP and wPCA, or a folder
	// of wTEMP.npy and wPCA.npy); "" learns them.
	Templates string
	// Sort are the settings of a sort plan's sorts.
	Sort pipeline.SortOptions
	// Given names the settings given as flags on a command line (dspk
	// batch plan's): plan.json records them even where they equal the
	// default, as they were given.
	Given []string
}

// DefaultOptions returns the options of a plan of kind (KindDetect or
// KindSort) given no flags: those of dspk detect and dspk sort.
func DefaultOptions(kind string) Options {
	c := pipeline.DefaultConfig()
	c.Tmin, c.Tmax = 0, kilosort.EndLimit(math.Inf(1))
	c.InvertSign, c.DoCAR, c.Groups, c.CARGroups = false, true, false, false
	o := Options{Config: c}
	if kind == KindSort {
		sc := pipeline.DefaultSortConfig()
		o.Config.NBlocks, o.Config.Correction, o.Config.Registration = sc.NBlocks, sc.Correction, sc.Registration
		o.Sort = pipeline.DefaultSortOptions()
		o.Sort.Cluster.XCenters = 0
		o.Sort.PCOverwrite = false
	}
	return o
}

// notBool is a boolean flag that sets the negation of *p (-no-car sets
// DoCAR false).
type notBool struct{ p *bool }

func (b notBool) String() string {
	if b.p == nil {
		return "false"
	}
	return strconv.FormatBool(!*b.p)
}

func (b notBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.p = !v
	return nil
}

func (b notBool) IsBoolFlag() bool { return true }

// flagSet returns the flags of a plan of kind bound to o's fields, under
// the names of dspk's flags: those of the recording (but -stream, each
// row's own) and the pipeline, with -threshold and -templates for a
// detect plan and sort's own for a sort plan. Registering them sets o's
// fields to their defaults.
func (o *Options) flagSet(kind string) *flag.FlagSet {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	d := DefaultOptions(kind)
	in, c, dc := &o.Input, &o.Config, d.Config
	fs.StringVar(&in.Probe, "probe", "", "")
	fs.IntVar(&in.Channels, "channels", 0, "")
	fs.Float64Var(&in.Rate, "rate", 0, "")
	fs.StringVar(&in.DType, "dtype", "", "")
	fs.Float64Var(&in.Scale, "scale", 0, "")
	fs.BoolVar(&in.ForceDType, "force-dtype", false, "")
	fs.BoolVar(&in.StrictSize, "strict-size", false, "")
	fs.Float64Var(&c.Tmin, "tmin", 0, "")
	fs.Float64Var((*float64)(&c.Tmax), "tmax", math.Inf(1), "")
	fs.BoolVar(&c.InvertSign, "invert", false, "")
	c.DoCAR = true
	fs.Var(notBool{&c.DoCAR}, "no-car", "")
	fs.Float64Var(&c.HighpassCutoff, "highpass", dc.HighpassCutoff, "")
	fs.IntVar(&c.BatchSize, "batch", dc.BatchSize, "")
	fs.IntVar(&c.NSkip, "nskip", dc.NSkip, "")
	fs.Float64Var(&c.ThSingleCh, "th-single-ch", dc.ThSingleCh, "")
	fs.IntVar(&c.NearestChans, "nearest_chans", dc.NearestChans, "")
	fs.IntVar(&c.NearestTemplates, "nearest_templates", dc.NearestTemplates, "")
	fs.BoolVar(&c.Groups, "groups", false, "")
	fs.BoolVar(&c.CARGroups, "car-groups", false, "")
	if kind != KindSort {
		fs.Float64Var(&c.ThUniversal, "threshold", dc.ThUniversal, "")
		fs.StringVar(&o.Templates, "templates", "", "")
		return fs
	}
	s, ds := &o.Sort, d.Sort
	fs.Float64Var(&c.ThUniversal, "Th_universal", dc.ThUniversal, "")
	fs.Uint64Var(&c.Seed, "seed", dc.Seed, "")
	fs.IntVar(&c.NBlocks, "nblocks", dc.NBlocks, "")
	fs.Float64Var(&c.SigInterp, "sig_interp", dc.SigInterp, "")
	fs.Float64Var(&c.BinningDepth, "binning_depth", dc.BinningDepth, "")
	fs.StringVar(&c.Correction, "correction", dc.Correction, "")
	fs.StringVar(&c.Registration, "registration", dc.Registration, "")
	fs.Float64Var(&s.Match.ThLearned, "Th_learned", ds.Match.ThLearned, "")
	fs.IntVar(&s.Match.MaxPeels, "max_peels", ds.Match.MaxPeels, "")
	fs.IntVar(&s.Cluster.ClusterDownsampling, "cluster_downsampling", ds.Cluster.ClusterDownsampling, "")
	fs.IntVar(&s.Cluster.MaxClusterSubset, "max_cluster_subset", ds.Cluster.MaxClusterSubset, "")
	fs.IntVar(&s.Cluster.ClusterNeighbors, "cluster_neighbors", ds.Cluster.ClusterNeighbors, "")
	fs.Int64Var(&s.Cluster.ClusterInitSeed, "cluster_init_seed", ds.Cluster.ClusterInitSeed, "")
	fs.IntVar(&s.Cluster.XCenters, "x_centers", 0, "")
	fs.Float64Var(&s.Curate.ACGThreshold, "acg_threshold", ds.Curate.ACGThreshold, "")
	fs.Float64Var(&s.Curate.CCGThreshold, "ccg_threshold", ds.Curate.CCGThreshold, "")
	fs.Float64Var(&s.Curate.SameWaveform, "same-waveform", ds.Curate.SameWaveform, "")
	fs.Float64Var(&s.Curate.Interleaved, "interleaved", ds.Curate.Interleaved, "")
	fs.Float64Var(&s.Curate.Coincident, "coincident", ds.Curate.Coincident, "")
	fs.Float64Var(&s.Curate.MinRate, "min-rate", ds.Curate.MinRate, "")
	fs.Float64Var(&s.Curate.AmplitudeSplit, "amplitude-split", ds.Curate.AmplitudeSplit, "")
	fs.Float64Var(&s.Curate.DoubleCount, "double-counts", ds.Curate.DoubleCount, "")
	fs.Float64Var(&s.Curate.DuplicateSpikeMs, "duplicate_spike_ms", ds.Curate.DuplicateSpikeMs, "")
	fs.Float64Var(&s.Curate.PositionLimit, "position_limit", ds.Curate.PositionLimit, "")
	fs.BoolVar(&s.PCOverwrite, "pc-overwrite", false, "")
	return fs
}

// FlagNames lists the names of the flags that a plan of kind records
// (see [Options.Args]), in name order.
func FlagNames(kind string) []string {
	var o Options
	var names []string
	o.flagSet(kind).VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// Args returns o as the flags of a plan of kind, as plan.json stores
// them: "-NAME=VALUE" for each setting that differs from its default or
// is Given, in name order; nil for none.
func (o Options) Args(kind string) []string {
	var x Options
	fs := x.flagSet(kind)
	x = o // the flags read x's fields
	var args []string
	fs.VisitAll(func(f *flag.Flag) {
		if v := f.Value.String(); v != f.DefValue || slices.Contains(o.Given, f.Name) {
			args = append(args, "-"+f.Name+"="+v)
		}
	})
	return args
}

// ParseArgs returns the options of a plan of kind whose flags are args
// (as [Options.Args] writes them).
func ParseArgs(kind string, args []string) (Options, error) {
	o := DefaultOptions(kind)
	fs := o.flagSet(kind)
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("batch: the plan's flags %q: %w", args, err)
	}
	if fs.NArg() != 0 {
		return Options{}, fmt.Errorf("batch: the plan's flags %q hold arguments %q", args, fs.Args())
	}
	fs.Visit(func(f *flag.Flag) { o.Given = append(o.Given, f.Name) })
	return o, nil
}
