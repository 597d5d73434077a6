package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"dspk/cluster"
	"dspk/compute"
	"dspk/kilosort"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
	"dspk/sim"
)

// benchSortSeconds is the length of the simulated NP1 recording that
// bench -ops sort sorts when no -file is given (120 units, seed 1).
const benchSortSeconds = 20

// benchSort runs the whole sort once, on the recording of -file or on a
// simulated 20-s NP1 recording of 120 units, with Kilosort4's defaults
// (nblocks 1) on dev, and prints one line per stage with its wall time
// and, where the stage's arithmetic is known, the floor of that
// arithmetic at the peak of the device that runs it (matching and the
// clusterings run on dev — on a GPU at the H200's FP64 FMA rate, the
// kernels' float64 sums — the post-processing of templates and curation
// on the host).
// Floors (kilosort4-sort.md §10): matching 2·P·nt·C + 2·N'·C·P flops per
// column (filtering by the PCA basis, projection on the templates);
// clustering the k-means++ products 200·100·2·d·n of every group that is
// clustered (d = its channels·P, n its spikes).
func benchSort(path string, dev *compute.Device) error {
	var rec recording.Recording
	var pr *probe.Probe
	if path != "" {
		var in inputFlags
		r, p, err := in.open(path)
		if err != nil {
			return err
		}
		defer r.Close()
		rec, pr = r, p
	} else {
		cfg := sim.DefaultConfig()
		cfg.Seconds, cfg.Seed = benchSortSeconds, 1
		r, err := sim.Generate(cfg)
		if err != nil {
			return err
		}
		rec, pr = r, r.Probe()
	}
	cfg := pipeline.DefaultConfig()
	cfg.NBlocks = 1
	p, err := pipeline.New(dev, rec, pr, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	t0 := time.Now()
	res, err := p.Sort(context.Background(), pipeline.DefaultSortOptions())
	if err != nil {
		return err
	}
	wall := time.Since(t0)
	cores := float64(runtime.GOMAXPROCS(0))
	f64, f32 := vectorPeak()
	peak64, peak32 := f64*cores, f32*cores
	if dev.Kind() == compute.CUDA {
		// The CUDA matcher and clusterer sum in float64 (FMA off).
		peak64, peak32 = gpuFMAPerSec, gpuFMAPerSec
	}
	C, P := float64(pr.Len()), float64(res.Learned.P)
	nt := float64(p.Config().NT)
	cols := float64(p.Schedule().End - p.Schedule().Start)
	size := fmt.Sprintf("%.0f s, %d sites", float64(rec.Samples())/rec.SampleRate(), pr.Len())
	for _, s := range res.Stages {
		r := benchRow{label: "sort " + s.Name, op: "sort " + s.Name, size: size, device: dev.Spec(),
			d: time.Duration(s.Seconds * float64(time.Second)), nums: []benchNum{{"count", float64(s.Count)}}}
		var flops, peak float64
		switch s.Name {
		case "matching":
			flops = cols * (2*P*nt*C + 2*float64(res.Learned.N)*C*P)
			peak = peak32
		case "clustering spikes":
			flops, peak = kmeansFlops(res.Groups0, P), peak64
		case "clustering templates":
			flops, peak = kmeansFlops(res.Groups1, P), peak64
		case "learned templates", "curation":
			r.device = host.Spec()
		}
		r.text = fmt.Sprintf("%d %s", s.Count, s.What)
		if flops > 0 {
			floor := flops / peak
			r.floor = seconds(floor)
			r.nums = append(r.nums, benchNum{"gflop", flops / 1e9})
			r.text += fmt.Sprintf(", %.1f GFLOP, floor %.0f ms at %.0f GFLOP/s, %.0f%% of it", flops/1e9, floor*1e3,
				peak/1e9, 100*floor/s.Seconds)
		}
		row(r)
	}
	secs := res.Summary.Seconds
	row(benchRow{label: "sort whole", op: "sort whole", size: size, device: dev.Spec(), d: wall,
		nums: []benchNum{{"times_real_time", secs / wall.Seconds()}, {"units", float64(res.Curated.Units.N)}},
		text: fmt.Sprintf("%d units, %.2f× real time", res.Curated.Units.N, secs/wall.Seconds())})
	return nil
}

// kmeansFlops is the arithmetic of the k-means++ initialisation of the
// groups that are clustered (at least cluster.MinGroup spikes): 200
// rounds of 100 candidates against every spike, 2·d flops each.
func kmeansFlops(groups []cluster.Group, P float64) float64 {
	var f float64
	for _, g := range groups {
		if g.Spikes >= cluster.DefaultParams().MinGroup {
			f += kilosort.ClusterInitLabels * kilosort.ClusterCandidates * 2 * float64(g.Channels) * P * float64(g.Spikes)
		}
	}
	return f
}
