package figure

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestSplat checks the blended square against the coverage of each pixel
// computed directly, on random rectangles, and that no pixel outside it
// changes.
func TestSplat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		img := image.NewRGBA(image.Rect(0, 0, 9, 7))
		for i := range img.Pix {
			img.Pix[i] = 255
		}
		xa, ya := rng.Float64()*10-1, rng.Float64()*8-1
		xb, yb := xa+rng.Float64()*3, ya+rng.Float64()*3
		r, g, b := uint32(rng.IntN(256)), uint32(rng.IntN(256)), uint32(rng.IntN(256))
		splat(img, xa, xb, ya, yb, r, g, b)
		for py := range 7 {
			for px := range 9 {
				cov := math.Max(0, math.Min(xb, float64(px+1))-math.Max(xa, float64(px))) *
					math.Max(0, math.Min(yb, float64(py+1))-math.Max(ya, float64(py)))
				got := img.RGBAAt(px, py)
				for ch, c := range []struct {
					got  uint8
					want float64
				}{{got.R, float64(r)}, {got.G, float64(g)}, {got.B, float64(b)}, {got.A, 255}} {
					want := c.want*cov + 255*(1-cov)
					if math.Abs(float64(c.got)-want) > 1.5 {
						t.Fatalf("trial %d: [%g,%g)×[%g,%g) pixel (%d,%d) channel %d = %d, want %.1f (coverage %.3f)",
							trial, xa, xb, ya, yb, px, py, ch, c.got, want, cov)
					}
				}
			}
		}
	}
}

// TestColourTable checks the sampled colour map against the map itself,
// its clamping and NaN.
func TestColourTable(t *testing.T) {
	lo, hi := math.Log(8.0), math.Log(80.0)
	cm := newAmpColours(lo, hi)
	lut := newColourTable(cm, lo, hi)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		v := lo + rng.Float64()*(hi-lo)
		want, err := cm.At(v)
		if err != nil {
			t.Fatal(err)
		}
		wr, wg, wb, _ := want.RGBA()
		gr, gg, gb, _ := lut.at(v).RGBA()
		d := math.Max(math.Abs(float64(wr)-float64(gr)), math.Max(math.Abs(float64(wg)-float64(gg)), math.Abs(float64(wb)-float64(gb))))
		if d > 2*257 { // two levels of 8 bits
			t.Fatalf("colour of %g: %v, map %v", v, lut.at(v), want)
		}
	}
	if lut.at(lo-5) != lut.at(lo) || lut.at(hi+5) != lut.at(hi) {
		t.Error("values outside [lo, hi] are not clamped")
	}
	if lut.at(math.NaN()) != color.Color(color.Black) {
		t.Error("NaN is not black")
	}
}

// TestDotsWhereScatter checks that dots puts each point where the vector
// scatter (plotter.Scatter) draws it: the centre of the red pixels of a
// single point agrees within a pixel, for points across the plot.
func TestDotsWhereScatter(t *testing.T) {
	red := color.RGBA{R: 255, A: 255}
	render := func(xy plotter.XY, fast bool) (float64, float64, int) {
		p := plot.New()
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 10, 0, 10
		if fast {
			p.Add(&dots{xys: plotter.XYs{xy}, cols: []color.Color{red}, radius: vg.Points(0.6)})
		} else {
			s, err := plotter.NewScatter(plotter.XYs{xy})
			if err != nil {
				t.Fatal(err)
			}
			s.GlyphStyle = draw.GlyphStyle{Color: red, Radius: vg.Points(0.6), Shape: draw.CircleGlyph{}}
			p.Add(s)
		}
		c := vgimg.NewWith(vgimg.UseWH(4*vg.Inch, 3*vg.Inch), vgimg.UseDPI(100))
		// The scatter pads the axes by its glyph radius, under a pixel.
		p.Draw(draw.New(c))
		img := c.Image()
		var sx, sy, n float64
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, _, _ := img.At(x, y).RGBA()
				if r>>8 > 200 && int(r>>8)-int(g>>8) > 40 {
					w := float64(int(r>>8) - int(g>>8))
					sx, sy, n = sx+w*float64(x), sy+w*float64(y), n+w
				}
			}
		}
		if n == 0 {
			return 0, 0, 0
		}
		return sx / n, sy / n, 1
	}
	for _, xy := range []plotter.XY{{X: 1, Y: 1}, {X: 5, Y: 5}, {X: 9.5, Y: 2}, {X: 3.3, Y: 8.7}} {
		fx, fy, fn := render(xy, true)
		sx, sy, sn := render(xy, false)
		if fn == 0 || sn == 0 {
			t.Fatalf("point %v: drawn by dots %v, by scatter %v", xy, fn > 0, sn > 0)
		}
		if math.Abs(fx-sx) > 1 || math.Abs(fy-sy) > 1 {
			t.Errorf("point %v: dots at (%.2f, %.2f), scatter at (%.2f, %.2f)", xy, fx, fy, sx, sy)
		}
	}
}
