package figure

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestEncodePNGParallel decodes what encodePNGParallel writes with
// image/png and compares every pixel with the source, on opaque images of
// odd sizes (one row, one column, fewer rows than bands, many bands) with
// noise, flat areas and gradients (so that every filter wins somewhere),
// on 1 and 7 cores; a translucent image goes to image/png and decodes to
// its colours too.
func TestEncodePNGParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 7} {
		runtime.GOMAXPROCS(procs)
		for _, sz := range [][2]int{{1, 1}, {1, 37}, {53, 1}, {17, 15}, {33, 16}, {129, 131}, {640, 300}} {
			w, h := sz[0], sz[1]
			img := image.NewRGBA(image.Rect(3, -2, 3+w, -2+h)) // a non-zero origin
			for y := range h {
				for x := range w {
					o := img.PixOffset(3+x, -2+y)
					var r, g, b byte
					switch (x/7 + y/5) % 4 {
					case 0:
						r, g, b = byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())
					case 1:
						r, g, b = 255, 255, 255
					case 2:
						r, g, b = byte(x), byte(y), byte(x+y)
					default:
						r, g, b = byte(3*x), 200, byte(y*y)
					}
					img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = r, g, b, 255
				}
			}
			var buf bytes.Buffer
			if err := encodePNG(&buf, img); err != nil {
				t.Fatal(err)
			}
			checkZlib(t, buf.Bytes())
			got, err := png.Decode(&buf)
			if err != nil {
				t.Fatalf("%d×%d on %d cores: %v", w, h, procs, err)
			}
			samePixels(t, got, img)
		}
	}
	img := image.NewRGBA(image.Rect(0, 0, 9, 20))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
		img.Pix[i-1], img.Pix[i-2], img.Pix[i-3] = min(img.Pix[i-1], 100), min(img.Pix[i-2], 100), min(img.Pix[i-3], 100)
	}
	img.Pix[3], img.Pix[0], img.Pix[1], img.Pix[2] = 128, 10, 20, 30 // translucent
	var buf, ref bytes.Buffer
	if err := encodePNG(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&ref, img); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), ref.Bytes()) {
		t.Error("a translucent image is not left to image/png")
	}
}

// checkZlib reads the whole zlib stream of the PNG b's image data,
// which checks its Adler-32 (png.Decode stops after the last row), and the
// CRC of every chunk.
func checkZlib(t *testing.T, b []byte) {
	t.Helper()
	var idat []byte
	for p := 8; p < len(b); {
		n := int(binary.BigEndian.Uint32(b[p:]))
		if crc32.ChecksumIEEE(b[p+4:p+8+n]) != binary.BigEndian.Uint32(b[p+8+n:]) {
			t.Fatalf("chunk %q: bad CRC", b[p+4:p+8])
		}
		if string(b[p+4:p+8]) == "IDAT" {
			idat = append(idat, b[p+8:p+8+n]...)
		}
		p += 12 + n
	}
	r, err := zlib.NewReader(bytes.NewReader(idat))
	if err == nil {
		_, err = io.ReadAll(r)
	}
	if err != nil {
		t.Fatalf("image data: %v", err)
	}
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

// TestPaintSquares compares the banded painting with one pass over the
// squares in order, on overlapping squares that cross band edges, on 1,
// 3 and 16 cores.
func TestPaintSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	sqs := make([]square, 3000)
	for i := range sqs {
		x, y, s := rng.Float64()*70-2, rng.Float64()*130-2, rng.Float64()*6
		sqs[i] = square{x, x + s, y, y + s, uint32(rng.IntN(256)), uint32(rng.IntN(256)), uint32(rng.IntN(256))}
	}
	want := image.NewRGBA(image.Rect(0, 0, 64, 127))
	for i := range want.Pix {
		want.Pix[i] = 255
	}
	for _, q := range sqs {
		splat(want, q.xa, q.xb, q.ya, q.yb, q.r, q.g, q.b)
	}
	for _, procs := range []int{1, 3, 16} {
		runtime.GOMAXPROCS(procs)
		got := image.NewRGBA(want.Bounds())
		for i := range got.Pix {
			got.Pix[i] = 255
		}
		paintSquares(got, sqs)
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Fatalf("on %d cores the banded painting differs from one pass", procs)
		}
	}
}
