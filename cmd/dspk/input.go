package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"dspk/probe"
	"dspk/recording"
)

// inputFlags are the flags every command that reads a recording shares.
type inputFlags struct {
	probe    string
	channels int
	rate     float64
	stream   string
	// warnings collects what resolving the probe found suspicious.
	warnings []string
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.probe, "probe", "", "probe geometry: np1, np2, a probeinterface JSON or a Kilosort probe JSON\n(default: the geometry in the SpikeGLX .meta, else np1 for 385-channel files)")
	fs.IntVar(&f.channels, "channels", 0, "channels per sample of a raw .bin/.dat file")
	fs.Float64Var(&f.rate, "rate", 0, "sample rate in Hz of a raw .bin/.dat file")
	fs.StringVar(&f.stream, "stream", "", "Open Ephys continuous stream (default: the first)")
}

// open opens the recording at path and finds its probe.
func (f *inputFlags) open(path string) (recording.Recording, *probe.Probe, error) {
	rec, err := recording.Open(path, recording.OpenOptions{Channels: f.channels, Rate: f.rate, Stream: f.stream})
	if err != nil {
		return nil, nil, err
	}
	pr, err := f.resolveProbe(rec)
	if err != nil {
		rec.Close()
		return nil, nil, err
	}
	return rec, pr, nil
}

// resolveProbe picks the probe: the -probe flag, else the geometry stated
// by the recording's own files, else Neuropixels 1.0 for a 385-channel file.
func (f *inputFlags) resolveProbe(rec recording.Recording) (*probe.Probe, error) {
	if f.probe != "" {
		pr, err := probe.Load(f.probe)
		if err != nil {
			return nil, err
		}
		f.warnings = append(f.warnings, probeWarnings(rec, pr, f.probe)...)
		return pr, nil
	}
	if p, ok := rec.(recording.Prober); ok {
		if pr := p.Probe(); pr != nil {
			return pr, nil
		}
	}
	if err := geometryError(rec); err != nil {
		return nil, err
	}
	if rec.Channels() == 385 {
		return probe.NP1(), nil
	}
	return nil, fmt.Errorf("%s: %d channels and no geometry in the file; give -probe (np1, np2 or a probe JSON)",
		rec.Name(), rec.Channels())
}

// newBar returns a progress callback that draws a bar on stderr when it
// is a terminal and does nothing otherwise.
func newBar() func(pass string, done, total int) {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	var bar *progressbar.ProgressBar
	var cur string
	return func(pass string, done, total int) {
		if pass != cur || bar == nil {
			if bar != nil {
				bar.Finish()
				fmt.Fprintln(os.Stderr)
			}
			cur = pass
			bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(os.Stderr),
				progressbar.OptionSetDescription(fmt.Sprintf("%-10s", pass)),
				progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish(),
			)
		}
		bar.Set(done)
		if done == total {
			bar.Finish()
		}
	}
}
