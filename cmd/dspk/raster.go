package main

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// maxRasterPoints caps the spikes drawn in a drift raster; beyond it an
// evenly spaced subset is drawn (PNG size and drawing time stay bounded).
const maxRasterPoints = 200000

// writeDriftRaster draws spikes as depth against time, coloured by
// amplitude on a log scale from the threshold to 10× it, into a PNG.
func writeDriftRaster(path string, times []int64, y []float32, amp []float32, fs, threshold float64, title string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "depth (µm)"
	n := len(times)
	step := 1
	if n > maxRasterPoints {
		step = (n + maxRasterPoints - 1) / maxRasterPoints
	}
	xys := make(plotter.XYs, 0, n/step+1)
	amps := make([]float64, 0, n/step+1)
	for i := 0; i < n; i += step {
		xys = append(xys, plotter.XY{X: float64(times[i]) / fs, Y: float64(y[i])})
		amps = append(amps, float64(amp[i]))
	}
	cm := moreland.SmoothBlueRed()
	lo, hi := math.Log(threshold), math.Log(10*threshold)
	cm.SetMin(lo)
	cm.SetMax(hi)
	s, err := plotter.NewScatter(xys)
	if err != nil && len(xys) > 0 {
		return fmt.Errorf("drift raster: %w", err)
	}
	if s != nil {
		s.GlyphStyleFunc = func(i int) draw.GlyphStyle {
			v := math.Log(max(amps[i], threshold))
			c, err := cm.At(min(max(v, lo), hi))
			if err != nil {
				c = color.Black
			}
			return draw.GlyphStyle{Color: c, Radius: vg.Points(0.6), Shape: draw.CircleGlyph{}}
		}
		p.Add(s)
	}
	return p.Save(10*vg.Inch, 6*vg.Inch, path)
}
