package recording

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"dspk/probe"
)

// probeLayout is the electrode grid of one Neuropixels probe type, from
// SpikeInterface/probeinterface
// src/probeinterface/resources/neuropixels_probe_features.json @ 7092509
// (fields cols_per_shank, electrode_pitch_horz_um,
// electrode_pitch_vert_um, even_row_horz_offset_left_edge_to_leftmost_electrode_center_um,
// odd_row_…, shank_pitch_um, adc_bit_depth), keyed by imDatPrb_type via
// its z_imro_format_type_to_part_number table.
type probeLayout struct {
	part           string
	cols           int
	pitchX, pitchY float64
	evenX, oddX    float64 // x of column 0 on even / odd rows, from the shank's left edge
	shankPitch     float64
	adcBits        int
}

var probeTypes = map[int]probeLayout{
	0:    {"NP1000", 2, 32, 20, 27, 11, 0, 10},
	21:   {"NP2000", 2, 32, 15, 27, 27, 0, 14},
	24:   {"NP2010", 2, 32, 15, 27, 27, 250, 14},
	1020: {"NP1020", 2, 87, 20, 27, 11, 0, 10},
	1030: {"NP1030", 2, 87, 20, 27, 11, 0, 10},
	1100: {"NP1100", 8, 6, 6, 14, 14, 0, 10},
	1110: {"NP1110", 8, 6, 6, 15.5, 15.5, 0, 10},
	1120: {"NP1120", 2, 4.5, 4.5, 6.75, 6.75, 0, 10},
	1121: {"NP1121", 1, 0, 3, 6.25, 6.25, 0, 10},
	1122: {"NP1122", 16, 3, 3, 12.5, 12.5, 0, 10},
	1123: {"NP1123", 12, 4.5, 4.5, 10.25, 10.25, 0, 10},
	1200: {"NP1200", 2, 32, 31, 56.5, 36.5, 0, 10},
	1300: {"NP1300", 2, 48, 20, 11, 11, 0, 10},
	2003: {"NP2003", 2, 32, 15, 27, 27, 0, 12},
	2013: {"NP2013", 2, 32, 15, 27, 27, 250, 12},
	2020: {"NP2020", 2, 32, 15, 27, 27, 250, 12},
	3010: {"NP3010", 2, 32, 15, 27, 27, 0, 12},
	3020: {"NP3020", 2, 32, 15, 27, 27, 250, 12},
}

// neuralSaved is the number of saved channels that are AP or LF sites,
// which the geometry tables list (the sync channel comes last).
func (m *Meta) neuralSaved() int {
	if _, ok := m.Fields["snsApLfSy"]; ok {
		return m.SavedAPLFSY[0] + m.SavedAPLFSY[1]
	}
	return m.NSavedChans
}

// Probe returns the geometry the meta states, or nil, nil if it has
// neither ~snsGeomMap nor ~snsShankMap (or is not an imec stream).
//
// ~snsGeomMap, written by SpikeGLX 20230202 on, is used when present:
// header (partNumber,nShanks,shankPitch,shankWidth), then one
// (shank:x:y:used) per saved neural channel in file order, x in µm from
// the shank's left edge; the site is at (shank·shankPitch + x, y).
//
// Otherwise ~snsShankMap gives (nShanks,nCols,nRows) and one
// (shank:col:row:used) per saved neural channel. Grid indices are turned
// into µm in the same frame as snsGeomMap, using the probe type's layout
// from probeinterface's neuropixels_probe_features.json:
// x = shank·shankPitch + xOffset(row parity) + col·pitchX, y = row·pitchY.
// For NP1.0 (type 0, and 3A metas, which carry no type) that is x ∈ {27,
// 59} on even rows and {11, 43} on odd rows, y = 20·row: the
// probeinterface NP1000 positions shifted by 11 µm in x, the same frame
// snsGeomMap uses. An unknown probe type is an error (supply a probe
// file instead).
//
// Sites whose used flag (parsed as an integer) is 0 are left out of the
// probe, as are channels beyond the tables (the sync channel); ChanMap
// holds each site's row in the .bin and NChanFile is nSavedChans.
func (m *Meta) Probe() (*probe.Probe, error) {
	if m.TypeThis != "imec" {
		return nil, nil
	}
	name := filepath.Base(m.Name)
	if v, ok := m.Fields["snsGeomMap"]; ok {
		return m.geomMap(name, v)
	}
	if v, ok := m.Fields["snsShankMap"]; ok {
		return m.shankMap(name, v)
	}
	return nil, nil
}

// mapEntries parses the entries of a geometry table: each is four
// colon-separated numbers; the header is returned split on commas.
func (m *Meta) mapEntries(key, v string, want int) (hdr []string, ents [][4]float64, err error) {
	bad := func(format string, a ...any) error {
		return &MetaError{Name: m.Name, Key: key, Msg: fmt.Sprintf(format, a...)}
	}
	raw, err := tableEntries(v)
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	hdr = strings.Split(raw[0], ",")
	if len(raw)-1 != want {
		return nil, nil, bad("%d entries but %d saved neural channels", len(raw)-1, want)
	}
	ents = make([][4]float64, len(raw)-1)
	for i, e := range raw[1:] {
		f := strings.Split(e, ":")
		if len(f) != 4 {
			return nil, nil, bad("entry %d (%s): want four ':'-separated fields", i, e)
		}
		for j := range 4 {
			s := strings.TrimSpace(f[j])
			var x float64
			if j == 1 || j == 2 {
				x, err = strconv.ParseFloat(s, 64)
				if err == nil && (x != x || x > 1e9 || x < -1e9) {
					err = strconv.ErrRange
				}
			} else {
				var k int
				k, err = strconv.Atoi(s) // shank and used are integers (not Python truthiness)
				x = float64(k)
				if err == nil && (k < 0 || k > 1<<20) {
					err = strconv.ErrRange
				}
			}
			if err != nil {
				return nil, nil, bad("entry %d (%s): field %d %q is not a valid number", i, e, j, s)
			}
			ents[i][j] = x
		}
	}
	return hdr, ents, nil
}

func (m *Meta) geomMap(name, v string) (*probe.Probe, error) {
	hdr, ents, err := m.mapEntries("snsGeomMap", v, m.neuralSaved())
	if err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error {
		return &MetaError{Name: m.Name, Key: "snsGeomMap", Msg: fmt.Sprintf(format, a...)}
	}
	if len(hdr) != 4 {
		return nil, bad("header (%s): want (partNumber,nShanks,shankPitch,shankWidth)", strings.Join(hdr, ","))
	}
	nShanks, err1 := strconv.Atoi(strings.TrimSpace(hdr[1]))
	pitch, err2 := strconv.ParseFloat(strings.TrimSpace(hdr[2]), 64)
	if err1 != nil || err2 != nil || nShanks <= 0 || !(pitch >= 0 && pitch < 1e6) {
		return nil, bad("header (%s): bad shank count or pitch", strings.Join(hdr, ","))
	}
	p := &probe.Probe{Name: name + " (snsGeomMap)", NChanFile: m.NSavedChans}
	for i, e := range ents {
		shank := int(e[0])
		if shank >= nShanks {
			return nil, bad("entry %d: shank %d of %d", i, shank, nShanks)
		}
		if e[3] == 0 {
			continue
		}
		p.ChanMap = append(p.ChanMap, i)
		p.Shank = append(p.Shank, shank)
		p.X = append(p.X, float64(shank)*pitch+e[1])
		p.Y = append(p.Y, e[2])
	}
	return m.checkProbe(p)
}

func (m *Meta) shankMap(name, v string) (*probe.Probe, error) {
	hdr, ents, err := m.mapEntries("snsShankMap", v, m.neuralSaved())
	if err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error {
		return &MetaError{Name: m.Name, Key: "snsShankMap", Msg: fmt.Sprintf(format, a...)}
	}
	var dims [3]int
	if len(hdr) != 3 {
		return nil, bad("header (%s): want (nShanks,nCols,nRows)", strings.Join(hdr, ","))
	}
	for i := range dims {
		d, err := strconv.Atoi(strings.TrimSpace(hdr[i]))
		if err != nil || d <= 0 {
			return nil, bad("header (%s): want (nShanks,nCols,nRows)", strings.Join(hdr, ","))
		}
		dims[i] = d
	}
	lay, ok := probeTypes[m.ProbeType]
	if !ok {
		return nil, &MetaError{Name: m.Name, Key: "imDatPrb_type", Msg: fmt.Sprintf("probe type %d has no known electrode pitch to place snsShankMap sites; give a probe file", m.ProbeType)}
	}
	p := &probe.Probe{Name: fmt.Sprintf("%s (snsShankMap, %s layout)", name, lay.part), NChanFile: m.NSavedChans}
	for i, e := range ents {
		shank, col, row := int(e[0]), e[1], e[2]
		if shank >= dims[0] || col < 0 || col >= float64(dims[1]) || row < 0 || row >= float64(dims[2]) || col != float64(int(col)) || row != float64(int(row)) {
			return nil, bad("entry %d (%d:%g:%g): outside the %d×%d×%d grid", i, shank, col, row, dims[0], dims[1], dims[2])
		}
		if e[3] == 0 {
			continue
		}
		off := lay.evenX
		if int(row)%2 == 1 {
			off = lay.oddX
		}
		p.ChanMap = append(p.ChanMap, i)
		p.Shank = append(p.Shank, shank)
		p.X = append(p.X, float64(shank)*lay.shankPitch+off+col*lay.pitchX)
		p.Y = append(p.Y, row*lay.pitchY)
	}
	return m.checkProbe(p)
}

func (m *Meta) checkProbe(p *probe.Probe) (*probe.Probe, error) {
	if len(p.ChanMap) == 0 {
		return nil, &MetaError{Name: m.Name, Msg: "geometry table marks no site as used"}
	}
	if err := p.Validate(); err != nil {
		return nil, &MetaError{Name: m.Name, Msg: err.Error()}
	}
	return p, nil
}
