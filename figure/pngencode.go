package figure

import (
	"bufio"
	"bytes"
	"compress/flate"
	"dspk/internal/par"
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
	"image"
	"image/png"
	"io"
)

// encodePNG writes img as a PNG with the fastest compression: the drift
// raster is mostly flat colour, which compresses well at any level, and
// the default level took as long as the drawing. An opaque *image.RGBA
// (the raster) is encoded by encodePNGParallel; other images by image/png.
func encodePNG(w io.Writer, img image.Image) error {
	bw := bufio.NewWriter(w)
	var err error
	if rgba, ok := img.(*image.RGBA); ok && rgba.Bounds().Dx() > 0 && rgba.Bounds().Dy() > 0 && rgba.Opaque() {
		err = encodePNGParallel(bw, rgba)
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(bw, img)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// encodePNGParallel writes the opaque img as an 8-bit RGB PNG (as
// image/png does) whose rows are filtered and compressed in bands on all
// cores: each band's rows, each with the filter of the smallest sum of
// absolute values (libpng's heuristic, as image/png chooses), are
// deflated at the fastest level into a stream of its own that ends on a
// byte boundary (a sync flush; the last band's ends the stream), and the
// bands' streams are concatenated into one zlib stream. image/png does the
// same work on one core, most of a 10-minute raster's 0.1 s on the H200
// host. Alpha is dropped: the caller checks that every pixel is opaque.
func encodePNGParallel(w io.Writer, img *image.RGBA) error {
	b := img.Bounds()
	width, height := b.Dx(), b.Dy()
	const bpp = 3
	stride := width * bpp
	// raw returns row y of the image in the PNG's pixel layout.
	raw := func(dst []byte, y int) {
		src := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		for x := range width {
			copy(dst[3*x:3*x+3], src[4*x:4*x+3])
		}
	}
	bands := par.Workers(height / 16)
	type band struct {
		filtered []byte // the band's uncompressed stream (filter bytes and rows)
		deflated bytes.Buffer
		err      error
	}
	out := make([]band, bands)
	par.Run(bands, func(k int) {
		y0, y1 := k*height/bands, (k+1)*height/bands
		{
			bd := &out[k]
			prev, cur := make([]byte, stride), make([]byte, stride)
			if y0 > 0 {
				raw(prev, y0-1)
			}
			var cand [5][]byte
			for f := range cand {
				cand[f] = make([]byte, stride)
			}
			bd.filtered = make([]byte, 0, (y1-y0)*(stride+1))
			for y := y0; y < y1; y++ {
				raw(cur, y)
				f := filterRow(&cand, cur, prev, bpp)
				bd.filtered = append(bd.filtered, byte(f))
				bd.filtered = append(bd.filtered, cand[f]...)
				prev, cur = cur, prev
			}
			fw, err := flate.NewWriter(&bd.deflated, flate.BestSpeed)
			if err == nil {
				_, err = fw.Write(bd.filtered)
			}
			if err == nil {
				if k == bands-1 {
					err = fw.Close()
				} else {
					err = fw.Flush()
				}
			}
			bd.err = err
		}
	})
	ad := adler32.New()
	n := 2 + 4 // zlib header and checksum
	for k := range out {
		if out[k].err != nil {
			return out[k].err
		}
		ad.Write(out[k].filtered)
		n += out[k].deflated.Len()
	}
	var hdr [13]byte
	binary.BigEndian.PutUint32(hdr[0:], uint32(width))
	binary.BigEndian.PutUint32(hdr[4:], uint32(height))
	hdr[8], hdr[9] = 8, 2 // bit depth 8, colour type RGB; compression, filter and interlace 0
	if _, err := w.Write(pngSignature); err != nil {
		return err
	}
	if err := writeChunk(w, "IHDR", hdr[:]); err != nil {
		return err
	}
	idat := make([]byte, 0, n)
	idat = append(idat, 0x78, 0x01) // deflate, 32-KiB window, fastest level
	for k := range out {
		idat = append(idat, out[k].deflated.Bytes()...)
	}
	idat = binary.BigEndian.AppendUint32(idat, ad.Sum32())
	if err := writeChunk(w, "IDAT", idat); err != nil {
		return err
	}
	return writeChunk(w, "IEND", nil)
}

// writeChunk writes one PNG chunk: length, type, data, CRC.
func writeChunk(w io.Writer, typ string, data []byte) error {
	var head [8]byte
	binary.BigEndian.PutUint32(head[:4], uint32(len(data)))
	copy(head[4:], typ)
	crc := crc32.NewIEEE()
	crc.Write(head[4:])
	crc.Write(data)
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc.Sum32())
	_, err := w.Write(sum[:])
	return err
}

// filterRow writes the five PNG filters of row cur (prev is the row
// above, zero for the first) into cand and returns the one whose bytes,
// read as signed, have the smallest sum of absolute values (the first of
// equals).
func filterRow(cand *[5][]byte, cur, prev []byte, bpp int) int {
	n := len(cur)
	none, sub, up, avg, pae := cand[0][:n], cand[1][:n], cand[2][:n], cand[3][:n], cand[4][:n]
	prev = prev[:n]
	copy(none, cur)
	for i := range bpp {
		sub[i] = cur[i]
		up[i] = cur[i] - prev[i]
		avg[i] = cur[i] - prev[i]/2
		pae[i] = cur[i] - prev[i] // Paeth of (0, up, 0) is up
	}
	for i := bpp; i < n; i++ {
		a, b, c := cur[i-bpp], prev[i], prev[i-bpp]
		sub[i] = cur[i] - a
		up[i] = cur[i] - b
		avg[i] = cur[i] - byte((int(a)+int(b))/2)
		pae[i] = cur[i] - paeth(a, b, c)
	}
	best, bestSum := 0, -1
	for f := range cand {
		sum := 0
		for _, d := range cand[f][:n] {
			sum += abs8(d)
		}
		if bestSum < 0 || sum < bestSum {
			best, bestSum = f, sum
		}
	}
	return best
}

// paeth is the PNG Paeth predictor of a (left), b (up) and c (up-left).
func paeth(a, b, c byte) byte {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := absInt(p-int(a)), absInt(p-int(b)), absInt(p-int(c))
	if pa <= pb && pa <= pc {
		return a
	}
	if pb <= pc {
		return b
	}
	return c
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// abs8 is the absolute value of d read as a signed byte.
func abs8(d byte) int {
	v := int(int8(d))
	return (v ^ v>>63) - v>>63
}
