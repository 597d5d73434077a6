package figure

import (
	"dspk/internal/par"
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// dots is the drift raster's scatter: up to maxRasterPoints small discs,
// one colour each. On an image canvas it writes each disc straight into
// the pixels as a square of the disc's area, blended by how much of each
// pixel it covers (a few pixels per spike); drawing them as vector
// circles (plotter.Scatter) took seconds for 200 000 spikes, most of a
// GPU run. Elsewhere it draws circle glyphs.
type dots struct {
	xys    plotter.XYs
	cols   []color.Color
	radius vg.Length
}

// DataRange returns the range of the points (plot.DataRanger).
func (d *dots) DataRange() (xmin, xmax, ymin, ymax float64) { return plotter.XYRange(d.xys) }

// Plot draws the points on c (plot.Plotter).
func (d *dots) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var vcv vg.Canvas = c.Canvas
	for { // draw.Crop nests canvases
		dc, ok := vcv.(draw.Canvas)
		if !ok {
			break
		}
		vcv = dc.Canvas
	}
	vc, ok := vcv.(*vgimg.Canvas)
	var img *image.RGBA
	if ok {
		img, ok = vc.Image().(*image.RGBA)
	}
	if !ok {
		for i, xy := range d.xys {
			c.DrawGlyph(draw.GlyphStyle{Color: d.cols[i], Radius: d.radius, Shape: draw.CircleGlyph{}}, vg.Point{X: trX(xy.X), Y: trY(xy.Y)})
		}
		return
	}
	dpi := vc.DPI()
	h := float64(img.Bounds().Dy())
	// The clip rectangle in pixels (y down).
	x0, x1 := c.Min.X.Dots(dpi), c.Max.X.Dots(dpi)
	y0, y1 := h-c.Max.Y.Dots(dpi), h-c.Min.Y.Dots(dpi)
	half := math.Sqrt(math.Pi) * d.radius.Dots(dpi) / 2 // a square of the disc's area
	// Each dot's square and colour, computed in parallel, then painted.
	sqs := make([]square, len(d.xys))
	parallelRange(len(d.xys), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			xy := d.xys[i]
			x, y := trX(xy.X).Dots(dpi), h-trY(xy.Y).Dots(dpi)
			r, g, b, _ := d.cols[i].RGBA()
			sqs[i] = square{max(x-half, x0), min(x+half, x1), max(y-half, y0), min(y+half, y1), r >> 8, g >> 8, b >> 8}
		}
	})
	paintSquares(img, sqs)
}

// square is a pixel-space rectangle [xa, xb) × [ya, yb) of one opaque
// colour, for splat.
type square struct {
	xa, xb, ya, yb float64
	r, g, b        uint32
}

// paintSquares splats the squares onto img in bands of rows, one per
// core, each band painting every square's part inside it in the squares'
// order: every pixel blends the same squares in the same order as one
// pass over them would.
func paintSquares(img *image.RGBA, sqs []square) {
	bd := img.Bounds()
	parallelRange(bd.Dy(), 8, func(lo, hi int) {
		blo, bhi := float64(bd.Min.Y+lo), float64(bd.Min.Y+hi)
		for _, q := range sqs {
			if ya, yb := max(q.ya, blo), min(q.yb, bhi); ya < yb {
				splat(img, q.xa, q.xb, ya, yb, q.r, q.g, q.b)
			}
		}
	})
}

// parallelRange calls fn on consecutive parts [lo, hi) of [0, n), at
// least minPart long, one per core, and waits for them.
func parallelRange(n, minPart int, fn func(lo, hi int)) {
	parts := par.Workers(n / max(minPart, 1))
	par.Split(n, parts, func(_, lo, hi int) { fn(lo, hi) })
}

// splat paints the opaque colour (r, g, b) over the pixel-space rectangle
// [xa, xb) × [ya, yb) of img, each pixel blended by the fraction of it
// the rectangle covers.
func splat(img *image.RGBA, xa, xb, ya, yb float64, r, g, b uint32) {
	if xa >= xb || ya >= yb {
		return
	}
	bd := img.Bounds()
	for py := max(int(math.Floor(ya)), bd.Min.Y); py < min(int(math.Ceil(yb)), bd.Max.Y); py++ {
		cy := math.Min(yb, float64(py+1)) - math.Max(ya, float64(py))
		for px := max(int(math.Floor(xa)), bd.Min.X); px < min(int(math.Ceil(xb)), bd.Max.X); px++ {
			cx := math.Min(xb, float64(px+1)) - math.Max(xa, float64(px))
			a := uint32(math.Round(cx * cy * 255))
			if a == 0 {
				continue
			}
			o := img.PixOffset(px, py)
			p := img.Pix[o : o+4 : o+4]
			p[0] = uint8((r*a + uint32(p[0])*(255-a) + 127) / 255)
			p[1] = uint8((g*a + uint32(p[1])*(255-a) + 127) / 255)
			p[2] = uint8((b*a + uint32(p[2])*(255-a) + 127) / 255)
			p[3] = uint8((255*a + uint32(p[3])*(255-a) + 127) / 255)
		}
	}
}

// colourTable is a colour map sampled at 1024 levels over [lo, hi], so
// that colouring 200 000 spikes costs a look-up each.
type colourTable struct {
	lo, step float64
	cols     []color.Color
}

// newColourTable samples cm over [lo, hi] (black where cm fails).
func newColourTable(cm interface {
	At(float64) (color.Color, error)
}, lo, hi float64) *colourTable {
	const n = 1024
	t := &colourTable{lo: lo, step: (hi - lo) / (n - 1), cols: make([]color.Color, n)}
	for i := range t.cols {
		c, err := cm.At(min(lo+float64(i)*t.step, hi))
		if err != nil {
			c = color.Black
		}
		t.cols[i] = c
	}
	return t
}

// at returns the colour of v, clamped to [lo, hi]; black for NaN.
func (t *colourTable) at(v float64) color.Color {
	if math.IsNaN(v) {
		return color.Black
	}
	if !(t.step > 0) {
		return t.cols[0]
	}
	i := int(math.Round((v - t.lo) / t.step))
	return t.cols[min(max(i, 0), len(t.cols)-1)]
}
