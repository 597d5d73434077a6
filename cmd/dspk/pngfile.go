package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// pngSoftware is the keyword and the start of the text of the tEXt chunk
// that marks a PNG dspk drew: "Software" = "dspk <version>".
const (
	pngSoftwareKey  = "Software"
	pngSoftwareText = "dspk"
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// tagPNG returns the PNG b with a tEXt chunk "Software: dspk <version>"
// after its header chunk (IHDR), so that dspk can recognise a picture it
// drew (see isDspkPNG).
func tagPNG(b []byte) ([]byte, error) {
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

// isDspkPNG reports whether the file at path is a PNG with the tEXt chunk
// tagPNG adds, before its image data.
func isDspkPNG(path string) bool {
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

// writeAtomic writes b to path through a temporary file in the same
// folder, renamed over path once complete, so that path holds the old
// content or the new one and never a part (a full disk, a kill). Once
// ctx is done (checked last just before the rename) it writes nothing.
// With noReplace, a path that exists by then is not replaced: the file
// is linked to its name, which fails if the name is taken.
func writeAtomic(ctx context.Context, path string, b []byte, noReplace bool) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer atForcedExit(func() { os.Remove(tmp) })()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(b); err != nil {
		return fail(fmt.Errorf("writing %s: %w", path, err))
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		os.Remove(tmp)
		return err
	}
	if noReplace {
		err := os.Link(tmp, path)
		os.Remove(tmp)
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		markWritten(path)
		return nil
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	markWritten(path)
	return nil
}
