package main

import (
	"fmt"
	"io"

	"dspk/recording"
)

// recordingFiles lists the files a recording is read from
// ([recording.Files]).
func recordingFiles(path string, rec recording.Recording) []string { return recording.Files(path, rec) }

// inputFiles lists every file a run with these flags reads besides the
// recording: the probe file, if -probe names one, and extra (templates,
// truth).
func (f *inputFlags) inputFiles(extra ...string) []string { return f.input().ProbeFiles(extra...) }

// runInputs lists every file a run reads: the files of the recording rec
// opened from paths, the probe file, if -probe names one, and extra. The
// run's output folder may not replace any of them.
func (f *inputFlags) runInputs(paths []string, rec recording.Recording, extra ...string) []string {
	return f.input().RunFiles(paths, rec, extra...)
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
