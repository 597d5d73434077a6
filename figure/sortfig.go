package figure

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// SortSummary is what the summary figure of a sort shows: per unit its
// mean spike depth (µm), amplitude ‖W‖, contamination (ContamPct), label
// and spike count, and the run's numbers.
type SortSummary struct {
	Y, Amp, Contam []float64
	Good           []bool // good, else mua
	Spikes         []int
	ProbeY         []float64 // site depths, µm
	TotalSpikes    int
	ACGThreshold   float64 // the fraction of ContamPct below which a unit is good
	NBlocks        int
	Drift          *Drift // the motion estimate; nil without
}

// WriteSortSummary draws the summary of a sort as a new PNG at path: the units along the probe
// (depth against amplitude, good units filled, mua open) and their
// refractory violations (ContamPct against depth); the title names the
// motion estimate (none while sort runs without drift correction).
func WriteSortSummary(path string, u *SortSummary) error {
	const W, H = 12 * vg.Inch, 7 * vg.Inch
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, v := range u.ProbeY {
		ymin, ymax = min(ymin, v), max(ymax, v)
	}
	ymin, ymax = ymin-20, ymax+20
	good, mua := plotter.XYs{}, plotter.XYs{}
	cgood, cmua := plotter.XYs{}, plotter.XYs{}
	for k := range u.Y {
		if u.Spikes[k] == 0 {
			continue
		}
		if u.Good[k] {
			good = append(good, plotter.XY{X: u.Amp[k], Y: u.Y[k]})
			cgood = append(cgood, plotter.XY{X: u.Contam[k], Y: u.Y[k]})
		} else {
			mua = append(mua, plotter.XY{X: u.Amp[k], Y: u.Y[k]})
			cmua = append(cmua, plotter.XY{X: u.Contam[k], Y: u.Y[k]})
		}
	}
	ngood := len(good)
	motionText := "motion: not estimated (nblocks 0)"
	if d := u.Drift; d != nil {
		motionText = fmt.Sprintf("motion: %.1f to %.1f µm (nblocks %d)", d.MinDisplacement()+0, d.MaxDisplacement()+0, u.NBlocks) // +0: no "-0.0"
	}
	title := fmt.Sprintf("%d units (%d good ●, %d mua ○), %d spikes; %s",
		len(u.Y), ngood, len(u.Y)-ngood, u.TotalSpikes, motionText)
	panel := func(t, xl string, g, m plotter.XYs) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = t
		p.X.Label.Text = xl
		p.Y.Label.Text = "depth (µm)"
		p.Y.Min, p.Y.Max = ymin, ymax
		p.X.Min = 0
		readable(p)
		for _, s := range []struct {
			xy    plotter.XYs
			shape draw.GlyphDrawer
			col   color.Color
		}{
			{g, draw.CircleGlyph{}, color.RGBA{R: 20, G: 120, B: 40, A: 255}},
			{m, draw.RingGlyph{}, color.RGBA{R: 160, G: 40, B: 40, A: 255}},
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
		}
		// No legend box over the units: the titles say that good units
		// are filled and mua open.
		return p, nil
	}
	ap, err := panel(title, "amplitude ‖W‖ (whitened units)", good, mua)
	if err != nil {
		return fmt.Errorf("sort summary: %w", err)
	}
	cp, err := contamPanel(panel, u.ACGThreshold, cgood, cmua, ymin, ymax)
	if err != nil {
		return fmt.Errorf("sort summary: %w", err)
	}
	img := vgimg.NewWith(vgimg.UseWH(W, H), vgimg.UseDPI(100))
	dc := draw.New(img)
	aw := 0.62 * W
	top := vg.Length(0)
	if u.Drift != nil {
		// The motion estimate along the bottom third.
		mp, err := motionPanel(u.Drift)
		if err != nil {
			return fmt.Errorf("sort summary: %w", err)
		}
		top = H / 3
		mp.Draw(draw.Crop(dc, 0, 0, 0, top-H))
	}
	ap.Draw(draw.Crop(dc, 0, aw-W, top, -vg.Inch/8))
	cp.Draw(draw.Crop(dc, aw, -vg.Inch/8, top, -vg.Inch/8))
	return writePNG(path, img)
}

// contamPanel draws the units' ContamPct against depth with panel, on a
// log axis (ContamPct spans 0 to hundreds; 0 is drawn at contamFloor),
// with the good threshold (100·acg) as a dashed line.
func contamPanel(panel func(t, xl string, g, m plotter.XYs) (*plot.Plot, error), acg float64, g, m plotter.XYs, ymin, ymax float64) (*plot.Plot, error) {
	for _, xy := range []plotter.XYs{g, m} {
		for i := range xy {
			xy[i].X = max(xy[i].X, contamFloor)
		}
	}
	cp, err := panel("refractory violations (good ●, mua ○)", fmt.Sprintf("ContamPct, log (good below %.0f; 0 drawn at %g)", 100*acg, contamFloor), g, m)
	if err != nil {
		return nil, err
	}
	cp.X.Min = contamFloor
	cp.X.Max = math.Max(1000, cp.X.Max)
	cp.X.Scale, cp.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	if th := 100 * acg; th > contamFloor {
		l, err := plotter.NewLine(plotter.XYs{{X: th, Y: ymin}, {X: th, Y: ymax}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Dashes = color.Gray{Y: 120}, []vg.Length{vg.Points(4), vg.Points(3)}
		cp.Add(l)
	}
	return cp, nil
}

// contamFloor is where the summary draws a ContamPct of 0 (and anything
// below it) on its log axis.
const contamFloor = 0.1

// readable sets font sizes that stay legible on the 12 × 7-inch figure
// at 100 dpi.
func readable(p *plot.Plot) {
	p.Title.TextStyle.Font.Size = vg.Points(13)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(12)
		a.Tick.Label.Font.Size = vg.Points(11)
	}
}

// motionPanel plots the estimated displacement −dshift of each block
// against time.
func motionPanel(d *Drift) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "motion estimate"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "−dshift (µm)"
	readable(p)
	for j := range d.Blocks {
		l, err := d.blockLine(j)
		if err != nil {
			return nil, err
		}
		l.Color = color.RGBA{R: uint8(40 + 200*j/max(1, d.Blocks)), G: 60, B: 160, A: 255}
		p.Add(l)
	}
	return p, nil
}
