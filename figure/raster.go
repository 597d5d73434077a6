package figure

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"math"
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// maxRasterPoints caps the spikes drawn in a drift raster; beyond it an
// evenly spaced subset is drawn (PNG size and drawing time stay bounded).
// The rate panel counts every spike.
const maxRasterPoints = 200000

// rasterBinUm is the depth bin of the rate panel in µm.
const rasterBinUm = 20.0

// Raster is what a drift raster shows: every spike's time, depth and
// amplitude, the probe's extent, and the numbers that scale the axes.
type Raster struct {
	Times      []int64   // spike samples
	Y          []float32 // spike depths, µm
	Amp        []float32 // spike amplitudes, whitened SD
	ChanY      []float32 // site depths, µm (the probe's extent)
	SampleRate float64   // Hz
	Seconds    float64   // recording seconds detected
	Threshold  float64   // detection threshold, whitened SD
	Title      string
}

// The drift raster's size and the widths of its raster and key panels.
const (
	rasterW, rasterH   = 12 * vg.Inch, 6 * vg.Inch
	rasterRW, rasterKW = 0.66 * rasterW, 0.10 * rasterW
)

// RasterLayout is what the fixed parts of a drift raster (the raster
// panel's axes and the colour key) depend on. A detect run knows it
// before its spikes are in, from the probe, the recording's length and
// the threshold, unless a spike lies beyond the probe's sites or the
// recording's end.
type RasterLayout struct {
	threshold  float64 // whitened SD
	xmax       float64 // end of the time axis, s
	ymin, ymax float64 // the depth axes' range, µm
	titleLines int     // the lines of the raster panel's title
}

// LayoutOf returns the layout of the raster of d: depths over the sites
// and the spikes, half a rate bin beyond; time from 0 to the recording's
// end or the last spike drawn. A run that knows its probe, length,
// threshold and title before its spikes gets the layout its raster will
// have, unless a spike lies beyond the sites or the end, by passing d
// without spikes.
func LayoutOf(d *Raster) RasterLayout {
	step := rasterStep(len(d.Times))
	lay := RasterLayout{threshold: d.Threshold, ymin: math.Inf(1), ymax: math.Inf(-1), xmax: max(d.Seconds, 1/d.SampleRate)}
	for _, v := range d.ChanY {
		lay.ymin, lay.ymax = min(lay.ymin, float64(v)), max(lay.ymax, float64(v))
	}
	for _, v := range d.Y {
		lay.ymin, lay.ymax = min(lay.ymin, float64(v)), max(lay.ymax, float64(v))
	}
	if lay.ymin > lay.ymax {
		lay.ymin, lay.ymax = 0, 1
	}
	lay.ymin, lay.ymax = lay.ymin-rasterBinUm/2, lay.ymax+rasterBinUm/2
	for i := 0; i < len(d.Times); i += step {
		lay.xmax = max(lay.xmax, float64(d.Times[i])/d.SampleRate)
	}
	lay.titleLines = titleLines(d.Title)
	return lay
}

// titleLines is the number of lines plot.Draw gives title.
func titleLines(title string) int {
	if title == "" {
		return 0
	}
	return len(plot.New().Title.TextStyle.Handler.Lines(title))
}

// rasterStep is the stride of the spikes drawn of n (all up to
// maxRasterPoints).
func rasterStep(n int) int { return max(1, (n+maxRasterPoints-1)/maxRasterPoints) }

// RasterCanvas is a drift raster's picture with the parts of its layout
// drawn: the raster panel's background and axes, and the colour key.
// Drawing the spikes on it ([EncodeRaster]) adds what depends on the
// spikes: the raster panel's title and dots, and the rate panel. A canvas
// serves one raster.
type RasterCanvas struct {
	lay RasterLayout
	img *vgimg.Canvas
	dc  draw.Canvas
	rp  *plot.Plot  // the raster panel, no title or dots yet
	rc  draw.Canvas // its area, title line included
	lut *colourTable
}

// NewRasterCanvas draws the parts of a raster of layout lay. The raster
// panel is drawn as plot.Draw would with a one-line title: its axes
// below the title's line, which stays background until finish writes the
// title in it.
func NewRasterCanvas(lay RasterLayout) *RasterCanvas {
	lo, hi := math.Log(lay.threshold), math.Log(10*lay.threshold)
	cm := newAmpColours(lo, hi)
	c := &RasterCanvas{lay: lay, lut: newColourTable(cm, lo, hi)}
	c.img = vgimg.NewWith(vgimg.UseWH(rasterW, rasterH), vgimg.UseDPI(100))
	c.dc = draw.New(c.img)
	rp := plot.New()
	rp.X.Label.Text = "time (s)"
	rp.Y.Label.Text = "depth (µm)"
	rp.Y.Min, rp.Y.Max = lay.ymin, lay.ymax
	rp.X.Min, rp.X.Max = 0, lay.xmax
	c.rp, c.rc = rp, draw.Crop(c.dc, 0, rasterRW-rasterW, 0, 0)
	body := c.rc
	if lay.titleLines > 0 { // its height depends on the number of lines alone
		line := strings.Repeat("x\n", lay.titleLines-1) + "x"
		body.Max.Y -= rp.Title.TextStyle.Rectangle(line).Size().Y + rp.Title.Padding
	}
	rp.Draw(body)

	// Colour key, labelled in amplitude (whitened SD) at log positions.
	kp := plot.New()
	kp.Title.Text = "amplitude"
	kp.Y.Label.Text = "whitened SD (log scale)"
	kp.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	var ticks []plot.Tick
	for _, m := range []float64{1, 1.5, 2, 3, 5, 7, 10} {
		ticks = append(ticks, plot.Tick{Value: math.Log(m * lay.threshold), Label: fmt.Sprintf("%.3g", m*lay.threshold)})
	}
	kp.Y.Tick.Marker = plot.ConstantTicks(ticks)
	kp.HideX()
	kp.Draw(draw.Crop(c.dc, rasterRW, rasterRW+rasterKW-rasterW, vg.Inch/2, -vg.Inch/4))
	return c
}

// finish draws d's spikes on c, which must have d's layout: the raster
// panel's title and dots, and the rate panel.
func (c *RasterCanvas) finish(d *Raster) error {
	lay, rp := c.lay, c.rp
	// The title in its lines, as plot.Draw writes it.
	if d.Title != "" {
		rp.Title.Text = d.Title
		descent := rp.Title.TextStyle.FontExtents().Descent
		c.rc.FillText(rp.Title.TextStyle, vg.Point{X: c.rc.Center().X, Y: c.rc.Max.Y + descent}, d.Title)
	}
	n := len(d.Times)
	step := rasterStep(n)
	xys := make(plotter.XYs, 0, n/step+1)
	cols := make([]color.Color, 0, n/step+1)
	for i := 0; i < n; i += step {
		xys = append(xys, plotter.XY{X: float64(d.Times[i]) / d.SampleRate, Y: float64(d.Y[i])})
		cols = append(cols, c.lut.at(math.Log(max(float64(d.Amp[i]), 1e-30))))
	}
	if len(xys) > 0 {
		dots := &dots{xys: xys, cols: cols, radius: vg.Points(0.6)}
		rp.Add(dots) // within the layout's ranges: they stay
		dots.Plot(rp.DataCanvas(c.rc), rp)
	}

	// Rate along the probe.
	pp := plot.New()
	pp.Title.Text = "rate along the probe"
	pp.X.Label.Text = "spikes/s per 20 µm"
	pp.Y.Label.Text = "depth (µm)"
	pp.Y.Min, pp.Y.Max = lay.ymin, lay.ymax
	nb := max(1, int(math.Ceil((lay.ymax-lay.ymin)/rasterBinUm)))
	counts := make([]float64, nb)
	for _, v := range d.Y {
		b := min(max(int((float64(v)-lay.ymin)/rasterBinUm), 0), nb-1)
		counts[b]++
	}
	secs := max(d.Seconds, 1/d.SampleRate)
	prof := make(plotter.XYs, 0, 2*nb)
	for b, c := range counts {
		r := c / secs
		prof = append(prof, plotter.XY{X: r, Y: lay.ymin + float64(b)*rasterBinUm}, plotter.XY{X: r, Y: lay.ymin + float64(b+1)*rasterBinUm})
	}
	l, err := plotter.NewLine(prof)
	if err != nil {
		return fmt.Errorf("drift raster: %w", err)
	}
	l.Color = color.RGBA{R: 40, G: 40, B: 160, A: 255}
	pp.Add(l)
	pp.X.Min = 0
	pp.Draw(draw.Crop(c.dc, rasterRW+rasterKW, 0, 0, 0))
	return nil
}

// EncodeRaster draws d as a PNG tagged as drawn by dspk version (see
// [IsDspkPNG]): on the left the spikes as depth against time, coloured by
// amplitude on a log scale from the threshold to 10× it, with its colour
// key; on the right the spike rate along the probe (spikes/s per 20-µm
// bin of depth). It draws on the canvas prepared returns for d's layout,
// or on a new one where it returns nil (or prepared is nil); the pixels
// are the same. It stops with ctx's error once ctx is done.
func EncodeRaster(ctx context.Context, d *Raster, version string, prepared func(RasterLayout) *RasterCanvas) ([]byte, error) {
	lay := LayoutOf(d)
	var c *RasterCanvas
	if prepared != nil {
		c = prepared(lay)
	}
	if c == nil {
		c = NewRasterCanvas(lay)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.finish(d); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := encodePNG(&buf, c.img.Image()); err != nil {
		return nil, fmt.Errorf("encoding the drift raster: %w", err)
	}
	b, err := TagPNG(buf.Bytes(), version)
	if err != nil {
		return nil, fmt.Errorf("encoding the drift raster: %w", err)
	}
	return b, nil
}

// RasterPreparation is a drift raster canvas a run prepares beside its
// work, for the layout it expects before its spikes are known (see
// [NewRasterCanvas]). The zero value holds none. Its methods may be
// called from several goroutines.
type RasterPreparation struct {
	mu   sync.Mutex
	lay  RasterLayout
	done chan *RasterCanvas // nil until Start
	used bool
}

// Start draws, on a goroutine, the parts of a raster of layout lay,
// unless a canvas is being prepared already.
func (r *RasterPreparation) Start(lay RasterLayout) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		r.lay, r.done = lay, make(chan *RasterCanvas, 1)
		go func() { r.done <- NewRasterCanvas(lay) }()
	}
}

// Take returns the prepared canvas if it has layout lay, else nil; the
// canvas serves the first raster asked for, of its layout or not.
func (r *RasterPreparation) Take(lay RasterLayout) *RasterCanvas {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil || r.used {
		return nil
	}
	r.used = true
	if lay != r.lay {
		return nil
	}
	return <-r.done
}

// ampColours is the colour map of amplitudes: [Min, Max] onto the part
// [0.05, 0.85] of Kindlmann's perceptually uniform map (dark purple
// through blue and green to yellow), so that no amplitude is drawn white
// on the white background. Values outside are clamped.
type ampColours struct {
	palette.ColorMap
	lo, hi float64
}

// newAmpColours is the map of amplitudes over [lo, hi].
func newAmpColours(lo, hi float64) *ampColours {
	k := moreland.Kindlmann()
	k.SetMin(0)
	k.SetMax(1)
	return &ampColours{ColorMap: k, lo: lo, hi: hi}
}

// At returns the colour of v (palette.ColorMap).
func (a *ampColours) At(v float64) (color.Color, error) {
	f := min(max((v-a.lo)/(a.hi-a.lo), 0), 1)
	return a.ColorMap.At(0.05 + 0.8*f)
}
func (a *ampColours) Min() float64     { return a.lo }
func (a *ampColours) Max() float64     { return a.hi }
func (a *ampColours) SetMin(v float64) { a.lo = v }
func (a *ampColours) SetMax(v float64) { a.hi = v }
