package recording

import (
	"fmt"
	"math"
	"strings"

	"dspk/probe"
)

// ProbeTolUm is how far (in µm) a site of a probe given instead of the
// .meta's geometry may lie from the meta's position for that file row,
// after both are shifted to start at x = 0 and y = 0 (a probe in another
// frame, or mirrored in x as Kilosort's NP1 map is, does not count as a
// contradiction), before [Meta.ProbeContradictions] reports it.
const ProbeTolUm = 1

// ProbeContradictions compares a probe given by the user (p, named by
// preset if it is one of the presets "np1" or "np2", else "") with the
// geometry and probe type the meta states, and describes each
// contradiction in one line: sites at other positions, a different set of
// file rows, or a preset of another probe family than imDatPrb_type (np1:
// type 0 or a 3A meta; np2: the single-shank NP2.0 types 21, 2003, 3010).
// A malformed geometry table is reported too, since p is then used
// instead of it.
func (m *Meta) ProbeContradictions(p *probe.Probe, preset string) []string {
	var out []string
	if preset != "" && m.TypeThis == "imec" {
		var ok bool
		switch preset {
		case "np1":
			ok = m.ProbeType == 0
		case "np2":
			ok = m.ProbeType == 21 || m.ProbeType == 2003 || m.ProbeType == 3010
		default:
			ok = true
		}
		if !ok {
			part := m.ProbePart
			if part == "" {
				part = "?"
			}
			out = append(out, fmt.Sprintf("%s: -probe %s, but the meta's imDatPrb_type is %d (%s)", m.Name, preset, m.ProbeType, part))
		}
	}
	g, err := m.Probe()
	if err != nil {
		return append(out, fmt.Sprintf("%v; using -probe %s instead", err, p.Name))
	}
	if g == nil {
		return out
	}
	if msg := geometryDiffers(g, p); msg != "" {
		out = append(out, fmt.Sprintf("%s: -probe %s contradicts the meta's geometry (%s); the -probe geometry is used", m.Name, p.Name, msg))
	}
	return out
}

// ProbeContradictions compares a probe given by the user (p, named by
// preset if it is one of the presets "np1" or "np2", else "") with the
// probe the stream's settings.xml states, as [Meta.ProbeContradictions]
// does for SpikeGLX: sites at other positions or file rows, or a preset
// of another probe family than the settings' probe_part_number or
// probe_name (np1: PRB_1_…, PRB2_…, "Neuropixels 1.0"; np2: the
// single-shank NP2000, NP2003, NP2004 or "Neuropixels 2.0 - single
// shank"). A malformed settings table is reported too.
func (r *OpenEphys) ProbeContradictions(p *probe.Probe, preset string) []string {
	var out []string
	if r.probeErr != nil {
		return append(out, fmt.Sprintf("%v; using -probe %s instead", r.probeErr, p.Name))
	}
	if r.settings == nil || r.probe == nil {
		return nil
	}
	if fam := npFamily(r.settings.Part, r.settings.Names); preset != "" && fam != "" && fam != preset {
		what := r.settings.Part
		if what == "" {
			what = strings.Join(r.settings.Names, ", ")
		}
		out = append(out, fmt.Sprintf("%s: -probe %s, but settings.xml states a %s probe (%s)", r.Name(), preset, familyName(fam), what))
	}
	if msg := geometryDiffers(r.probe, p); msg != "" {
		out = append(out, fmt.Sprintf("%s: -probe %s contradicts the geometry in settings.xml (%s); the -probe geometry is used",
			r.Name(), p.Name, strings.Replace(msg, "in the meta", "in settings.xml", 1)))
	}
	return out
}

// npFamily names the probe family of a Neuropixels part number or probe
// name: "np1", "np2" (2.0 single shank), "np2-4" (2.0 four shanks),
// "other" for another known part (NHP, Ultra, 1.0 UHD) and "" if
// unknown.
func npFamily(part string, names []string) string {
	p := strings.ToUpper(part)
	switch {
	case strings.HasPrefix(p, "PRB_1_") || strings.HasPrefix(p, "PRB2_1_"):
		return "np1"
	case p == "NP2000" || p == "NP2003" || p == "NP2004":
		return "np2"
	case p == "NP2010" || p == "NP2013" || p == "NP2014" || p == "NP2020" || p == "NP2021":
		return "np2-4"
	case strings.HasPrefix(p, "NP"):
		return "other"
	}
	for _, n := range names {
		n = strings.ToLower(n)
		switch {
		case strings.Contains(n, "neuropixels 1.0"):
			return "np1"
		case strings.Contains(n, "neuropixels 2.0") && strings.Contains(n, "single"):
			return "np2"
		case strings.Contains(n, "neuropixels 2.0") && (strings.Contains(n, "multi") || strings.Contains(n, "four") || strings.Contains(n, "4")):
			return "np2-4"
		}
	}
	return ""
}

// familyName describes a family of npFamily.
func familyName(f string) string {
	switch f {
	case "np1":
		return "Neuropixels 1.0"
	case "np2":
		return "Neuropixels 2.0 single-shank"
	case "np2-4":
		return "Neuropixels 2.0 four-shank"
	}
	return "non-standard Neuropixels"
}

// geometryDiffers compares two probes site by file row, up to a shift
// and a mirror in x.
func geometryDiffers(meta, user *probe.Probe) string {
	row := map[int]int{}
	for i, r := range meta.ChanMap {
		row[r] = i
	}
	common := 0
	for _, r := range user.ChanMap {
		if _, ok := row[r]; ok {
			common++
		}
	}
	if common != meta.Len() || common != user.Len() {
		return fmt.Sprintf("%d sites in the meta, %d given, %d file rows in common", meta.Len(), user.Len(), common)
	}
	frame := func(p *probe.Probe) (x0, x1, y0 float64) {
		x0, x1, y0 = math.Inf(1), math.Inf(-1), math.Inf(1)
		for i := range p.Len() {
			x0, x1, y0 = min(x0, p.X[i]), max(x1, p.X[i]), min(y0, p.Y[i])
		}
		return
	}
	mx0, mx1, my0 := frame(meta)
	ux0, _, uy0 := frame(user)
	first := ""
	for _, mirror := range []bool{false, true} {
		bad := 0
		for i, r := range user.ChanMap {
			j := row[r]
			mx := meta.X[j] - mx0
			if mirror {
				mx = mx1 - meta.X[j]
			}
			ux, uy, my := user.X[i]-ux0, user.Y[i]-uy0, meta.Y[j]-my0
			if math.Abs(mx-ux) > ProbeTolUm || math.Abs(my-uy) > ProbeTolUm {
				if bad == 0 && !mirror {
					first = fmt.Sprintf("file row %d at (%g, %g) µm, the meta has (%g, %g)", r, user.X[i], user.Y[i], meta.X[j], meta.Y[j])
				}
				bad++
			}
		}
		if bad == 0 {
			return ""
		}
		if !mirror {
			first = fmt.Sprintf("%d of %d sites elsewhere; %s", bad, user.Len(), first)
		}
	}
	return first
}
