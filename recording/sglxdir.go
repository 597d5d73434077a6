package recording

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// sglxAP matches the AP-band file name of a SpikeGLX probe,
// <run>_g0_t0.imec0.ap.bin, its third match the probe ("imec0"; "imec"
// for the single-probe names of older SpikeGLX versions).
var sglxAP = regexp.MustCompile(`(?i)^(.*)\.(imec\d*)\.ap\.bin$`)

// FindSpikeGLXRun returns the AP-band files (.ap.bin with their .meta) of
// the one probe of the SpikeGLX run folder dir, found in dir and in the
// folders directly below it (run_g0/run_g0_imec0/run_g0_t0.imec0.ap.bin),
// in gate and trigger order ([SortRunFiles]), as Kilosort4 and
// SpikeInterface take the AP stream of a folder. It returns none if dir
// holds no .ap.bin. Several probes (imec0, imec1) are an error that names
// their files, as is a probe with a whole-run CatGT file (_tcat) beside
// the trigger files it was made of; several trigger files of one probe
// are returned all, to be read as one recording.
func FindSpikeGLXRun(dir string) ([]string, error) {
	bins, err := apFiles(dir)
	if err != nil {
		return nil, err
	}
	entries, _ := os.ReadDir(dir) // apFiles read it
	for _, e := range entries {
		if e.IsDir() {
			sub, _ := apFiles(filepath.Join(dir, e.Name())) // an unreadable sub-folder holds no run of its own
			bins = append(bins, sub...)
		}
	}
	if len(bins) == 0 {
		return nil, nil
	}
	probes := map[string]bool{}
	for _, b := range bins {
		probes[strings.ToLower(sglxAP.FindStringSubmatch(filepath.Base(b))[2])] = true
	}
	if len(probes) > 1 {
		var list strings.Builder
		for _, b := range slices.SortedFunc(slices.Values(bins), naturalCompare) {
			fmt.Fprintf(&list, "\n  %s", b)
		}
		return nil, fmt.Errorf("recording: %s holds the AP-band files of %d probes (%s); pick one and give its .ap.bin:%s",
			dir, len(probes), strings.Join(slices.SortedFunc(maps.Keys(probes), naturalCompare), ", "), list.String())
	}
	if len(bins) == 1 {
		return bins, nil
	}
	for _, b := range bins {
		if strings.Contains(filepath.Base(b), "_tcat.") {
			return nil, fmt.Errorf("recording: %s holds the CatGT file %s beside %d trigger files of the same probe; give the file(s) to read", dir, b, len(bins)-1)
		}
	}
	return SortRunFiles(bins)
}

// apFiles lists the SpikeGLX AP-band files of the folder dir: regular
// files named like an .ap.bin with a .meta beside them.
func apFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	var bins []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.Type().IsRegular() && sglxAP.MatchString(e.Name()) && exists(MetaPath(p)) {
			bins = append(bins, p)
		}
	}
	return bins, nil
}

// ReadPaths reads a list of recording paths, one per line, as a command
// takes them on standard input: spaces around a path and blank lines are
// dropped.
func ReadPaths(r io.Reader) ([]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("recording: reading the list of paths: %w", err)
	}
	var paths []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			paths = append(paths, l)
		}
	}
	return paths, nil
}
