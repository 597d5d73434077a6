package figure

import (
	"fmt"
	"image/color"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Drift is a drift estimate: the shift of every block of every window.
type Drift struct {
	Windows, Blocks int
	Dshift          []float64 // [Windows×Blocks] µm: the shift that moves a window onto the reference
	Times           []float64 // [Windows] s, window centres
	Depths          []float64 // [Blocks] µm, block depths (Kilosort4's yblk)
}

// MinDisplacement is the smallest estimated displacement −dshift in µm
// (0 for no shift).
func (d *Drift) MinDisplacement() float64 {
	v := 0.0
	for i, s := range d.Dshift {
		if i == 0 || -s < v {
			v = -s
		}
	}
	return v
}

// MaxDisplacement is the largest estimated displacement −dshift in µm
// (0 for no shift).
func (d *Drift) MaxDisplacement() float64 {
	v := 0.0
	for i, s := range d.Dshift {
		if i == 0 || -s > v {
			v = -s
		}
	}
	return v
}

// WriteDriftPlot draws the estimated displacement (−dshift, µm) against
// time, one line per block labelled with its depth, as a new PNG at
// path.
func WriteDriftPlot(path string, d *Drift, title string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "estimated displacement −dshift (µm)"
	p.Legend.Top = true
	p.Legend.Left = true
	for j := range d.Blocks {
		l, err := d.blockLine(j)
		if err != nil {
			return fmt.Errorf("drift plot: %w", err)
		}
		l.Color = blockColour(j, d.Blocks)
		l.Width = vg.Points(1.2)
		p.Add(l)
		if d.Blocks <= 12 || j%max(1, d.Blocks/12) == 0 {
			p.Legend.Add(fmt.Sprintf("%.0f µm", d.Depths[j]), l)
		}
	}
	if d.Windows == 1 {
		p.X.Min, p.X.Max = d.Times[0]-1, d.Times[0]+1
	}
	img := vgimg.NewWith(vgimg.UseWH(10*vg.Inch, 5*vg.Inch), vgimg.UseDPI(100))
	p.Draw(draw.New(img))
	return writePNG(path, img)
}

// blockLine is the line of block j's estimated displacement (−dshift,
// µm) against time.
func (d *Drift) blockLine(j int) (*plotter.Line, error) {
	xy := make(plotter.XYs, d.Windows)
	for w := range d.Windows {
		xy[w] = plotter.XY{X: d.Times[w], Y: -d.Dshift[w*d.Blocks+j]}
	}
	return plotter.NewLine(xy)
}

// writePNG writes img to a new file at path as a PNG.
func writePNG(path string, img *vgimg.Canvas) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// blockColour spreads the blocks over the amplitude colour map (deepest
// block dark, shallowest light).
func blockColour(j, n int) color.Color {
	cm := newAmpColours(0, 1)
	c, err := cm.At(float64(j) / math.Max(1, float64(n-1)))
	if err != nil {
		return color.Black
	}
	return c
}
