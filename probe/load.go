package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Load returns the probe named by arg: a preset name accepted by [Preset]
// if no file of that name exists, otherwise the file, whose kind is found
// from its content: a JSON object with "specification" is a probeinterface
// file (which must hold one probe), one with "chanMap" a Kilosort probe.
// Kilosort's .prb (Python) and .mat channel maps are not read.
func Load(arg string) (*Probe, error) {
	data, err := os.ReadFile(arg)
	if errors.Is(err, fs.ErrNotExist) {
		if p, perr := Preset(arg); perr == nil {
			return p, nil
		}
		return nil, fmt.Errorf("probe: %s is neither a file nor a preset (%s)", arg, strings.Join(PresetNames(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	return Parse(data, arg)
}

// Parse parses a probeinterface or Kilosort probe JSON document, telling
// them apart by their keys; name (the file name) is used in errors.
func Parse(data []byte, name string) (*Probe, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		switch strings.ToLower(filepath.Ext(name)) {
		case ".prb":
			return nil, fmt.Errorf("probe %s: .prb files are Python and are not read; convert it to probeinterface JSON", name)
		case ".mat":
			return nil, fmt.Errorf("probe %s: MATLAB channel maps are not read; save it as Kilosort probe JSON", name)
		}
		return nil, fmt.Errorf("probe %s: not a JSON probe file: %w", name, jsonError(data, err))
	}
	if _, ok := keys["specification"]; ok {
		return ParseProbeInterface(data, name)
	}
	if _, ok := keys["chanMap"]; ok {
		return ParseKilosortJSON(data, name)
	}
	return nil, fmt.Errorf("probe %s: neither a probeinterface file (no \"specification\") nor a Kilosort probe (no \"chanMap\")", name)
}
