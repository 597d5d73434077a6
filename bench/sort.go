package bench

import (
	"fmt"
	"time"

	"dspk/cluster"
	"dspk/compute"
	"dspk/kilosort"
	"dspk/pipeline"
	"dspk/probe"
	"dspk/recording"
	"dspk/sim"
)

// sortSeconds is the length of the simulated NP1 recording that the sort
// op sorts when no File is given (120 units, seed 1).
const sortSeconds = 20

// sort runs the whole sort once, on the recording of opt.File or on a
// simulated 20-s NP1 recording of 120 units, with Kilosort4's defaults
// (nblocks 1) on the device, and reports one row per stage with its wall
// time and, where the stage's arithmetic is known, the floor of that
// arithmetic at the peak of the device that runs it (matching and the
// clusterings run on the device — on a GPU at its FP64 rate without
// fused multiply-adds, the kernels' float64 sums — the post-processing
// of templates and curation on the host).
// Floors (kilosort4-sort.md §10), per column of the recording: every pass
// the preprocessing's C·(26 + 2·K_w) flops (high-pass forward and back,
// whitening of K_w entries a row); the motion and detection passes the
// universal filter bank, 2·K·nt·C; matching 2·P·nt·C + 2·N'·C·P
// (filtering by the PCA basis, projection on the templates);
// clustering the k-means++ products 200·100·2·d·n of every group that is
// clustered (d = its channels·P, n its spikes).
func (r *runner) sort() error {
	dev := r.dev
	var rec recording.Recording
	var pr *probe.Probe
	if r.opt.File != "" {
		rc, p, _, err := r.open()
		if err != nil {
			return err
		}
		defer rc.Close()
		rec, pr = rc, p
	} else {
		cfg := sim.DefaultConfig()
		cfg.Seconds, cfg.Seed = sortSeconds, 1
		rc, err := sim.Generate(cfg)
		if err != nil {
			return err
		}
		rec, pr = rc, rc.Probe()
	}
	cfg := pipeline.DefaultConfig()
	cfg.NBlocks = 1
	p, err := pipeline.New(dev, rec, pr, cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	t0 := time.Now()
	res, err := p.Sort(r.ctx, pipeline.DefaultSortOptions())
	if err != nil {
		return err
	}
	wall := time.Since(t0)
	pk := dev.Peaks()
	peak64, peak32 := pk.FP64, pk.FP32
	if dev.Kind() == compute.CUDA {
		// The CUDA matcher and clusterer sum in float64 with FMA off: one
		// flop per lane and clock.
		peak64, peak32 = pk.FP64/2, pk.FP64/2
	}
	C, P := float64(pr.Len()), float64(res.Learned.P)
	nt := float64(p.Config().NT)
	cols := float64(p.Schedule().End - p.Schedule().Start)
	size := fmt.Sprintf("%.0f s, %d sites", float64(rec.Samples())/rec.SampleRate(), pr.Len())
	// Per column, every pass over the recording preprocesses (the
	// high-pass forward and back, 13 flops a pass for a third-order
	// section, and the whitening's 2·K products per channel; the motion
	// correction's matrix is left out, so the floor stays below) and the
	// two detection passes run the universal filter bank (2·K·nt per
	// channel).
	prep := C * (2*13 + 2*float64(res.Info.Whitening.K))
	univ := 2 * C * float64(res.Info.Universal.K) * nt
	for _, s := range res.Stages {
		x := Row{Label: "sort " + s.Name, Op: "sort " + s.Name, Size: size, Device: dev.Spec(),
			Time: time.Duration(s.Seconds * float64(time.Second)), Nums: []Num{{"count", float64(s.Count)}}}
		var flops, peak float64
		switch s.Name {
		case "motion":
			flops, peak = cols*(prep+univ), peak32
		case "detection":
			flops, peak = cols*(prep+univ), peak32
		case "matching":
			flops = cols * (prep + 2*P*nt*C + 2*float64(res.Learned.N)*C*P)
			peak = peak32
		case "clustering spikes":
			flops, peak = kmeansFlops(res.Groups0, P), peak64
		case "clustering templates":
			flops, peak = kmeansFlops(res.Groups1, P), peak64
		case "learned templates", "curation":
			x.Device = r.host.Spec()
		}
		x.Text = fmt.Sprintf("%d %s", s.Count, s.What)
		if flops > 0 {
			x.Nums = append(x.Nums, Num{"gflop", flops / 1e9})
			if peak > 0 {
				floor := flops / peak
				x.Floor = seconds(floor)
				x.PeakSource = pk.Source
				x.Text += fmt.Sprintf(", %.1f GFLOP, floor %.0f ms at %.0f GFLOP/s, %.0f%% of it", flops/1e9, floor*1e3,
					peak/1e9, 100*floor/s.Seconds)
			} else {
				x.Text += fmt.Sprintf(", %.1f GFLOP, no floor (peak rate unknown)", flops/1e9)
			}
		}
		r.row(x)
	}
	secs := res.Summary.Seconds
	r.row(Row{Label: "sort whole", Op: "sort whole", Size: size, Device: dev.Spec(), Time: wall,
		Nums: []Num{{"times_real_time", secs / wall.Seconds()}, {"units", float64(res.Curated.Units.N)}},
		Text: fmt.Sprintf("%d units, %.2f× real time", res.Curated.Units.N, secs/wall.Seconds())})
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
