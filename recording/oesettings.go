package recording

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"dspk/probe"
)

// NPProbe is the geometry of one Neuropixels probe in an Open Ephys
// settings.xml (an NP_PROBE element of the Neuropix-PXI or ONIX
// processor): per channel of the stream, the electrode position in µm
// and its shank.
type NPProbe struct {
	// Names are the element's non-empty custom_probe_name, probe_name and
	// name attributes, in that order.
	Names []string
	// Serial is probe_serial_number.
	Serial string
	// Part is probe_part_number (e.g. PRB_1_4_0480_1, NP2000), "" if
	// the element has none.
	Part string
	// Channel holds the stream channel numbers n of the CHn attributes,
	// ascending; X, Y and Shank the matching positions (ELECTRODE_XPOS,
	// ELECTRODE_YPOS, as written) and shanks (the second field of a
	// "bank:shank" CHANNELS value, else 0).
	Channel []int
	X, Y    []float64
	Shank   []int
}

// maxSettingsBytes bounds the settings.xml read (real ones are below a
// few MB).
const maxSettingsBytes = 64 << 20

// maxSettingsChannel bounds a CHn channel number.
const maxSettingsChannel = 1 << 16

type xmlAttrs struct {
	Attrs []xml.Attr `xml:",any,attr"`
}

type xmlNPProbe struct {
	Attrs    []xml.Attr `xml:",any,attr"`
	Channels xmlAttrs   `xml:"CHANNELS"`
	XPos     xmlAttrs   `xml:"ELECTRODE_XPOS"`
	YPos     xmlAttrs   `xml:"ELECTRODE_YPOS"`
}

var chAttr = regexp.MustCompile(`^CH(\d+)$`)

// ParseOpenEphysSettings returns the NP_PROBE elements of an Open Ephys
// settings.xml read from r; name is used in errors. Elements without an
// ELECTRODE_XPOS table (probes that were not configured) are skipped. It
// is an error if the XML is malformed, a table names a channel twice or
// lacks a channel the others have, or a value is not a finite number.
func ParseOpenEphysSettings(r io.Reader, name string) ([]NPProbe, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSettingsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("recording: %s: %w", name, err)
	}
	if len(data) > maxSettingsBytes {
		return nil, fmt.Errorf("recording: %s: larger than %d bytes", name, maxSettingsBytes)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false
	var out []NPProbe
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, _ := dec.InputPos()
			return nil, fmt.Errorf("recording: %s: line %d: %v", name, line, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "NP_PROBE" {
			continue
		}
		line, _ := dec.InputPos()
		var e xmlNPProbe
		if err := dec.DecodeElement(&e, &se); err != nil {
			return nil, fmt.Errorf("recording: %s: NP_PROBE at line %d: %v", name, line, err)
		}
		if len(e.XPos.Attrs) == 0 {
			continue
		}
		p, err := e.probe()
		if err != nil {
			return nil, fmt.Errorf("recording: %s: NP_PROBE at line %d: %v", name, line, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// table parses CHn="value" attributes into a map from n.
func table(a xmlAttrs, what string, parse func(string) (float64, float64, error)) (map[int][2]float64, error) {
	m := make(map[int][2]float64, len(a.Attrs))
	for _, at := range a.Attrs {
		sub := chAttr.FindStringSubmatch(at.Name.Local)
		if sub == nil {
			continue
		}
		n, err := strconv.Atoi(sub[1])
		if err != nil || n > maxSettingsChannel {
			return nil, fmt.Errorf("%s: channel %s out of range", what, at.Name.Local)
		}
		if _, dup := m[n]; dup {
			return nil, fmt.Errorf("%s: %s given twice", what, at.Name.Local)
		}
		v, w, err := parse(strings.TrimSpace(at.Value))
		if err != nil {
			return nil, fmt.Errorf("%s: %s=%q: %v", what, at.Name.Local, at.Value, err)
		}
		m[n] = [2]float64{v, w}
	}
	return m, nil
}

func number(s string) (float64, float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e9 {
		return 0, 0, fmt.Errorf("not a finite position")
	}
	return v, 0, nil
}

// bankShank parses "bank" or "bank:shank" (integers).
func bankShank(s string) (float64, float64, error) {
	f := strings.Split(s, ":")
	if len(f) > 2 {
		return 0, 0, fmt.Errorf("want bank or bank:shank")
	}
	var v [2]int
	for i, x := range f {
		k, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil || k < 0 || k > 1<<10 {
			return 0, 0, fmt.Errorf("want bank or bank:shank")
		}
		v[i] = k
	}
	return float64(v[0]), float64(v[1]), nil
}

func (e *xmlNPProbe) probe() (NPProbe, error) {
	var p NPProbe
	attr := map[string]string{}
	for _, a := range e.Attrs {
		attr[a.Name.Local] = a.Value
	}
	for _, k := range []string{"custom_probe_name", "probe_name", "name"} {
		if v := strings.TrimSpace(attr[k]); v != "" {
			p.Names = append(p.Names, v)
		}
	}
	p.Serial = attr["probe_serial_number"]
	p.Part = strings.TrimSpace(attr["probe_part_number"])
	xs, err := table(e.XPos, "ELECTRODE_XPOS", number)
	if err != nil {
		return p, err
	}
	ys, err := table(e.YPos, "ELECTRODE_YPOS", number)
	if err != nil {
		return p, err
	}
	chs, err := table(e.Channels, "CHANNELS", bankShank)
	if err != nil {
		return p, err
	}
	for n := range xs {
		p.Channel = append(p.Channel, n)
	}
	slices.Sort(p.Channel)
	for _, n := range p.Channel {
		y, ok := ys[n]
		if !ok {
			return p, fmt.Errorf("ELECTRODE_YPOS has no CH%d", n)
		}
		p.X = append(p.X, xs[n][0])
		p.Y = append(p.Y, y[0])
		sh := 0
		if c, ok := chs[n]; ok {
			sh = int(c[1])
		}
		p.Shank = append(p.Shank, sh)
	}
	if len(ys) != len(xs) {
		return p, fmt.Errorf("ELECTRODE_XPOS lists %d channels, ELECTRODE_YPOS %d", len(xs), len(ys))
	}
	return p, nil
}

// probeLetter finds the GUI's default probe name in a stream name:
// "ProbeB-AP" is the second probe.
var probeLetter = regexp.MustCompile(`Probe([A-Z])(?:-|$)`)

// matchNPProbe returns the settings probe of a stream: the one whose name
// the stream's folder or stream_name contains, else the one the stream's
// ProbeX letter numbers (A first), else the only one for a Neuropixels
// processor; -1 if none.
func matchNPProbe(ps []NPProbe, s OebinStream) int {
	names := s.Folder() + "\n" + s.StreamName
	for i, p := range ps {
		for _, n := range p.Names {
			if strings.Contains(names, n+"-") || strings.HasSuffix(s.Folder(), "."+n) || s.StreamName == n {
				return i
			}
		}
	}
	if m := probeLetter.FindStringSubmatch(names); m != nil {
		if i := int(m[1][0] - 'A'); i < len(ps) {
			return i
		}
	}
	if len(ps) == 1 && strings.Contains(strings.ToLower(s.SourceProcessorName+names), "neuropix") {
		return 0
	}
	return -1
}

// openEphysNPProbe reads the geometry of stream s from settings.xml at
// path and returns it with the settings' probe element (its names and
// part number): nil, nil, nil if the file has no matching probe.
func openEphysNPProbe(path string, s OebinStream) (*probe.Probe, *NPProbe, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("recording: %w", err)
	}
	defer f.Close()
	ps, err := ParseOpenEphysSettings(f, path)
	if err != nil {
		return nil, nil, err
	}
	i := matchNPProbe(ps, s)
	if i < 0 {
		return nil, nil, nil
	}
	np := ps[i]
	name := filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
	if len(np.Names) > 0 {
		name += " " + np.Names[0]
	}
	p := &probe.Probe{Name: name, NChanFile: s.NumChannels, X: np.X, Y: np.Y, Shank: np.Shank, ChanMap: np.Channel}
	if err := p.Validate(); err != nil {
		return nil, &np, fmt.Errorf("recording: %s: %w (stream %s has %d channels)", path, err, s.Folder(), s.NumChannels)
	}
	return p, &np, nil
}
