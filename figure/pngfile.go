package figure

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"strings"
)

// pngSoftwareKey and pngSoftwareText are the keyword and the start of
// the text of the tEXt chunk that marks a PNG dspk drew: "Software" =
// "dspk <version>".
const (
	pngSoftwareKey  = "Software"
	pngSoftwareText = "dspk"
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// TagPNG returns the PNG b with a tEXt chunk "Software: dspk <version>"
// after its header chunk (IHDR), so that dspk can recognise a picture it
// drew (see [IsDspkPNG]).
func TagPNG(b []byte, version string) ([]byte, error) {
	const ihdrEnd = 8 + 4 + 4 + 13 + 4 // signature, length, type, data, CRC
	if len(b) < ihdrEnd || !bytes.Equal(b[:8], pngSignature) || string(b[12:16]) != "IHDR" {
		return nil, errors.New("the encoder did not write a PNG header")
	}
	data := []byte(pngSoftwareKey + "\x00" + pngSoftwareText + " " + version)
	chunk := make([]byte, 0, 12+len(data))
	chunk = binary.BigEndian.AppendUint32(chunk, uint32(len(data)))
	chunk = append(chunk, "tEXt"...)
	chunk = append(chunk, data...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	out := make([]byte, 0, len(b)+len(chunk))
	out = append(out, b[:ihdrEnd]...)
	out = append(out, chunk...)
	return append(out, b[ihdrEnd:]...), nil
}

// IsDspkPNG reports whether the file at path is a PNG with the tEXt chunk
// [TagPNG] adds, before its image data.
func IsDspkPNG(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sig := make([]byte, 8)
	if _, err := io.ReadFull(f, sig); err != nil || !bytes.Equal(sig, pngSignature) {
		return false
	}
	head := make([]byte, 8)
	for range 64 { // the chunks before the image data are few
		if _, err := io.ReadFull(f, head); err != nil {
			return false
		}
		n, typ := binary.BigEndian.Uint32(head[:4]), string(head[4:8])
		if typ == "IDAT" || typ == "IEND" || n > 1<<20 {
			return false
		}
		data := make([]byte, n+4)
		if _, err := io.ReadFull(f, data); err != nil {
			return false
		}
		if typ == "tEXt" {
			key, text, ok := strings.Cut(string(data[:n]), "\x00")
			if ok && key == pngSoftwareKey && (text == pngSoftwareText || strings.HasPrefix(text, pngSoftwareText+" ")) {
				return true
			}
		}
	}
	return false
}
