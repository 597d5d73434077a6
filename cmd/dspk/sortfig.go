package main

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"dspk/pipeline"
)

// sortSummaryFile is the picture sort writes into its folder.
const sortSummaryFile = "sort_summary.png"

// unitSummary holds what the summary figure shows of each unit.
type unitSummary struct {
	y, amp, contam []float64
	good           []bool
	spikes         []int
}

// summarise returns each unit's mean spike depth, amplitude ‖W‖,
// contamination (ContamPct), label and spike count.
func summarise(r *pipeline.SortResult) unitSummary {
	cr := r.Curated
	N := cr.Units.N
	u := unitSummary{y: make([]float64, N), amp: cr.Amplitude, contam: cr.ContamPct, good: cr.Good, spikes: make([]int, N)}
	for i, k := range cr.Spikes.Cluster {
		u.y[k] += float64(cr.Positions[2*i+1])
		u.spikes[k]++
	}
	for k := range N {
		if u.spikes[k] > 0 {
			u.y[k] /= float64(u.spikes[k])
		}
	}
	return u
}

// drawSortSummary draws sort_summary.png: the units along the probe
// (depth against amplitude, good units filled, mua open) and their
// refractory violations (ContamPct against depth); the title names the
// motion estimate (none while sort runs without drift correction).
func drawSortSummary(path string, r *pipeline.SortResult) error {
	if r == nil {
		return fmt.Errorf("sort summary: no result")
	}
	const W, H = 12 * vg.Inch, 7 * vg.Inch
	u := summarise(r)
	pr := r.Info.Probe
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, v := range pr.Y {
		ymin, ymax = min(ymin, v), max(ymax, v)
	}
	ymin, ymax = ymin-20, ymax+20
	good, mua := plotter.XYs{}, plotter.XYs{}
	cgood, cmua := plotter.XYs{}, plotter.XYs{}
	for k := range u.y {
		if u.spikes[k] == 0 {
			continue
		}
		if u.good[k] {
			good = append(good, plotter.XY{X: u.amp[k], Y: u.y[k]})
			cgood = append(cgood, plotter.XY{X: u.contam[k], Y: u.y[k]})
		} else {
			mua = append(mua, plotter.XY{X: u.amp[k], Y: u.y[k]})
			cmua = append(cmua, plotter.XY{X: u.contam[k], Y: u.y[k]})
		}
	}
	ngood := len(good)
	motionText := "motion: not estimated (nblocks 0)"
	if r.Info.Motion != nil {
		d := motionTable(r.Info)
		motionText = fmt.Sprintf("motion: %.1f to %.1f µm (nblocks %d)", d.minDisp()+0, d.maxDisp()+0, r.Info.Config.NBlocks) // +0: no "-0.0"
	}
	title := fmt.Sprintf("%d units (%d good, %d mua), %d spikes; %s",
		len(u.y), ngood, len(u.y)-ngood, r.Curated.Spikes.Len(), motionText)
	panel := func(t, xl string, g, m plotter.XYs) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = t
		p.X.Label.Text = xl
		p.Y.Label.Text = "depth (µm)"
		p.Y.Min, p.Y.Max = ymin, ymax
		p.X.Min = 0
		for _, s := range []struct {
			xy    plotter.XYs
			shape draw.GlyphDrawer
			col   color.Color
			name  string
		}{
			{g, draw.CircleGlyph{}, color.RGBA{R: 20, G: 120, B: 40, A: 255}, "good"},
			{m, draw.RingGlyph{}, color.RGBA{R: 160, G: 40, B: 40, A: 255}, "mua"},
		} {
			if len(s.xy) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(s.xy)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: s.col, Radius: vg.Points(3), Shape: s.shape}
			p.Add(sc)
			p.Legend.Add(s.name, sc)
		}
		p.Legend.Top = true
		return p, nil
	}
	ap, err := panel(title, "amplitude ‖W‖ (whitened units)", good, mua)
	if err != nil {
		return fmt.Errorf("sort summary: %w", err)
	}
	cp, err := panel("refractory violations", fmt.Sprintf("ContamPct (good below %.0f)", 100*r.Params.Curate.ACGThreshold), cgood, cmua)
	if err != nil {
		return fmt.Errorf("sort summary: %w", err)
	}
	img := vgimg.NewWith(vgimg.UseWH(W, H), vgimg.UseDPI(100))
	dc := draw.New(img)
	aw := 0.62 * W
	top := vg.Length(0)
	if r.Info.Motion != nil {
		// The motion estimate along the bottom third.
		mp, err := motionPanel(motionTable(r.Info))
		if err != nil {
			return fmt.Errorf("sort summary: %w", err)
		}
		top = H / 3
		mp.Draw(draw.Crop(dc, 0, 0, 0, top-H))
	}
	ap.Draw(draw.Crop(dc, 0, aw-W, top, 0))
	cp.Draw(draw.Crop(dc, aw, 0, top, -vg.Inch/3))
	return writePNG(path, img)
}

// motionPanel plots the estimated displacement −dshift of each block
// against time.
func motionPanel(d *driftTable) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "motion estimate"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "−dshift (µm)"
	for j := range d.B {
		l, err := d.blockLine(j)
		if err != nil {
			return nil, err
		}
		l.Color = color.RGBA{R: uint8(40 + 200*j/max(1, d.B)), G: 60, B: 160, A: 255}
		p.Add(l)
	}
	return p, nil
}
