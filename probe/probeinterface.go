package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
)

// piGroup is a probeinterface ProbeGroup file.
type piGroup struct {
	Specification *string   `json:"specification"`
	Version       string    `json:"version"`
	Probes        []piProbe `json:"probes"`
}

// piProbe holds the fields of one probeinterface probe that dspk uses.
type piProbe struct {
	NDim                 int               `json:"ndim"`
	SIUnits              *string           `json:"si_units"`
	ContactPositions     [][]*float64      `json:"contact_positions"` // pointers: null is not 0
	ContactIDs           []json.RawMessage `json:"contact_ids"`
	ShankIDs             []json.RawMessage `json:"shank_ids"`
	DeviceChannelIndices []json.RawMessage `json:"device_channel_indices"`
}

// ReadProbeInterface reads a probeinterface JSON file that holds exactly
// one probe; see [ParseProbeInterface].
func ReadProbeInterface(path string) (*Probe, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	return ParseProbeInterface(data, path)
}

// ReadProbeInterfaceIndex reads probe number index (from 0) of a
// probeinterface JSON file that may hold several; see [ParseProbeInterface].
func ReadProbeInterfaceIndex(path string, index int) (*Probe, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	return ParseProbeInterfaceIndex(data, path, index)
}

// ParseProbeInterface parses a probeinterface ProbeGroup JSON document
// holding exactly one probe; name (the file name) is used in errors and as
// the probe's Name.
//
// Contacts whose device_channel_indices entry is −1 are not recorded and
// are left out; the others become sites, ordered by their device channel
// index, which is their row in the binary file. Without
// device_channel_indices contact i is stored in row i. NChanFile is the
// largest row plus one; use [Probe.ForFile] to fit the probe to a file with
// more channels. Positions in si_units "mm" are converted to µm; only the
// first two coordinates (x across, y depth) are used, so ndim must be 2.
// shank_ids may be strings or integers: integer-valued ids are kept, other
// strings are numbered in sorted order.
func ParseProbeInterface(data []byte, name string) (*Probe, error) {
	g, err := parseGroup(data, name)
	if err != nil {
		return nil, err
	}
	if len(g.Probes) != 1 {
		return nil, fmt.Errorf("probe %s: %d probes in the probe group; choose one by index with -probe %s:N (N from 0)", name, len(g.Probes), name)
	}
	return g.Probes[0].toProbe(name)
}

// ParseProbeInterfaceIndex is [ParseProbeInterface] for probe number index
// (from 0) of a probe group that may hold several.
func ParseProbeInterfaceIndex(data []byte, name string, index int) (*Probe, error) {
	g, err := parseGroup(data, name)
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= len(g.Probes) {
		return nil, fmt.Errorf("probe %s: no probe %d (the group has %d)", name, index, len(g.Probes))
	}
	return g.Probes[index].toProbe(fmt.Sprintf("%s[%d]", name, index))
}

func parseGroup(data []byte, name string) (*piGroup, error) {
	var g piGroup
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("probe %s: %w", name, jsonError(data, err))
	}
	if g.Specification == nil || *g.Specification != "probeinterface" {
		return nil, fmt.Errorf("probe %s: not a probeinterface file (no \"specification\": \"probeinterface\")", name)
	}
	if len(g.Probes) == 0 {
		return nil, fmt.Errorf("probe %s: the probe group holds no probes", name)
	}
	return &g, nil
}

// jsonError adds the line and column of a JSON syntax error.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

func (pp *piProbe) toProbe(name string) (*Probe, error) {
	n := len(pp.ContactPositions)
	if pp.NDim != 2 {
		return nil, fmt.Errorf("probe %s: ndim %d; only 2-D probes are supported", name, pp.NDim)
	}
	scale := 1.0
	if pp.SIUnits != nil {
		switch *pp.SIUnits {
		case "um":
		case "mm":
			scale = 1000
		default:
			return nil, fmt.Errorf("probe %s: si_units %q; want \"um\" or \"mm\"", name, *pp.SIUnits)
		}
	}
	for i, pos := range pp.ContactPositions {
		if len(pos) != 2 {
			return nil, fmt.Errorf("probe %s: contact %d has %d coordinates; want 2", name, i, len(pos))
		}
		if pos[0] == nil || pos[1] == nil {
			return nil, fmt.Errorf("probe %s: contact_positions[%d] holds a null coordinate", name, i)
		}
	}
	if pp.ContactIDs != nil && len(pp.ContactIDs) != n {
		return nil, fmt.Errorf("probe %s: %d contact positions but %d contact_ids", name, n, len(pp.ContactIDs))
	}
	shank, err := shankIDs(pp.ShankIDs, n, name)
	if err != nil {
		return nil, err
	}
	rows := make([]int, n)
	if pp.DeviceChannelIndices == nil {
		for i := range rows {
			rows[i] = i
		}
	} else {
		if len(pp.DeviceChannelIndices) != n {
			return nil, fmt.Errorf("probe %s: %d contact positions but %d device_channel_indices",
				name, n, len(pp.DeviceChannelIndices))
		}
		for i, raw := range pp.DeviceChannelIndices {
			v, err := intValue(raw)
			if err != nil || v < -1 {
				return nil, fmt.Errorf("probe %s: device_channel_indices[%d] = %s is not a channel index or -1", name, i, raw)
			}
			rows[i] = v
		}
	}
	// Recorded contacts, ordered by file row (stable for equal rows, which
	// Validate rejects below).
	var use []int
	for i, r := range rows {
		if r >= 0 {
			use = append(use, i)
		}
	}
	sort.SliceStable(use, func(a, b int) bool { return rows[use[a]] < rows[use[b]] })
	p := &Probe{
		Name:    name,
		X:       make([]float64, len(use)),
		Y:       make([]float64, len(use)),
		Shank:   make([]int, len(use)),
		ChanMap: make([]int, len(use)),
	}
	for s, i := range use {
		p.X[s] = *pp.ContactPositions[i][0] * scale
		p.Y[s] = *pp.ContactPositions[i][1] * scale
		p.Shank[s] = shank[i]
		p.ChanMap[s] = rows[i]
		p.NChanFile = max(p.NChanFile, rows[i]+1)
	}
	if len(use) == 0 && n > 0 {
		return nil, fmt.Errorf("probe %s: none of the %d contacts is connected to a device channel", name, n)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// intValue decodes a JSON number that is an exact integer.
func intValue(raw json.RawMessage) (int, error) {
	if isNull(raw) {
		return 0, fmt.Errorf("null is not an integer")
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, err
	}
	if f != float64(int(f)) || f > 1<<53 || f < -(1<<53) {
		return 0, fmt.Errorf("%s is not an integer", raw)
	}
	return int(f), nil
}

// shankIDs decodes shank_ids given as integers or strings.
func shankIDs(raw []json.RawMessage, n int, name string) ([]int, error) {
	out := make([]int, n)
	if raw == nil {
		return out, nil
	}
	if len(raw) != n {
		return nil, fmt.Errorf("probe %s: %d contact positions but %d shank_ids", name, n, len(raw))
	}
	strs := make([]string, n)
	numeric := true
	for i, r := range raw {
		var s string
		if isNull(r) {
			return nil, fmt.Errorf("probe %s: shank_ids[%d] is null", name, i)
		}
		if err := json.Unmarshal(r, &s); err == nil {
			strs[i] = s
		} else if v, err := intValue(r); err == nil {
			strs[i] = strconv.Itoa(v)
		} else {
			return nil, fmt.Errorf("probe %s: shank_ids[%d] = %s is neither a string nor an integer", name, i, r)
		}
		if v, err := strconv.Atoi(strs[i]); err == nil && v >= 0 && v < 1<<31 {
			out[i] = v
		} else {
			numeric = false
		}
	}
	if numeric {
		return out, nil
	}
	// Non-numeric ids (probeinterface writes "" for a single shank):
	// number the distinct ids in sorted order.
	uniq := map[string]int{}
	for _, s := range strs {
		uniq[s] = 0
	}
	keys := make([]string, 0, len(uniq))
	for k := range uniq {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		uniq[k] = i
	}
	for i, s := range strs {
		out[i] = uniq[s]
	}
	return out, nil
}

// isNull reports whether a JSON value is null (which encoding/json would
// decode as a zero value).
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// ReadProbeGroup reads every probe of a probeinterface JSON file as one
// probe, as SpikeInterface stores the probe group of a recording: a file
// of one probe reads as [ReadProbeInterface] reads it; with several, the
// sites of all probes are ordered by file row and each probe's shanks are
// numbered after those of the probes before it, so that sites of two
// probes never share a shank.
func ReadProbeGroup(path string) (*Probe, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	g, err := parseGroup(data, path)
	if err != nil {
		return nil, err
	}
	if len(g.Probes) == 1 {
		return g.Probes[0].toProbe(path)
	}
	type site struct {
		x, y       float64
		shank, row int
	}
	var sites []site
	shank0 := 0
	for i := range g.Probes {
		p, err := g.Probes[i].toProbe(fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		next := shank0
		for s := range p.ChanMap {
			sites = append(sites, site{p.X[s], p.Y[s], shank0 + p.Shank[s], p.ChanMap[s]})
			next = max(next, shank0+p.Shank[s]+1)
		}
		shank0 = next
	}
	sort.SliceStable(sites, func(a, b int) bool { return sites[a].row < sites[b].row })
	p := &Probe{Name: path}
	for _, s := range sites {
		p.X, p.Y = append(p.X, s.x), append(p.Y, s.y)
		p.Shank, p.ChanMap = append(p.Shank, s.shank), append(p.ChanMap, s.row)
		p.NChanFile = max(p.NChanFile, s.row+1)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}
