package recording

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// maxSavedChans bounds nSavedChans so that a corrupt meta cannot make the
// parser allocate without limit.
const maxSavedChans = 1 << 16

// Meta is a parsed SpikeGLX .meta file. The typed fields are those dspk
// uses; Fields holds every key (tables without their leading '~') with
// its raw value, and Keys the keys in file order.
type Meta struct {
	// Name is the file the meta was read from, used in messages.
	Name string
	// Fields maps each key to its value as written (tables without '~').
	Fields map[string]string
	// Keys lists the keys in file order (the last of repeated keys wins in
	// Fields; Keys lists each once).
	Keys []string

	// TypeThis is the stream in the file: "imec", "nidq" or "obx"
	// ("imec" if the key is missing).
	TypeThis string
	// NSavedChans is the number of channels per time point in the .bin.
	NSavedChans int
	// SampleRate is imSampRate (niSampRate, obSampRate for those streams).
	SampleRate float64
	// FileSizeBytes is the .bin size the meta states, or -1 if absent.
	FileSizeBytes int64
	// FileTimeSecs is the recording length the meta states (0 if absent).
	FileTimeSecs float64
	// FirstSample is the run-relative index of sample 0 (0 if absent).
	FirstSample int64
	// ImAiRangeMax is Vmax in volts (0 if absent).
	ImAiRangeMax float64
	// ImMaxInt is Imax as stated (0 if absent; see [Meta.MaxInt]).
	ImMaxInt int
	// ProbeType is imDatPrb_type (0 if absent, as in 3A metas).
	ProbeType int
	// ProbePart is imDatPrb_pn ("" if absent).
	ProbePart string
	// SavedAPLFSY are the AP, LF and SY channel counts as stored
	// (snsApLfSy); AcquiredAPLFSY the counts as acquired (acqApLfSy).
	SavedAPLFSY, AcquiredAPLFSY [3]int
	// SaveChans holds, for each saved channel, the acquired channel it
	// came from (snsSaveChanSubset expanded; "all" is 0…NSavedChans−1).
	SaveChans []int

	// lines maps each key to its 1-based line in the file.
	lines map[string]int
}

// MetaError is a problem in a SpikeGLX meta file; it names the file and
// the line or key.
type MetaError struct {
	Name string // file
	Line int    // 1-based line, 0 if the problem is not on one line
	Key  string // key concerned, "" if none
	Msg  string
}

// Error formats the problem as "recording: file:line: key: message".
func (e *MetaError) Error() string {
	var b strings.Builder
	b.WriteString("recording: ")
	b.WriteString(e.Name)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// ParseMeta parses a SpikeGLX .meta from r; name is used in errors. Each
// non-blank line is key=value, split on the first '='; a leading '~' is
// stripped from keys, keys and values are trimmed of white space (so CRLF
// files parse), and values may be empty. ParseMeta requires nSavedChans
// and the stream's sample rate and checks the typed fields it fills; the
// tables (~imroTbl, ~snsShankMap, ~snsGeomMap) are parsed by
// [Meta.MicrovoltsPerCount] and [Meta.Probe].
func ParseMeta(r io.Reader, name string) (*Meta, error) {
	m := &Meta{Name: name, Fields: map[string]string{}, FileSizeBytes: -1}
	line := map[string]int{}
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		s, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("recording: %s: %w", name, err)
		}
		if t := strings.TrimSpace(s); t != "" {
			k, v, ok := strings.Cut(t, "=")
			if !ok {
				return nil, &MetaError{Name: name, Line: n, Msg: fmt.Sprintf("line %.40q has no '='", t)}
			}
			k = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(k), "~"))
			if k == "" {
				return nil, &MetaError{Name: name, Line: n, Msg: "empty key"}
			}
			if _, dup := m.Fields[k]; !dup {
				m.Keys = append(m.Keys, k)
			}
			m.Fields[k] = strings.TrimSpace(v)
			line[k] = n
		}
		if err != nil {
			break
		}
	}
	if err := m.typed(line); err != nil {
		return nil, err
	}
	m.lines = line
	return m, nil
}

// typed fills the typed fields from Fields: the stream, channel count and
// rate, then the file and probe fields, the channel counts by kind and
// the saved channels.
func (m *Meta) typed(line map[string]int) error {
	f := metaFields{m: m, line: line}
	m.TypeThis = m.Fields["typeThis"]
	if m.TypeThis == "" {
		m.TypeThis = "imec"
	}
	var n int64
	if ok, err := f.getInt("nSavedChans", &n); err != nil {
		return err
	} else if !ok {
		return f.bad("nSavedChans", "missing: the channel count of the .bin is unknown")
	}
	if n <= 0 || n > maxSavedChans {
		return f.bad("nSavedChans", "%d channels: want 1…%d", n, maxSavedChans)
	}
	m.NSavedChans = int(n)

	rateKey := map[string]string{"imec": "imSampRate", "nidq": "niSampRate", "obx": "obSampRate"}[m.TypeThis]
	if rateKey == "" {
		return f.bad("typeThis", "unknown stream type %q", m.TypeThis)
	}
	if ok, err := f.getFloat(rateKey, &m.SampleRate); err != nil {
		return err
	} else if !ok {
		return f.bad(rateKey, "missing: the sample rate is unknown")
	}
	if !(m.SampleRate > 0) {
		return f.bad(rateKey, "rate %g Hz: must be positive", m.SampleRate)
	}
	if err := f.fileAndProbe(); err != nil {
		return err
	}
	if err := f.counts(); err != nil {
		return err
	}
	return f.saveChans()
}

// metaFields reads the fields of a Meta being typed; line gives each
// key's line for the errors.
type metaFields struct {
	m    *Meta
	line map[string]int
}

// bad returns the error of key k.
func (f metaFields) bad(k, format string, a ...any) error {
	return &MetaError{Name: f.m.Name, Line: f.line[k], Key: k, Msg: fmt.Sprintf(format, a...)}
}

// getInt sets *dst to the integer of key k and reports whether k is
// set (an error if it is not an integer).
func (f metaFields) getInt(k string, dst *int64) (bool, error) {
	v, ok := f.m.Fields[k]
	if !ok || v == "" {
		return false, nil
	}
	x, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false, f.bad(k, "%q is not an integer", v)
	}
	*dst = x
	return true, nil
}

// getFloat is getInt for a finite number.
func (f metaFields) getFloat(k string, dst *float64) (bool, error) {
	v, ok := f.m.Fields[k]
	if !ok || v == "" {
		return false, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return false, f.bad(k, "%q is not a finite number", v)
	}
	*dst = x
	return true, nil
}

// fileAndProbe fills the file's size, time and first sample, the range
// and the probe's type and part.
func (f metaFields) fileAndProbe() error {
	m := f.m
	if ok, err := f.getInt("fileSizeBytes", &m.FileSizeBytes); err != nil {
		return err
	} else if ok && m.FileSizeBytes < 0 {
		return f.bad("fileSizeBytes", "negative size %d", m.FileSizeBytes)
	}
	if _, err := f.getFloat("fileTimeSecs", &m.FileTimeSecs); err != nil {
		return err
	}
	if _, err := f.getInt("firstSample", &m.FirstSample); err != nil {
		return err
	}
	if _, err := f.getFloat("imAiRangeMax", &m.ImAiRangeMax); err != nil {
		return err
	}
	var x int64
	if ok, err := f.getInt("imMaxInt", &x); err != nil {
		return err
	} else if ok {
		if x <= 0 || x > 1<<30 {
			return f.bad("imMaxInt", "%d: must be positive", x)
		}
		m.ImMaxInt = int(x)
	}
	x = 0
	if _, err := f.getInt("imDatPrb_type", &x); err != nil {
		return err
	}
	if x < 0 || x > 1<<30 {
		return f.bad("imDatPrb_type", "%d: not a probe type", x)
	}
	m.ProbeType = int(x)
	m.ProbePart = m.Fields["imDatPrb_pn"]
	return nil
}

// counts fills the saved and acquired channel counts by kind (AP, LF,
// SY) and checks the saved ones against nSavedChans.
func (f metaFields) counts() error {
	m := f.m
	for _, c := range []struct {
		key string
		dst *[3]int
	}{{"snsApLfSy", &m.SavedAPLFSY}, {"acqApLfSy", &m.AcquiredAPLFSY}} {
		v, ok := m.Fields[c.key]
		if !ok || v == "" {
			continue
		}
		parts := strings.Split(v, ",")
		if len(parts) != 3 {
			return f.bad(c.key, "%q: want three counts AP,LF,SY", v)
		}
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 0 || n > maxSavedChans {
				return f.bad(c.key, "%q: want three counts AP,LF,SY", v)
			}
			c.dst[i] = n
		}
	}
	if _, ok := m.Fields["snsApLfSy"]; ok && m.TypeThis == "imec" {
		if s := m.SavedAPLFSY; s[0]+s[1]+s[2] != m.NSavedChans {
			return f.bad("snsApLfSy", "%d+%d+%d channels but nSavedChans=%d", s[0], s[1], s[2], m.NSavedChans)
		}
	}
	return nil
}

// saveChans fills the saved channels (snsSaveChanSubset; every channel
// when absent or "all").
func (f metaFields) saveChans() error {
	m := f.m
	subset, ok := m.Fields["snsSaveChanSubset"]
	if !ok || subset == "" || subset == "all" {
		m.SaveChans = make([]int, m.NSavedChans)
		for i := range m.SaveChans {
			m.SaveChans[i] = i
		}
		return nil
	}
	chans, err := parseChanSubset(subset, m.NSavedChans)
	if err != nil {
		return f.bad("snsSaveChanSubset", "%v", err)
	}
	m.SaveChans = chans
	return nil
}

// parseChanSubset expands "0:383,768" (inclusive ranges) and checks that
// it lists exactly want channels.
func parseChanSubset(s string, want int) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, ":")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q: %q is not a channel or range", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, fmt.Errorf("%q: %q is not a channel or range", s, part)
			}
		}
		if b-a+1 > want-len(out) {
			return nil, fmt.Errorf("%q lists more than nSavedChans=%d channels", s, want)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	if len(out) != want {
		return nil, fmt.Errorf("%q lists %d channels but nSavedChans=%d", s, len(out), want)
	}
	return out, nil
}

// MaxInt returns Imax: imMaxInt if stated, otherwise 2^(bits−1) for the
// ADC bit depth of the probe type (512 for the 10-bit NP1.0 family, whose
// old 3A metas omit the key), otherwise 512.
func (m *Meta) MaxInt() int {
	if m.ImMaxInt > 0 {
		return m.ImMaxInt
	}
	if t, ok := probeTypes[m.ProbeType]; ok {
		return 1 << (t.adcBits - 1)
	}
	return 512
}

// np1Style reports whether imroTbl entries of this probe type carry
// per-channel gains: (chan bank refid apGain lfGain [apHipass]).
func np1Style(probeType int) bool {
	switch probeType {
	case 0, 1020, 1030, 1100, 1120, 1121, 1122, 1123, 1200, 1300:
		return true
	}
	return false
}

// imroGains parses the NP1.0-style ~imroTbl: its AP and LF gain per
// acquired channel.
func (m *Meta) imroGains() (ap, lf []float64, err error) {
	v, ok := m.Fields["imroTbl"]
	if !ok {
		return nil, nil, &MetaError{Name: m.Name, Key: "imroTbl", Msg: "missing: the per-channel gains are unknown"}
	}
	ents, err := tableEntries(v)
	if err != nil {
		return nil, nil, &MetaError{Name: m.Name, Line: m.lines["imroTbl"], Key: "imroTbl", Msg: err.Error()}
	}
	for i, e := range ents[1:] {
		f := strings.Fields(e)
		if len(f) < 5 {
			return nil, nil, &MetaError{Name: m.Name, Key: "imroTbl", Msg: fmt.Sprintf("entry %d (%s): want (chan bank refid apGain lfGain …)", i, e)}
		}
		g := [2]float64{}
		for j := range g {
			x, err := strconv.ParseFloat(f[3+j], 64)
			if err != nil || !(x > 0) || math.IsInf(x, 0) {
				return nil, nil, &MetaError{Name: m.Name, Key: "imroTbl", Msg: fmt.Sprintf("entry %d (%s): gain %q is not a positive number", i, e, f[3+j])}
			}
			g[j] = x
		}
		ap = append(ap, g[0])
		lf = append(lf, g[1])
	}
	return ap, lf, nil
}

// tableEntries splits "(hdr)(e0)(e1)…" into its parenthesised entries,
// header first.
func tableEntries(v string) ([]string, error) {
	var out []string
	for rest := strings.TrimSpace(v); rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] != '(' {
			return nil, fmt.Errorf("expected '(' at %.20q", rest)
		}
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return nil, fmt.Errorf("unclosed '(' at %.20q", rest)
		}
		out = append(out, rest[1:end])
		rest = rest[end+1:]
	}
	if len(out) == 0 {
		return nil, errors.New("empty table")
	}
	return out, nil
}

// MicrovoltsPerCount returns the µV per count of each saved channel:
// imAiRangeMax / [Meta.MaxInt] / gain · 1e6. The gain of an AP channel is
// the apGain of its acquired channel's ~imroTbl entry for NP1.0-style
// probes (types 0, 1020, 1030, 1100, 1120–1123, 1200, 1300; saved channels
// are mapped to acquired ones through snsSaveChanSubset), otherwise
// imChan0apGain, otherwise 80 for NP2.0 (types 21, 24) and 100 for types
// 2003, 2013, 2020, 3010, 3020 (neuropixels_probe_features.json);
// LF channels use lfGain or imChan0lfGain likewise. Sync channels, and
// channels of unknown gain or of non-imec streams, get 0.
func (m *Meta) MicrovoltsPerCount() ([]float64, error) {
	uv := make([]float64, m.NSavedChans)
	if m.TypeThis != "imec" {
		return uv, nil
	}
	if !(m.ImAiRangeMax > 0) {
		return nil, &MetaError{Name: m.Name, Key: "imAiRangeMax", Msg: "missing or not positive: counts cannot be converted to µV"}
	}
	acq := m.AcquiredAPLFSY
	if _, ok := m.Fields["acqApLfSy"]; !ok {
		if _, ok := m.Fields["snsApLfSy"]; !ok {
			return nil, &MetaError{Name: m.Name, Key: "acqApLfSy", Msg: "missing (and no snsApLfSy): which channels are AP, LF or sync is unknown"}
		}
		// Without the acquired counts assume everything acquired was saved.
		acq = m.SavedAPLFSY
	}
	var apG, lfG []float64
	if np1Style(m.ProbeType) {
		var err error
		if apG, lfG, err = m.imroGains(); err != nil {
			return nil, err
		}
	}
	fixed := 0.0
	switch m.ProbeType {
	case 21, 24:
		fixed = 80
	case 2003, 2013, 2020, 3010, 3020:
		fixed = 100
	}
	chan0 := func(key string) (float64, error) {
		v, ok := m.Fields[key]
		if !ok || v == "" {
			return fixed, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return 0, &MetaError{Name: m.Name, Key: key, Msg: fmt.Sprintf("%q is not a positive gain", v)}
		}
		return x, nil
	}
	apFixed, err := chan0("imChan0apGain")
	if err != nil {
		return nil, err
	}
	lfFixed, err := chan0("imChan0lfGain")
	if err != nil {
		return nil, err
	}
	scale := m.ImAiRangeMax / float64(m.MaxInt()) * 1e6
	for i, a := range m.SaveChans {
		var g float64
		switch {
		case a < acq[0]:
			g = apFixed
			if apG != nil {
				if a >= len(apG) {
					return nil, &MetaError{Name: m.Name, Key: "imroTbl", Msg: fmt.Sprintf("%d entries but saved channel %d is acquired AP channel %d", len(apG), i, a)}
				}
				g = apG[a]
			}
		case a < acq[0]+acq[1]:
			g = lfFixed
			if lfG != nil {
				k := a - acq[0]
				if k >= len(lfG) {
					return nil, &MetaError{Name: m.Name, Key: "imroTbl", Msg: fmt.Sprintf("%d entries but saved channel %d is acquired LF channel %d", len(lfG), i, k)}
				}
				g = lfG[k]
			}
		}
		if g > 0 {
			uv[i] = scale / g
		}
	}
	return uv, nil
}

// ScaleWarnings describes the saved AP and LF channels of an imec stream
// whose µV per count (uv, from [Meta.MicrovoltsPerCount]) is unknown:
// their amplitudes stay in counts. It names the file and the line of the
// ~imroTbl, and says why that table could not be read, if it could not.
func (m *Meta) ScaleWarnings(uv []float64) []string {
	if m.TypeThis != "imec" {
		return nil
	}
	acq := m.AcquiredAPLFSY
	if _, ok := m.Fields["acqApLfSy"]; !ok {
		acq = m.SavedAPLFSY
	}
	unknown := 0
	for i, a := range m.SaveChans {
		if i < len(uv) && uv[i] == 0 && a < acq[0]+acq[1] {
			unknown++
		}
	}
	if unknown == 0 {
		return nil
	}
	where := m.Name
	why := fmt.Sprintf("probe type %d states no gain dspk knows (no imChan0apGain)", m.ProbeType)
	if v, ok := m.Fields["imroTbl"]; ok {
		where = fmt.Sprintf("%s:%d", m.Name, m.lines["imroTbl"])
		if _, err := tableEntries(v); err != nil {
			why = fmt.Sprintf("~imroTbl is unreadable (%v)", err)
		} else {
			why = fmt.Sprintf("~imroTbl gives no gain dspk reads for probe type %d", m.ProbeType)
		}
	}
	return []string{fmt.Sprintf("%s: %s: the µV per count of %d channels is unknown; their amplitudes stay in counts", where, why, unknown)}
}
