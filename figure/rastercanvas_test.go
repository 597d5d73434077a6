package figure

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// referenceRaster draws d as one plot.Draw per panel would, in the order
// raster (title, axes, dots), key, rate: what EncodeRaster must give
// pixel for pixel, though it draws the axes and the key before the spikes
// are known.
func referenceRaster(d *Raster) *image.RGBA {
	lay := LayoutOf(d)
	lo, hi := math.Log(d.Threshold), math.Log(10*d.Threshold)
	cm := newAmpColours(lo, hi)
	lut := newColourTable(cm, lo, hi)
	rp := plot.New()
	rp.Title.Text = d.Title
	rp.X.Label.Text = "time (s)"
	rp.Y.Label.Text = "depth (µm)"
	rp.Y.Min, rp.Y.Max = lay.ymin, lay.ymax
	rp.X.Min, rp.X.Max = 0, lay.xmax
	var xys plotter.XYs
	var cols []color.Color
	for i := 0; i < len(d.Times); i += rasterStep(len(d.Times)) {
		xys = append(xys, plotter.XY{X: float64(d.Times[i]) / d.SampleRate, Y: float64(d.Y[i])})
		cols = append(cols, lut.at(math.Log(max(float64(d.Amp[i]), 1e-30))))
	}
	if len(xys) > 0 {
		rp.Add(&dots{xys: xys, cols: cols, radius: vg.Points(0.6)})
	}
	kp := plot.New()
	kp.Title.Text = "amplitude"
	kp.Y.Label.Text = "whitened SD (log scale)"
	kp.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	var ticks []plot.Tick
	for _, m := range []float64{1, 1.5, 2, 3, 5, 7, 10} {
		ticks = append(ticks, plot.Tick{Value: math.Log(m * d.Threshold), Label: fmt.Sprintf("%.3g", m*d.Threshold)})
	}
	kp.Y.Tick.Marker = plot.ConstantTicks(ticks)
	kp.HideX()
	pp := plot.New()
	pp.Title.Text = "rate along the probe"
	pp.X.Label.Text = "spikes/s per 20 µm"
	pp.Y.Label.Text = "depth (µm)"
	pp.Y.Min, pp.Y.Max = lay.ymin, lay.ymax
	nb := max(1, int(math.Ceil((lay.ymax-lay.ymin)/rasterBinUm)))
	counts := make([]float64, nb)
	for _, v := range d.Y {
		counts[min(max(int((float64(v)-lay.ymin)/rasterBinUm), 0), nb-1)]++
	}
	var prof plotter.XYs
	for b, c := range counts {
		r := c / max(d.Seconds, 1/d.SampleRate)
		prof = append(prof, plotter.XY{X: r, Y: lay.ymin + float64(b)*rasterBinUm}, plotter.XY{X: r, Y: lay.ymin + float64(b+1)*rasterBinUm})
	}
	l, _ := plotter.NewLine(prof)
	l.Color = color.RGBA{R: 40, G: 40, B: 160, A: 255}
	pp.Add(l)
	pp.X.Min = 0
	img := vgimg.NewWith(vgimg.UseWH(rasterW, rasterH), vgimg.UseDPI(100))
	dc := draw.New(img)
	rp.Draw(draw.Crop(dc, 0, rasterRW-rasterW, 0, 0))
	kp.Draw(draw.Crop(dc, rasterRW, rasterRW+rasterKW-rasterW, vg.Inch/2, -vg.Inch/4))
	pp.Draw(draw.Crop(dc, rasterRW+rasterKW, 0, 0, 0))
	return img.Image().(*image.RGBA)
}

// testRasterData is a raster of n spikes over seconds on a probe of 96
// sites 20 µm apart; outside, if set, puts a spike beyond the sites.
func testRasterData(seed uint64, n int, seconds float64, title string, outside bool) *Raster {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &Raster{SampleRate: 30000, Seconds: seconds, Threshold: 6 + rng.Float64()*4, Title: title}
	for i := range 96 {
		d.ChanY = append(d.ChanY, float32(20*(i/2)))
	}
	for range n {
		d.Times = append(d.Times, rng.Int64N(int64(seconds*d.SampleRate)))
		d.Y = append(d.Y, float32(rng.Float64()*940))
		d.Amp = append(d.Amp, float32(d.Threshold*(1+3*rng.ExpFloat64())))
	}
	if outside && n > 0 {
		d.Y[n/2] = 1200
	}
	return d
}

// decodePNG reads the picture at path.
func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	im, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// TestRasterCanvas checks that the drift raster drawn on a canvas whose
// axes and key were drawn before the spikes were known, and on one
// prepared beside the run, is pixel for pixel what one plot.Draw per
// panel gives; and that a canvas prepared for another layout (a spike
// beyond the sites, a spike after the recording's end, a two-line title)
// is not used.
func TestRasterCanvas(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i, d := range []*Raster{
		testRasterData(1, 5000, 60, "rec.bin: 5000 spikes, 12 clusters", false),
		testRasterData(2, 1, 3, "one spike", false),
		testRasterData(3, 0, 3, "no spikes", false),
		testRasterData(4, 3000, 20, "beyond the sites", true),
		testRasterData(5, 2000, 10, "two\nlines", false),
	} {
		want := referenceRaster(d)
		plain := filepath.Join(dir, fmt.Sprintf("plain%d.png", i))
		if err := writeRaster(ctx, plain, d, nil); err != nil {
			t.Fatal(err)
		}
		t.Logf("raster %d (%s): plain", i, d.Title)
		samePixels(t, decodePNG(t, plain), want)
		// What a detect run prepares: the sites' extent, the recording's
		// length, a one-line title.
		guess := RasterLayout{threshold: d.Threshold, xmax: d.Seconds, ymin: -rasterBinUm / 2, ymax: 940 + rasterBinUm/2, titleLines: 1}
		var prep RasterPreparation
		prep.Start(guess)
		used := false
		pick := func(lay RasterLayout) *RasterCanvas {
			c := prep.Take(lay)
			used = c != nil
			return c
		}
		onPrep := filepath.Join(dir, fmt.Sprintf("prep%d.png", i))
		if err := writeRaster(ctx, onPrep, d, pick); err != nil {
			t.Fatal(err)
		}
		if i <= 2 && !used {
			t.Errorf("raster %d (%s): the canvas prepared for its layout was not used", i, d.Title)
		}
		if wantUsed := LayoutOf(d) == guess; used != wantUsed {
			t.Errorf("raster %d (%s): prepared canvas used %v, want %v", i, d.Title, used, wantUsed)
		}
		t.Logf("raster %d (%s): prepared", i, d.Title)
		samePixels(t, decodePNG(t, onPrep), want)
		if prep.Take(guess) != nil {
			t.Errorf("raster %d: a prepared canvas served twice", i)
		}
	}
}

// writeRaster draws d as a PNG at path, on a canvas from prepared (see
// EncodeRaster).
func writeRaster(ctx context.Context, path string, d *Raster, prepared func(RasterLayout) *RasterCanvas) error {
	b, err := EncodeRaster(ctx, d, "test", prepared)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
