package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
)

// ksJSON is Kilosort's flat probe dictionary as JSON.
// Array elements are pointers so that a null is told from a 0.
type ksJSON struct {
	ChanMap []*float64 `json:"chanMap"`
	XC      []*float64 `json:"xc"`
	YC      []*float64 `json:"yc"`
	KCoords []*float64 `json:"kcoords"`
	NChan   *float64   `json:"n_chan"`
}

// values returns the numbers of a JSON array, refusing nulls (which
// encoding/json would read as 0).
func values(name, key string, a []*float64) ([]float64, error) {
	out := make([]float64, len(a))
	for i, v := range a {
		if v == nil {
			return nil, fmt.Errorf("probe %s: %s[%d] is null", name, key, i)
		}
		out[i] = *v
	}
	return out, nil
}

// ReadKilosortJSON reads a Kilosort probe JSON file; see
// [ParseKilosortJSON].
func ReadKilosortJSON(path string) (*Probe, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	return ParseKilosortJSON(data, path)
}

// ParseKilosortJSON parses Kilosort's flat probe JSON
//
//	{"chanMap": [...], "xc": [...], "yc": [...], "kcoords": [...], "n_chan": 385}
//
// where chanMap holds the 0-based file rows of the sites, xc and yc their
// positions in µm, kcoords their shank (integer-valued) and n_chan the
// number of channels in the file. The arrays must have equal lengths;
// kcoords may be absent (one shank) and so may n_chan (largest row plus
// one). name (the file name) is used in errors and as the probe's Name.
func ParseKilosortJSON(data []byte, name string) (*Probe, error) {
	var k ksJSON
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("probe %s: %w", name, jsonError(data, err))
	}
	n := len(k.ChanMap)
	if k.ChanMap == nil {
		return nil, fmt.Errorf("probe %s: no \"chanMap\"", name)
	}
	if len(k.XC) != n || len(k.YC) != n || (k.KCoords != nil && len(k.KCoords) != n) {
		return nil, fmt.Errorf("probe %s: %d chanMap entries but %d xc, %d yc and %d kcoords values",
			name, n, len(k.XC), len(k.YC), len(k.KCoords))
	}
	var arrs [4][]float64
	for j, a := range []struct {
		key string
		v   []*float64
	}{{"chanMap", k.ChanMap}, {"xc", k.XC}, {"yc", k.YC}, {"kcoords", k.KCoords}} {
		var err error
		if arrs[j], err = values(name, a.key, a.v); err != nil {
			return nil, err
		}
	}
	p := &Probe{
		Name:    name,
		X:       arrs[1],
		Y:       arrs[2],
		Shank:   make([]int, n),
		ChanMap: make([]int, n),
	}
	for i, v := range arrs[0] {
		r, ok := exactInt(v)
		if !ok || r < 0 {
			return nil, fmt.Errorf("probe %s: chanMap[%d] = %g is not a channel index", name, i, v)
		}
		p.ChanMap[i] = r
		p.NChanFile = max(p.NChanFile, r+1)
	}
	for i, v := range arrs[3] {
		s, ok := exactInt(v)
		if !ok {
			return nil, fmt.Errorf("probe %s: kcoords[%d] = %g is not a shank number", name, i, v)
		}
		p.Shank[i] = s
	}
	if k.NChan != nil {
		c, ok := exactInt(*k.NChan)
		if !ok || c < 1 {
			return nil, fmt.Errorf("probe %s: n_chan = %g is not a channel count", name, *k.NChan)
		}
		if c < p.NChanFile {
			return nil, fmt.Errorf("probe %s: n_chan = %d but chanMap uses file channel %d", name, c, p.NChanFile-1)
		}
		p.NChanFile = c
		p.StatedChannels = c
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// exactInt converts an integer-valued float that fits in 32 bits.
func exactInt(v float64) (int, bool) {
	if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, false
	}
	return int(v), true
}

// WriteKilosortJSON writes p as Kilosort's flat probe JSON (keys chanMap,
// xc, yc, kcoords, n_chan), which Kilosort's load_probe reads. p must pass
// [Probe.Validate].
func WriteKilosortJSON(w io.Writer, p *Probe) error {
	if err := p.Validate(); err != nil {
		return err
	}
	kc := make([]float64, p.Len())
	for i, s := range p.Shank {
		kc[i] = float64(s)
	}
	out := struct {
		ChanMap []int     `json:"chanMap"`
		XC      []float64 `json:"xc"`
		YC      []float64 `json:"yc"`
		KCoords []float64 `json:"kcoords"`
		NChan   int       `json:"n_chan"`
	}{p.ChanMap, p.X, p.Y, kc, p.NChanFile}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("probe %s: %w", p.Name, err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
