package bench

import (
	"fmt"
	"slices"

	"dspk/compute"
	"dspk/detect"
	"dspk/recording"
)

// DetectStages is the table of the GPU detection's stages on one window:
// each stage's median time beside its floor, the larger of its
// compulsory bytes at the device's memory bandwidth and its arithmetic
// at its FP64 peak (the filter bank's at the FP64 tensor cores' rate).
type DetectStages struct {
	// Centres, Strong and Spikes describe the window: the template
	// centres, the strong (centre, sample) points and the spikes.
	Centres        int
	Strong, Spikes int64
	// Reps is the number of timed runs the medians are of.
	Reps int
	// Device is where the stages ran and Size the data they ran on.
	Device, Size string
	// Stages are the stages in order, then their sum.
	Stages []Stage
	// PeakSource says where the peak rates behind the floors come from.
	PeakSource string
}

// Stage is one line of a DetectStages table.
type Stage struct {
	// Name is the stage's name (detect.GPUStageNames, or "sum of
	// stages").
	Name string
	// Ms is the stage's median time in ms; Floor its floor in seconds
	// (0: none known).
	Ms, Floor float64
}

// Rows returns t as Rows, one per stage.
func (t *DetectStages) Rows() []Row {
	out := make([]Row, len(t.Stages))
	for i, s := range t.Stages {
		out[i] = Row{Op: "detect stage: " + s.Name, Size: t.Size, Device: t.Device, Time: seconds(s.Ms / 1e3), Floor: seconds(s.Floor),
			PeakSource: t.PeakSource}
	}
	return out
}

// detectStages times each GPU stage of dt's DetectWindow of win and hands
// the table to the caller. download is the measured pinned download rate
// in bytes per second (the floor of the last stage).
func (r *runner) detectStages(dt *detect.Detector, win *compute.Window, g *detect.Grid, tm *detect.Templates, T int,
	prm detect.Params, w recording.Window, st detect.Stats, download float64) error {
	if err := dt.SetStageTiming(true); err != nil {
		return err
	}
	defer dt.SetStageTiming(false)
	times := make([][]float64, len(detect.GPUStageNames))
	var sp detect.Spikes
	for range r.reps {
		sp.Reset()
		if _, err := dt.DetectWindow(&sp, win, w.OwnStart, w.Owned()); err != nil {
			return err
		}
		ms, err := dt.StageTimes()
		if err != nil {
			return err
		}
		for i, v := range ms {
			times[i] = append(times[i], v)
		}
	}
	pk := win.Device().Peaks()
	bw := pk.Bandwidth
	// The filter bank's arithmetic is counted in multiply-adds, two
	// flops each of the peaks.
	tensorFMA := pk.FP64Matrix / 2
	C, K, nt := g.C(), tm.K, prm.NT
	Ti := T - 2*nt
	strong, nd := float64(st.Strong), float64(st.Spikes)
	floors := []float64{
		max(at(float64(C*T*4+C*Ti*(K+1)*4), bw), at(float64(C*K*Ti*nt), tensorFMA)), // filter bank
		at(float64(C*Ti*4), bw), // bounds: M once
		at(strong*20, bw),       // centres: the strong list and its cells of the map
		at(strong*20, bw),       // local max: the list and the own row's neighbours
		at(strong*16, bw),       // clear: the list's points, their cells and buckets
		at(nd*float64(g.NC*(nt*4+K*4)+g.NC*tm.P*4), bw), // records
		at(nd*float64(6+g.NC*tm.P)*4, download),         // download at the pinned rate
	}
	t := &DetectStages{Centres: g.F(), Strong: st.Strong, Spikes: st.Spikes, Reps: r.reps, Device: win.Device().Spec(),
		Size: fmt.Sprintf("384×60122, %d centres", g.F()), PeakSource: pk.Source}
	var total, ftotal float64
	for i, name := range detect.GPUStageNames {
		v := times[i]
		slices.Sort(v)
		m := v[len(v)/2]
		total += m
		ftotal += floors[i]
		t.Stages = append(t.Stages, Stage{Name: name, Ms: m, Floor: floors[i]})
	}
	t.Stages = append(t.Stages, Stage{Name: "sum of stages", Ms: total, Floor: ftotal})
	if r.opt.DetectStages != nil {
		r.opt.DetectStages(t)
		return nil
	}
	for _, x := range t.Rows() {
		r.row(x)
	}
	return nil
}
