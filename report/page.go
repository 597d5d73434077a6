package report

import (
	"bytes"
	"dspk/export"
	_ "embed"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// pageHTML is the page: CSS and JavaScript inline, {{TITLE}}, {{VERSION}}
// and {{DATA}} filled by Write.
//
//go:embed page.html
var pageHTML string

// Write writes the report page of the sort folder dir to w; version
// names the dspk that wrote it (in the page's generator tag).
func Write(w io.Writer, dir, version string, opt Options) error {
	b, err := Page(dir, version, opt)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Page returns the report page of the sort folder dir.
func Page(dir, version string, opt Options) ([]byte, error) {
	d := DefaultOptions()
	if opt.MaxPoints <= 0 {
		opt.MaxPoints = d.MaxPoints
	}
	if opt.Channels <= 0 {
		opt.Channels = d.Channels
	}
	if !(opt.BinMs > 0) || !(opt.WindowMs >= opt.BinMs) {
		opt.BinMs, opt.WindowMs = d.BinMs, d.WindowMs
	}
	p, err := build(dir, opt)
	if err != nil {
		return nil, err
	}
	data, err := jsonOf(p)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(p.Summary.Folder)
	if p.Summary.Recording != "" {
		name = filepath.Base(p.Summary.Recording)
	}
	head, rest, _ := strings.Cut(pageHTML, "{{DATA}}")
	r := strings.NewReplacer("{{TITLE}}", html.EscapeString("Sort report: "+name), "{{VERSION}}", html.EscapeString(version))
	var b bytes.Buffer
	b.Grow(len(pageHTML) + len(data))
	b.WriteString(r.Replace(head))
	b.Write(data)
	b.WriteString(rest)
	return b.Bytes(), nil
}

// generatorTag begins the page's generator meta tag, by which [IsReport]
// knows a page dspk wrote.
const generatorTag = `<meta name="generator" content="dspk `

// IsReport reports whether the file path is a report page dspk wrote: its
// first kilobyte holds the generator tag Write puts there.
func IsReport(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 1024)
	n, _ := io.ReadFull(f, head)
	return bytes.Contains(head[:n], []byte(generatorTag))
}

// CheckTarget refuses a page path that must not be written: a folder, a
// link or any other non-regular file, and, unless overwrite, an existing
// file that is not a report dspk wrote. It reports whether page exists.
func CheckTarget(page string, overwrite bool) (bool, error) {
	fi, err := os.Lstat(page)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return true, fmt.Errorf("%s exists and is not a regular file (a folder or a link); report does not replace it", page)
	}
	if !overwrite && !IsReport(page) {
		return true, fmt.Errorf("%s exists and is not a report dspk wrote; report does not replace it — choose another name, or use -overwrite", page)
	}
	return true, nil
}

// Record lists the report page File of the sort folder dir in dir's
// manifest, where it has one, so that dspk sort -overwrite still replaces
// the folder; it returns a warning where the manifest cannot be updated.
func Record(dir string) []string {
	if _, err := os.Stat(filepath.Join(dir, export.ManifestName)); err != nil {
		return nil
	}
	if err := export.RecordFiles(dir, File); err != nil {
		return []string{fmt.Sprintf("%s: the manifest was not updated (%v); sort -overwrite will refuse this folder", dir, err)}
	}
	return nil
}
