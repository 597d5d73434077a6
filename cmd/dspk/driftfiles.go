package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"dspk/export"
)

// The files of a drift estimate, in a drift folder and in a detect folder
// run with -nblocks > 0.
const (
	driftFile       = "drift.npy"        // dshift [windows, blocks] µm, float64
	driftTimesFile  = "drift_times.npy"  // window centre times [windows] s, float64
	driftDepthsFile = "drift_depths.npy" // block depths (yblk) [blocks] µm, float64
	driftPlotFile   = "drift.png"
	// driftRasterFile is the raster of the detection pass on the
	// corrected windows that dspk drift draws.
	driftRasterFile = "drift_raster_corrected.png"
)

// driftTable is a drift estimate as its files hold it.
type driftTable struct {
	W, B   int
	Dshift []float64 // [W×B] µm: the shift that moves a window onto the reference
	Times  []float64 // [W] s, window centres
	Depths []float64 // [B] µm, block depths (Kilosort4's yblk)
}

// writeDriftFiles writes drift.npy, drift_times.npy and drift_depths.npy
// into dir.
func writeDriftFiles(dir string, d *driftTable) error {
	if len(d.Dshift) != d.W*d.B || len(d.Times) != d.W || len(d.Depths) != d.B {
		return fmt.Errorf("drift estimate of %d shifts, %d times, %d depths for %d windows × %d blocks",
			len(d.Dshift), len(d.Times), len(d.Depths), d.W, d.B)
	}
	if err := export.WriteNPYFile(filepath.Join(dir, driftFile), []int{d.W, d.B}, d.Dshift); err != nil {
		return err
	}
	if err := export.WriteNPYFile(filepath.Join(dir, driftTimesFile), []int{d.W}, d.Times); err != nil {
		return err
	}
	return export.WriteNPYFile(filepath.Join(dir, driftDepthsFile), []int{d.B}, d.Depths)
}

// hasDrift reports whether dir holds a drift estimate.
func hasDrift(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, driftFile))
	return err == nil
}

// readDriftFiles reads the drift estimate of a drift or detect folder.
func readDriftFiles(dir string) (*driftTable, error) {
	read := func(name string) ([]float64, []int, error) {
		a, err := readNPY(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, err
		}
		v, err := a.Float64()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		return v, a.Shape, nil
	}
	d := &driftTable{}
	var shape []int
	var err error
	if d.Dshift, shape, err = read(driftFile); err != nil {
		return nil, err
	}
	if len(shape) != 2 {
		return nil, fmt.Errorf("%s: shape (%v), want (windows, blocks)", filepath.Join(dir, driftFile), shape)
	}
	d.W, d.B = shape[0], shape[1]
	if d.Times, _, err = read(driftTimesFile); err != nil {
		return nil, err
	}
	if d.Depths, _, err = read(driftDepthsFile); err != nil {
		return nil, err
	}
	if len(d.Times) != d.W || len(d.Depths) != d.B {
		return nil, fmt.Errorf("%s: %d window times and %d block depths for a drift of %d windows × %d blocks",
			dir, len(d.Times), len(d.Depths), d.W, d.B)
	}
	return d, nil
}

// writeDriftPlot draws the estimated displacement (−dshift, µm) against
// time, one line per block labelled with its depth, as a PNG at path.
func writeDriftPlot(path string, d *driftTable, title string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "estimated displacement −dshift (µm)"
	p.Legend.Top = true
	p.Legend.Left = true
	for j := range d.B {
		l, err := d.blockLine(j)
		if err != nil {
			return fmt.Errorf("drift plot: %w", err)
		}
		l.Color = blockColour(j, d.B)
		l.Width = vg.Points(1.2)
		p.Add(l)
		if d.B <= 12 || j%max(1, d.B/12) == 0 {
			p.Legend.Add(fmt.Sprintf("%.0f µm", d.Depths[j]), l)
		}
	}
	if d.W == 1 {
		p.X.Min, p.X.Max = d.Times[0]-1, d.Times[0]+1
	}
	img := vgimg.NewWith(vgimg.UseWH(10*vg.Inch, 5*vg.Inch), vgimg.UseDPI(100))
	p.Draw(draw.New(img))
	return writePNG(path, img)
}

// blockLine is the line of block j's estimated displacement (−dshift,
// µm) against time.
func (d *driftTable) blockLine(j int) (*plotter.Line, error) {
	xy := make(plotter.XYs, d.W)
	for w := range d.W {
		xy[w] = plotter.XY{X: d.Times[w], Y: -d.Dshift[w*d.B+j]}
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
