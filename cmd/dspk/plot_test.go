package main

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"dspk/figure"
	"dspk/phy"
)

// TestDetectRaster checks that the drift raster a detect run writes,
// whose axes and key were drawn beside its detection pass, is pixel for
// pixel the one `dspk plot` draws afterwards from the folder, and that
// the run's spikes lie within the layout expected before them (so that
// the prepared canvas served).
func TestDetectRaster(t *testing.T) {
	out := filepath.Join(t.TempDir(), "det")
	bin := filepath.Join(goldenRec, simBase+".imec0.ap.bin")
	// auto: the GPU where the machine has one.
	if code, _, stderr := dspk(t, "detect", "-device", "auto", "-nskip", "1", "-o", out, bin); code != 0 {
		t.Fatalf("detect: exit %d: %s", code, stderr)
	}
	again := filepath.Join(t.TempDir(), "again.png")
	if code, _, stderr := dspk(t, "plot", "-o", again, out); code != 0 {
		t.Fatalf("plot: exit %d: %s", code, stderr)
	}
	samePixels(t, decodePNG(t, filepath.Join(out, phy.RasterFile)), decodePNG(t, again))
	d, err := phy.ReadRaster(out)
	if err != nil {
		t.Fatal(err)
	}
	got := figure.LayoutOf(d)
	sites := *d
	sites.Times, sites.Y, sites.Amp = nil, nil, nil
	if want := figure.LayoutOf(&sites); got != want || len(d.Times) == 0 {
		t.Errorf("%d spikes give the raster layout %+v, the run expected %+v", len(d.Times), got, want)
	}
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

// samePixels fails unless a and b have the same bounds' size and every
// pixel the same 16-bit colour.
func samePixels(t *testing.T, a, b image.Image) {
	t.Helper()
	ab, bb := a.Bounds(), b.Bounds()
	if ab.Dx() != bb.Dx() || ab.Dy() != bb.Dy() {
		t.Fatalf("decoded %v, want %v", ab, bb)
	}
	for y := range ab.Dy() {
		for x := range ab.Dx() {
			r1, g1, b1, a1 := a.At(ab.Min.X+x, ab.Min.Y+y).RGBA()
			r2, g2, b2, a2 := b.At(bb.Min.X+x, bb.Min.Y+y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				t.Fatalf("%v image: pixel (%d,%d) = %v %v %v %v, want %v %v %v %v", bb, x, y, r1, g1, b1, a1, r2, g2, b2, a2)
			}
		}
	}
}
