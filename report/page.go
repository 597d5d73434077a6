package report

import (
	"bytes"
	_ "embed"
	"html"
	"io"
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
