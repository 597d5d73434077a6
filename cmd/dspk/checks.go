package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"dspk/probe"
	"dspk/recording"
)

// probeWarnings describes how a -probe (arg as given) contradicts the
// geometry or probe type the recording's own files state (a SpikeGLX
// .meta, an Open Ephys settings.xml).
func probeWarnings(rec recording.Recording, pr *probe.Probe, arg string) []string {
	var out []string
	if n := pr.StatedChannels; n != 0 && n < rec.Channels()-1 {
		out = append(out, fmt.Sprintf("-probe %s states n_chan = %d but %s has %d channels per sample (more than one extra row, such as a sync channel); "+
			"check that the probe file was made for this file layout", arg, n, rec.Name(), rec.Channels()))
	}
	if c, ok := rec.(*recording.Concat); ok {
		rec = c.Parts()[0]
	}
	sg, ok := rec.(interface {
		ProbeContradictions(p *probe.Probe, preset string) []string
	})
	if !ok {
		return out
	}
	preset := ""
	if _, err := os.Stat(arg); err != nil {
		if _, err := probe.Preset(arg); err == nil {
			preset = strings.ToLower(strings.TrimSpace(arg))
		}
	}
	return append(out, sg.ProbeContradictions(pr, preset)...)
}

// geometryError is why the recording's geometry table could not be used,
// if it has one that is malformed: dspk refuses it rather than fall back
// to a default layout.
func geometryError(rec recording.Recording) error {
	if p, ok := rec.(interface{ ProbeError() error }); ok {
		if err := p.ProbeError(); err != nil {
			return fmt.Errorf("%w; fix the table or give -probe", err)
		}
	}
	return nil
}

// recordingFiles lists the files a recording is read from: the path
// given, and the SpikeGLX .meta or the raw data file behind it.
func recordingFiles(path string, rec recording.Recording) []string {
	files := []string{path, rec.Name(), datPath(rec)}
	if _, ok := rec.(*recording.SpikeGLX); ok {
		files = append(files, recording.MetaPath(rec.Name()))
	}
	if f, ok := rec.(recording.Filer); ok {
		for _, n := range f.Files() {
			files = append(files, n)
			if strings.HasSuffix(n, ".bin") {
				files = append(files, recording.MetaPath(n))
			}
		}
	}
	return files
}

// inputFiles lists every file a run with these flags reads besides the
// recording: the probe file, if -probe names one, and extra (templates,
// truth).
func (f *inputFlags) inputFiles(extra ...string) []string {
	var files []string
	if f.probe != "" {
		if _, err := os.Stat(f.probe); err == nil {
			files = append(files, f.probe)
		} else if i := strings.LastIndexByte(f.probe, ':'); i > 0 {
			files = append(files, f.probe[:i]) // FILE.json:N
		}
	}
	for _, e := range extra {
		if e != "" {
			files = append(files, e)
		}
	}
	return files
}

// runInputs lists every file a run reads: the files of the recording rec
// opened from paths, the probe file, if -probe names one, and extra. The
// run's output folder may not replace any of them.
func (f *inputFlags) runInputs(paths []string, rec recording.Recording, extra ...string) []string {
	var files []string
	for _, p := range paths {
		files = append(files, recordingFiles(p, rec)...)
	}
	return append(files, f.inputFiles(extra...)...)
}

// checkRunArgs checks the arguments of a command that reads one recording
// and writes the folder out: a recording path, and -o.
func checkRunArgs(cmd string, args []string, out string) error {
	if len(args) < 1 {
		return usagef("%s takes a recording path (or the files of one SpikeGLX run, or - to read their paths from standard input)", cmd)
	}
	if out == "" {
		return usagef("-o DIR is required")
	}
	return nil
}

// printWarnings writes each warning on its own line of w.
func printWarnings(w io.Writer, warnings []string) {
	for _, s := range warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}
