package batch

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"dspk/pipeline"
	"dspk/recording"
)

// found is one recording the search found: the arguments that open it.
type found struct {
	root, rel   string // the input it was found under, its folder relative to it
	name, probe string
	files       []string
	stream      string
}

// sglxProbe matches the probe and band of a SpikeGLX AP file name.
var sglxProbe = regexp.MustCompile(`^(.*?)_g\d+_t(?:\d+|cat)\.(imec\d+)\.ap\.bin$`)

// findRecordings searches the inputs for SpikeGLX runs (one entry per
// probe, its _g/_t files together), Open Ephys sessions (one per
// spike-band stream), SpikeInterface binary folders and raw files with a probe (an info.json, or
// -probe with -channels and -rate given in args). Errors name the path.
func findRecordings(inputs []string, rawOK bool) ([]found, error) {
	var out []found
	for _, in := range inputs {
		f, err := searchInput(in, rawOK)
		if err != nil {
			return nil, err
		}
		out = append(out, f...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("batch: nothing to sort in %s: no SpikeGLX .ap.bin (with its .meta), Open Ephys structure.oebin "+
			"with a spike-band stream, SpikeInterface binary folder, or raw .bin/.dat with a probe", strings.Join(inputs, ", "))
	}
	return out, nil
}

// listFiles lists the files under in (a folder or a file), in name order,
// but those of hidden folders, and the Open Ephys structure.oebin files
// among them. A SpikeInterface binary folder is listed as one entry, the
// folder, and its files are not.
func listFiles(in string) ([]string, map[string]bool, error) {
	var files []string
	oebins := map[string]bool{}
	err := filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != in && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if recording.IsSIFolder(p) {
				files = append(files, p)
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "structure.oebin" {
			oebins[p] = true
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("batch: searching %s: %w", in, err)
	}
	slices.Sort(files)
	return files, oebins, nil
}

// searchInput finds the recordings under the input in (see
// [findRecordings]): its raw files, then its SpikeGLX runs, then its Open
// Ephys streams.
func searchInput(in string, rawOK bool) ([]found, error) {
	var out []found
	st, err := os.Stat(in)
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	root := in
	if !st.IsDir() {
		root = filepath.Dir(in)
	}
	files, oebins, err := listFiles(in)
	if err != nil {
		return nil, err
	}
	sglx := map[string][]string{} // folder/run/probe → files
	var keys []string
	underOE := func(p string) bool {
		for d := filepath.Dir(p); len(d) >= len(root); d = filepath.Dir(d) {
			if oebins[filepath.Join(d, "structure.oebin")] {
				return true
			}
			if d == filepath.Dir(d) {
				break
			}
		}
		return false
	}
	for _, p := range files {
		base := filepath.Base(p)
		ext := strings.ToLower(filepath.Ext(base))
		switch {
		case recording.IsSIFolder(p):
			out = append(out, found{root: root, rel: relDir(root, filepath.Dir(p)),
				name: base, probe: strings.TrimSuffix(base, filepath.Ext(base)), files: []string{p}})
		case sglxProbe.MatchString(base):
			m := sglxProbe.FindStringSubmatch(base)
			if _, err := os.Stat(recording.MetaPath(p)); err != nil {
				return nil, fmt.Errorf("batch: %s: a SpikeGLX data file without its .meta (%s)", p, filepath.Base(recording.MetaPath(p)))
			}
			// A run's probe folders (run_g0_imec0) and gates (run_g0)
			// are one recording per run and probe.
			k := runFolder(filepath.Dir(p), m[1]) + "\x00" + m[1] + "\x00" + m[2]
			if sglx[k] == nil {
				keys = append(keys, k)
			}
			sglx[k] = append(sglx[k], p)
		case ext == ".bin" || ext == ".dat" || ext == ".raw":
			if underOE(p) || strings.HasSuffix(base, ".lf.bin") || strings.Contains(base, ".nidq.") || strings.Contains(base, ".obx.") {
				continue
			}
			if _, err := os.Stat(recording.MetaPath(p)); err == nil && ext == ".bin" {
				continue // another SpikeGLX stream (LF, NI)
			}
			_, infoErr := os.Stat(filepath.Join(filepath.Dir(p), "info.json"))
			if infoErr != nil && !rawOK {
				return nil, fmt.Errorf("batch: %s: a raw data file whose probe, channels and rate cannot be found "+
					"(put an info.json beside it, or plan it with -probe, -channels and -rate)", p)
			}
			out = append(out, found{root: root, rel: relDir(root, filepath.Dir(p)),
				name: base, probe: strings.TrimSuffix(base, filepath.Ext(base)), files: []string{p}})
		}
	}
	for _, k := range keys {
		parts := strings.Split(k, "\x00")
		sorted, err := recording.SortRunFiles(sglx[k])
		if err != nil {
			return nil, fmt.Errorf("batch: %w", err)
		}
		out = append(out, found{root: root, rel: relDir(root, parts[0]), name: parts[1], probe: parts[2], files: sorted})
	}
	oe, err := openEphysFound(root, oebins)
	if err != nil {
		return nil, err
	}
	out = append(out, oe...)
	return out, nil
}

// openEphysFound lists the spike-band streams of the Open Ephys sessions
// oebins (their structure.oebin files) found under root.
func openEphysFound(root string, oebins map[string]bool) ([]found, error) {
	var out []found
	for _, ob := range slices.Sorted(maps.Keys(oebins)) {
		streams, err := recording.FindOpenEphysStreams(ob)
		if err != nil {
			return nil, fmt.Errorf("batch: %w", err)
		}
		for _, s := range streams {
			if s.Stream.SampleRate < recording.MinSpikeRate {
				continue
			}
			out = append(out, found{root: root, rel: relDir(root, filepath.Dir(ob)), name: filepath.Base(filepath.Dir(ob)),
				probe: s.Stream.Folder(), files: []string{ob}, stream: s.Stream.Folder()})
		}
	}
	return out, nil
}

// runFolder is the folder that holds a SpikeGLX run's files for one
// probe: dir, or its parent when dir is the run's probe folder
// (run_g0_imec0) so that the gates of a run stay together.
func runFolder(dir, run string) string {
	b := filepath.Base(dir)
	if regexp.MustCompile(`^` + regexp.QuoteMeta(run) + `_g\d+(_imec\d+)?$`).MatchString(b) {
		dir = filepath.Dir(dir)
		if regexp.MustCompile(`^` + regexp.QuoteMeta(run) + `_g\d+$`).MatchString(filepath.Base(dir)) {
			dir = filepath.Dir(dir)
		}
	}
	return dir
}

// relDir is dir relative to root ("." for root itself or outside it).
func relDir(root, dir string) string {
	r, err := filepath.Rel(root, dir)
	if err != nil || strings.HasPrefix(r, "..") {
		return "."
	}
	return r
}

// checkOutRoot refuses an output root inside an input folder's
// recordings or an input inside the output root.
func checkOutRoot(out string, inputs []string) error {
	for _, in := range inputs {
		a, b := pipeline.AbsPath(out), pipeline.AbsPath(in)
		if a == b || strings.HasPrefix(b, a+string(filepath.Separator)) {
			return fmt.Errorf("batch: the output root %s holds the input %s", out, in)
		}
	}
	return nil
}
