package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"dspk/cluster"
	"dspk/compute"
	"dspk/phy"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
)

func init() {
	register(&command{
		name:  "sort",
		short: "sort spikes into units (Kilosort4's whole sort) and write a Phy/SpikeInterface folder",
		usage: "REC",
		example: `dspk sort -o sort1 run_g0_t0.imec0.ap.bin
dspk sort -o sort1 -device cpu -Th_learned 7 -tmax 600 run_g0_t0.imec0.ap.bin
dspk sort -o sort1 -nblocks 0 run_g0_t0.imec0.ap.bin`,
		setup: func(fs *flag.FlagSet) func([]string) error {
			var in inputFlags
			in.register(fs)
			var pf pipelineFlags
			pf.register(fs)
			var sf sortFlags
			sf.register(fs)
			return func(args []string) error {
				if err := checkRunArgs("sort", args, sf.out); err != nil {
					return err
				}
				if sf.motion.nblocks < 0 {
					return usagef("-nblocks %d: must be 0 (no correction) or more", sf.motion.nblocks)
				}
				if err := sf.opt.Validate(); err != nil {
					return usagef("%v", err)
				}
				setOutput(sf.out)
				rec, pr, err := in.open(args...)
				if err != nil {
					return err
				}
				defer rec.Close()
				if err := pf.check(pr, nil); err != nil {
					return err
				}
				printWarnings(cmdErr, in.warnings)
				if w := cluster.ShortWarning(min(float64(rec.Samples())/rec.SampleRate(), pf.tmax) - pf.tmin); w != "" {
					printWarnings(cmdErr, []string{w}) // not in dspk.json: the folder's bytes stay those of the sort
				}
				inputs := in.runInputs(args, rec)
				t0 := time.Now()
				res, err := runSort(cmdCtx, rec, pr, &pf, &sf, inputs, in.warnings, cmdErr)
				if err != nil {
					return err
				}
				good := 0
				for _, g := range res.Curated.Good {
					if g {
						good++
					}
				}
				fmt.Fprintf(cmdOut, "Sorted %d spikes into %d units (%d good); %.1f s of recording in %.1f s: %.2f× real time; results in %s.\n",
					res.Curated.Spikes.Len(), res.Curated.Units.N, good, res.Summary.Seconds, time.Since(t0).Seconds(),
					res.Summary.Seconds/time.Since(t0).Seconds(), sf.out)
				return nil
			}
		},
	})
}

// sortFlags are the flags of sort, under Kilosort4's names.
type sortFlags struct {
	out         string
	device      string
	overwrite   bool
	thUniversal float64
	seed        uint64
	motion      motionFlags
	opt         pipeline.SortOptions
	xCenters    int
}

func (f *sortFlags) register(fs *flag.FlagSet) {
	d := pipeline.DefaultSortOptions()
	c := pipeline.DefaultSortConfig()
	f.opt = d
	fs.StringVar(&f.out, "o", "", "output folder (required)")
	fs.StringVar(&f.device, "device", "auto", "compute device: auto, cpu or cuda:N (the window passes and both clusterings run there;\n"+
		"template learning and curation on the CPU)")
	fs.BoolVar(&f.overwrite, "overwrite", false, "replace the output folder if it exists and is a folder dspk wrote, unchanged, holding no input of this run")
	fs.Float64Var(&f.thUniversal, "Th_universal", c.ThUniversal, "detection threshold of the universal templates in whitened SD")
	fs.Uint64Var(&f.seed, "seed", c.Seed, "seed of template learning (k-means)")
	f.motion.register(fs, c)
	fs.Float64Var(&f.opt.Match.ThLearned, "Th_learned", d.Match.ThLearned, "threshold of learned-template matching in whitened SD")
	fs.IntVar(&f.opt.Match.MaxPeels, "max_peels", d.Match.MaxPeels, "most matching rounds per window")
	fs.IntVar(&f.opt.Cluster.ClusterDownsampling, "cluster_downsampling", d.Cluster.ClusterDownsampling, "every k-th spike of a group is a landmark of the kNN graph")
	fs.IntVar(&f.opt.Cluster.MaxClusterSubset, "max_cluster_subset", d.Cluster.MaxClusterSubset, "most landmarks per group (0: no cap)")
	fs.IntVar(&f.opt.Cluster.ClusterNeighbors, "cluster_neighbors", d.Cluster.ClusterNeighbors, "neighbours of the kNN graph")
	fs.Int64Var(&f.opt.Cluster.ClusterInitSeed, "cluster_init_seed", d.Cluster.ClusterInitSeed, "seed of every clustering's initial labels")
	fs.IntVar(&f.xCenters, "x_centers", d.Cluster.XCenters, "number of x centres of the clustering groups (0: from the channels' x histogram)")
	fs.Float64Var(&f.opt.Curate.ACGThreshold, "acg_threshold", d.Curate.ACGThreshold, "a unit is good when its autocorrelogram's refractory ratio is below this")
	fs.Float64Var(&f.opt.Curate.CCGThreshold, "ccg_threshold", d.Curate.CCGThreshold, "two units merge when their cross-correlogram's refractory ratio is below this")
	fs.Float64Var(&f.opt.Curate.SameWaveform, "same-waveform", d.Curate.SameWaveform, "units whose templates correlate at least this much at one amplitude are one waveform cut in two:\n"+
		"they merge before Kilosort4's correlogram merges, without its test (0: Kilosort4's merges alone; docs/sort.md)")
	fs.Float64Var(&f.opt.Curate.Interleaved, "interleaved", d.Curate.Interleaved, "units whose templates correlate at least this much and whose trains alternate in time are\n"+
		"pieces of one drifting unit: they merge after Kilosort4's merges (0: none; docs/sort.md)")
	fs.Float64Var(&f.opt.Curate.Coincident, "coincident", d.Curate.Coincident, "nearby units sharing spikes at one lag are one neuron matched on two templates: the weaker one's copies\n"+
		"are dropped, and it joins the other when at most 1 − this fraction of its spikes is left (0: none; docs/sort.md)")
	fs.Float64Var(&f.opt.Curate.AmplitudeSplit, "amplitude-split", d.Curate.AmplitudeSplit, "a unit whose spike amplitudes form two modes this many SDs apart, side by side in time, is split in two (0: none, as Kilosort4; docs/sort.md)")
	fs.Float64Var(&f.opt.Curate.DoubleCount, "double-counts", d.Curate.DoubleCount, "two spikes of units peaking within this many µm, within duplicate_spike_ms, are one event: the smaller unit's goes (0: none, as Kilosort4)")
	fs.Float64Var(&f.opt.Curate.MinRate, "min-rate", d.Curate.MinRate, "units firing under this many Hz are dropped after the merges (0: keep all, as Kilosort4; docs/sort.md)")
	fs.Float64Var(&f.opt.Curate.DuplicateSpikeMs, "duplicate_spike_ms", d.Curate.DuplicateSpikeMs, "least time in ms between two spikes of a unit (closer ones are duplicates)")
	fs.Float64Var(&f.opt.Curate.PositionLimit, "position_limit", d.Curate.PositionLimit, "µm from the best channel of the channels that place a spike")
	fs.BoolVar(&f.opt.PCOverwrite, "pc-overwrite", d.PCOverwrite, "PC-feature channels as Kilosort4 chooses them (the last unit sharing a template wins)")
}

// runSort opens the device, reserves the folder sf.out, runs the sort
// and writes the folder with its summary figure. The passes' warnings go
// to log.
func runSort(ctx context.Context, rec recording.Recording, pr *probe.Probe, pf *pipelineFlags, sf *sortFlags,
	inputs, warnings []string, log io.Writer) (*pipeline.SortResult, error) {
	if err := sf.checkProbe(pr); err != nil {
		return nil, err
	}
	dev, reason, err := compute.Open(sf.device)
	if err != nil {
		return nil, err
	}
	defer dev.Close()
	fmt.Fprintf(log, "device: %s (%s)\n", dev, reason)
	p, err := pipeline.New(dev, rec, pr, sortConfig(pf, sf))
	if err != nil {
		return nil, err
	}
	defer p.Close() // before dev.Close
	opt, res := sortOptions(sf), (*pipeline.SortResult)(nil)
	w, err := phy.CreateSort(sf.out, phy.Options{Overwrite: sf.overwrite, DatPath: datPath(rec), Context: ctx,
		Inputs: inputs, Warnings: warnings})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	opt.Device = dev.String()
	p.Progress = trackProgress(newBar())
	opt.Stage = func(s string) {
		setStage(s)
		fmt.Fprintf(log, "%s…\n", s)
	}
	if res, err = p.Sort(ctx, opt); err != nil {
		return nil, err
	}
	for _, s := range res.Stages {
		fmt.Fprintf(log, "  %-22s %8.2f s  %d %s\n", s.Name, s.Seconds, s.Count, s.What)
	}
	setStage("writing " + sf.out)
	if err := w.Write(res); err != nil {
		return nil, err
	}
	printWarnings(log, res.Summary.Warnings)
	return res, nil
}

// checkProbe refuses settings that the probe pr cannot honour:
// -x_centers beyond the number of distinct x positions of its sites
// (k-means would place centres on the same x, and groups would be empty).
func (f *sortFlags) checkProbe(pr *probe.Probe) error {
	if err := sortOptions(f).CheckProbe(pr); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// sortConfig is the pipeline configuration of a sort with the flags pf
// and sf: [pipeline.DefaultSortConfig] with the flags' values.
func sortConfig(pf *pipelineFlags, sf *sortFlags) pipeline.Config {
	cfg := pf.configOf(pipeline.DefaultSortConfig())
	cfg.ThUniversal = sf.thUniversal
	cfg.Seed = sf.seed
	sf.motion.apply(&cfg)
	return cfg
}

// sortOptions is the sort's settings of the flags sf.
func sortOptions(sf *sortFlags) pipeline.SortOptions {
	opt := sf.opt
	opt.Cluster.XCenters = sf.xCenters
	return opt
}
