package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Load returns the probe named by arg: a preset name accepted by [Preset]
// if no file of that name exists, otherwise the file, whose kind is found
// from its content: a MATLAB level-5 file is a Kilosort channel map
// ([ParseKilosortMat]), a JSON object with "specification" is a
// probeinterface file (which must hold one probe), one with "chanMap" a
// Kilosort probe. FILE:N (when FILE exists and FILE:N does not) is probe
// N, from 0, of a probeinterface file holding several. Kilosort's .prb
// files (Python) are not read.
func Load(arg string) (*Probe, error) {
	data, err := os.ReadFile(arg)
	if errors.Is(err, fs.ErrNotExist) {
		if i := strings.LastIndexByte(arg, ':'); i > 0 {
			if n, err := strconv.Atoi(arg[i+1:]); err == nil {
				if data, err := os.ReadFile(arg[:i]); err == nil {
					return parseIndex(data, arg[:i], n)
				}
			}
		}
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

// parseIndex parses probe n of a probeinterface file.
func parseIndex(data []byte, name string, n int) (*Probe, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil || keys["specification"] == nil {
		return nil, fmt.Errorf("probe %s:%d: only a probeinterface JSON file holds several probes to choose from", name, n)
	}
	return ParseProbeInterfaceIndex(data, name, n)
}

// Parse parses a probeinterface or Kilosort probe JSON document or a
// Kilosort MATLAB channel map, telling them apart by their content; name
// (the file name) is used in errors.
func Parse(data []byte, name string) (*Probe, error) {
	if bytes.HasPrefix(data, []byte("MATLAB")) || strings.EqualFold(filepath.Ext(name), ".mat") {
		return ParseKilosortMat(data, name)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		if strings.EqualFold(filepath.Ext(name), ".prb") {
			return nil, fmt.Errorf("probe %s: .prb files are Python programs, which dspk does not run; convert it with probeinterface (read_prb, then write_probeinterface) to a probeinterface JSON file", name)
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
