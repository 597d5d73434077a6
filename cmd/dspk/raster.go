package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
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

// rasterFile is the picture detect writes into its folder.
const rasterFile = "drift_raster.png"

// rasterData is what a drift raster shows, read from a detect folder.
type rasterData struct {
	times     []int64   // spike samples
	y         []float32 // spike depths, µm
	amp       []float32 // spike amplitudes, whitened SD
	chanY     []float32 // site depths, µm (the probe's extent)
	fs        float64   // sample rate, Hz
	seconds   float64   // recording seconds detected
	threshold float64   // detection threshold, whitened SD
	title     string
}

// readRaster reads spike_times.npy, spike_positions.npy, amplitudes.npy,
// channel_positions.npy and dspk.json of a detect folder.
func readRaster(dir string) (*rasterData, error) {
	var prov struct {
		Input struct {
			Path       string  `json:"path"`
			SampleRate float64 `json:"sample_rate"`
		} `json:"input"`
		Config struct {
			Th float64 `json:"Th_universal"`
		} `json:"config"`
		Summary struct {
			Seconds float64 `json:"recording_seconds"`
		} `json:"summary"`
		Clusters int `json:"clusters"`
	}
	pj := filepath.Join(dir, "dspk.json")
	b, err := os.ReadFile(pj)
	if err != nil {
		return nil, fmt.Errorf("%s is not a dspk detect folder: %w", dir, err)
	}
	if err := json.Unmarshal(b, &prov); err != nil {
		return nil, fmt.Errorf("%s: %w", pj, err)
	}
	if !(prov.Input.SampleRate > 0) || !(prov.Config.Th > 0) {
		return nil, fmt.Errorf("%s: no sample rate or threshold", pj)
	}
	d := &rasterData{fs: prov.Input.SampleRate, threshold: prov.Config.Th, seconds: prov.Summary.Seconds}
	// The four arrays are read concurrently: decoding them is most of
	// the time before the drawing, and the raster is on the critical path
	// at the end of a detect run.
	var pos, chpos []float32
	var errs [4]error
	var wg sync.WaitGroup
	for i, f := range []struct {
		name string
		dst  *[]float32
	}{
		{"spike_positions.npy", &pos}, {"amplitudes.npy", &d.amp}, {"channel_positions.npy", &chpos},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := readNPY(filepath.Join(dir, f.name))
			if err == nil {
				*f.dst, err = a.Float32()
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", filepath.Join(dir, f.name), err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		a, err := readNPY(filepath.Join(dir, "spike_times.npy"))
		if err == nil {
			d.times, err = a.Int64()
		}
		if err != nil {
			errs[3] = fmt.Errorf("%s: %w", filepath.Join(dir, "spike_times.npy"), err)
		}
	}()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	n := len(d.times)
	if len(pos) != 2*n || len(d.amp) != n {
		return nil, fmt.Errorf("%s: %d spike times, %d positions and %d amplitudes", dir, n, len(pos)/2, len(d.amp))
	}
	d.y = make([]float32, n)
	for i := range d.y {
		d.y[i] = pos[2*i+1]
	}
	for i := 1; i < len(chpos); i += 2 {
		d.chanY = append(d.chanY, chpos[i])
	}
	d.title = fmt.Sprintf("%s: %d spikes, %d clusters", filepath.Base(prov.Input.Path), n, prov.Clusters)
	return d, nil
}

// The drift raster's size and the widths of its raster and key panels.
const (
	rasterW, rasterH   = 12 * vg.Inch, 6 * vg.Inch
	rasterRW, rasterKW = 0.66 * rasterW, 0.10 * rasterW
)

// rasterLayout is what the fixed parts of a drift raster (the raster
// panel's axes and the colour key) depend on. A detect run knows it
// before its spikes are in, from the probe, the recording's length and
// the threshold, unless a spike lies beyond the probe's sites or the
// recording's end.
type rasterLayout struct {
	threshold  float64 // whitened SD
	xmax       float64 // end of the time axis, s
	ymin, ymax float64 // the depth axes' range, µm
	titleLines int     // the lines of the raster panel's title
}

// rasterLayoutOf returns the layout of the raster of d: depths over the
// sites and the spikes, half a rate bin beyond; time from 0 to the
// recording's end or the last spike drawn (every step-th).
func rasterLayoutOf(d *rasterData, step int) rasterLayout {
	lay := rasterLayout{threshold: d.threshold, ymin: math.Inf(1), ymax: math.Inf(-1), xmax: max(d.seconds, 1/d.fs)}
	for _, v := range d.chanY {
		lay.ymin, lay.ymax = min(lay.ymin, float64(v)), max(lay.ymax, float64(v))
	}
	for _, v := range d.y {
		lay.ymin, lay.ymax = min(lay.ymin, float64(v)), max(lay.ymax, float64(v))
	}
	if lay.ymin > lay.ymax {
		lay.ymin, lay.ymax = 0, 1
	}
	lay.ymin, lay.ymax = lay.ymin-rasterBinUm/2, lay.ymax+rasterBinUm/2
	for i := 0; i < len(d.times); i += step {
		lay.xmax = max(lay.xmax, float64(d.times[i])/d.fs)
	}
	lay.titleLines = titleLines(d.title)
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

// rasterCanvas is a drift raster's picture with the parts of its layout
// drawn: the raster panel's background and axes, and the colour key.
// [rasterCanvas.finish] adds what depends on the spikes: the raster
// panel's title and dots, and the rate panel.
type rasterCanvas struct {
	lay rasterLayout
	img *vgimg.Canvas
	dc  draw.Canvas
	rp  *plot.Plot  // the raster panel, no title or dots yet
	rc  draw.Canvas // its area, title line included
	lut *colourTable
}

// newRasterCanvas draws the parts of a raster of layout lay. The raster
// panel is drawn as plot.Draw would with a one-line title: its axes
// below the title's line, which stays background until finish writes the
// title in it.
func newRasterCanvas(lay rasterLayout) *rasterCanvas {
	lo, hi := math.Log(lay.threshold), math.Log(10*lay.threshold)
	cm := newAmpColours(lo, hi)
	c := &rasterCanvas{lay: lay, lut: newColourTable(cm, lo, hi)}
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
func (c *rasterCanvas) finish(d *rasterData) error {
	lay, rp := c.lay, c.rp
	// The title in its lines, as plot.Draw writes it.
	if d.title != "" {
		rp.Title.Text = d.title
		descent := rp.Title.TextStyle.FontExtents().Descent
		c.rc.FillText(rp.Title.TextStyle, vg.Point{X: c.rc.Center().X, Y: c.rc.Max.Y + descent}, d.title)
	}
	n := len(d.times)
	step := rasterStep(n)
	xys := make(plotter.XYs, 0, n/step+1)
	cols := make([]color.Color, 0, n/step+1)
	for i := 0; i < n; i += step {
		xys = append(xys, plotter.XY{X: float64(d.times[i]) / d.fs, Y: float64(d.y[i])})
		cols = append(cols, c.lut.at(math.Log(max(float64(d.amp[i]), 1e-30))))
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
	for _, v := range d.y {
		b := min(max(int((float64(v)-lay.ymin)/rasterBinUm), 0), nb-1)
		counts[b]++
	}
	secs := max(d.seconds, 1/d.fs)
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

// writeRaster draws d as a PNG at path: on the left the spikes as depth
// against time, coloured by amplitude on a log scale from the threshold
// to 10× it, with its colour key; on the right the spike rate along the
// probe (spikes/s per 20-µm bin of depth).
func writeRaster(ctx context.Context, path string, d *rasterData, noReplace bool) error {
	return writeRasterOn(ctx, path, d, noReplace, nil)
}

// writeRasterOn is writeRaster on the canvas prepared returns for d's
// layout, or on a new one where it returns nil (or prepared is nil).
func writeRasterOn(ctx context.Context, path string, d *rasterData, noReplace bool,
	prepared func(rasterLayout) *rasterCanvas) error {
	lay := rasterLayoutOf(d, rasterStep(len(d.times)))
	var c *rasterCanvas
	if prepared != nil {
		c = prepared(lay)
	}
	if c == nil {
		c = newRasterCanvas(lay)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.finish(d); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := encodePNG(&buf, c.img.Image()); err != nil {
		return fmt.Errorf("drawing %s: %w", path, err)
	}
	b, err := tagPNG(buf.Bytes())
	if err != nil {
		return fmt.Errorf("drawing %s: %w", path, err)
	}
	return writeAtomic(ctx, path, b, noReplace)
}

// rasterPreparation is a drift raster canvas a run prepares beside its
// work, for the layout it expects before its spikes are known (see
// newRasterCanvas). The zero value holds none.
type rasterPreparation struct {
	mu   sync.Mutex
	lay  rasterLayout
	done chan *rasterCanvas // nil until start
	used bool
}

// start draws, on a goroutine, the parts of a raster of layout lay,
// unless a canvas is being prepared already.
func (r *rasterPreparation) start(lay rasterLayout) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		r.lay, r.done = lay, make(chan *rasterCanvas, 1)
		go func() { r.done <- newRasterCanvas(lay) }()
	}
}

// take returns the prepared canvas if it has layout lay, else nil; the
// canvas serves the first raster asked for, of its layout or not.
func (r *rasterPreparation) take(lay rasterLayout) *rasterCanvas {
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

// plotFolder draws the drift raster of the detect folder dir into png,
// which appears whole or not at all (see writeAtomic, and noReplace
// there); it stops with ctx's error once ctx is done.
func plotFolder(ctx context.Context, dir, png, title string, noReplace bool) error {
	return plotFolderOn(ctx, dir, png, title, noReplace, nil)
}

// plotFolderOn is plotFolder with a canvas from prepared (see
// writeRasterOn).
func plotFolderOn(ctx context.Context, dir, png, title string, noReplace bool, prepared func(rasterLayout) *rasterCanvas) error {
	d, err := readRaster(dir)
	if err != nil {
		return err
	}
	if title != "" {
		d.title = title
	}
	return writeRasterOn(ctx, png, d, noReplace, prepared)
}

// ampColours is the colour map of amplitudes: [Min, Max] onto the part
// [0.05, 0.85] of Kindlmann's perceptually uniform map (dark purple
// through blue and green to yellow), so that no amplitude is drawn white
// on the white background. Values outside are clamped.
type ampColours struct {
	palette.ColorMap
	lo, hi float64
}

func newAmpColours(lo, hi float64) *ampColours {
	k := moreland.Kindlmann()
	k.SetMin(0)
	k.SetMax(1)
	return &ampColours{ColorMap: k, lo: lo, hi: hi}
}

func (a *ampColours) At(v float64) (color.Color, error) {
	f := min(max((v-a.lo)/(a.hi-a.lo), 0), 1)
	return a.ColorMap.At(0.05 + 0.8*f)
}
func (a *ampColours) Min() float64     { return a.lo }
func (a *ampColours) Max() float64     { return a.hi }
func (a *ampColours) SetMin(v float64) { a.lo = v }
func (a *ampColours) SetMax(v float64) { a.hi = v }
