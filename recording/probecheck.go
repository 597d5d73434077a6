package recording

import (
	"fmt"
	"math"

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
