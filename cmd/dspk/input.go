package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"dspk/probe"
	"dspk/recording"
)

// inputFlags are the flags every command that reads a recording shares.
type inputFlags struct {
	probe      string
	channels   int
	rate       float64
	stream     string
	dtype      string
	scale      float64
	strictSize bool
	forceDType bool
	// warnings collects what opening the recording and resolving the
	// probe found suspicious.
	warnings []string
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.probe, "probe", "", "probe geometry: np1, np2, a probeinterface JSON (FILE.json:N for probe N of several),\n"+
		"a Kilosort probe JSON or a Kilosort .mat channel map; it may use fewer channels than the file has\n"+
		"(default: the geometry in the SpikeGLX .meta or Open Ephys settings.xml, else np1 for 384/385-channel files)")
	fs.IntVar(&f.channels, "channels", 0, "channels per sample of a raw .bin/.dat file")
	fs.Float64Var(&f.rate, "rate", 0, "sample rate in Hz of a raw .bin/.dat file")
	fs.StringVar(&f.dtype, "dtype", "", "sample type of a raw file: int16, uint16 (centred on 32768, as Intan stores it) or float32\n(default: int16, or the info.json's)")
	fs.Float64Var(&f.scale, "scale", 0, "int16 counts per stored unit of a float32 raw file (count = round(value·scale))")
	fs.StringVar(&f.stream, "stream", "", "Open Ephys continuous stream: a unique part of its name, e.g. ProbeA-AP\n(default: the only stream at a spike-band rate; dspk info lists them)")
	fs.BoolVar(&f.forceDType, "force-dtype", false, "use 16-bit data that look read as the wrong type (most values near the rails ±32768,\n"+
		"near 0 with the sign bit flipped: uint16 read as int16 or the reverse) as they are, instead of refusing them")
	fs.BoolVar(&f.strictSize, "strict-size", false, "refuse a SpikeGLX .bin whose size disagrees with the meta's fileSizeBytes\n(default: use the real size and warn)")
}

func (f *inputFlags) options() recording.OpenOptions {
	return recording.OpenOptions{Channels: f.channels, Rate: f.rate, Stream: f.stream,
		DType: f.dtype, Scale: f.scale, StrictSize: f.strictSize}
}

// openRecording opens the recording of the command's arguments: one path,
// several SpikeGLX files of one run (or a quoted glob of them), or "-"
// for a list of paths on standard input, one per line. The recording's
// warnings (a truncated file, a bad sample_numbers.npy) join f.warnings,
// which the command prints and writes into its dspk.json.
func (f *inputFlags) openRecording(args []string) (recording.Recording, error) {
	if len(args) == 1 && args[0] == "-" {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, err
		}
		args = nil
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				args = append(args, l)
			}
		}
		if len(args) == 0 {
			return nil, usagef("no paths on standard input")
		}
	}
	rec, err := recording.OpenFiles(args, f.options())
	if err != nil {
		return nil, err
	}
	if w, ok := rec.(recording.Warner); ok {
		f.warnings = append(f.warnings, w.Warnings()...)
	}
	return rec, nil
}

// open opens the recording of args for processing (an LF band is
// refused) and finds its probe.
func (f *inputFlags) open(args ...string) (recording.Recording, *probe.Probe, error) {
	rec, err := f.openRecording(args)
	if err != nil {
		return nil, nil, err
	}
	if err := recording.CheckSpikeBand(rec); err != nil {
		rec.Close()
		return nil, nil, err
	}
	pr, err := f.resolveProbe(rec)
	if err != nil {
		rec.Close()
		return nil, nil, err
	}
	if err := f.checkDType(rec, pr); err != nil {
		rec.Close()
		return nil, nil, err
	}
	return rec, pr, nil
}

// checkDType refuses 16-bit data that are read as the wrong integer type
// beyond doubt (see [recording.DTypeCheck]), naming the -dtype that
// reads them right, unless -force-dtype; it warns of data that only look
// so. float32 files are not checked.
func (f *inputFlags) checkDType(rec recording.Recording, pr *probe.Probe) error {
	dt := recording.Int16
	if r, ok := rec.(*recording.Raw); ok {
		dt = r.DType()
	}
	if dt == recording.Float32 {
		if f.forceDType {
			return usagef("-force-dtype does not apply: it overrides the check of 16-bit data, and %s holds float32; leave it out", rec.Name())
		}
		return nil
	}
	c, err := recording.CheckDType(rec, pr.ChanMap)
	if err != nil {
		return err
	}
	if !c.Wrong() && !c.Suspect() {
		return nil
	}
	var advice string
	switch {
	case rec.Format() != "raw":
		advice = fmt.Sprintf("the %s files state int16 samples, so the file may be damaged or not what it claims", rec.Format())
	case dt == recording.Int16:
		advice = "the file looks like uint16 data (centred on 32768, as Intan stores them) read as int16; give -dtype uint16"
	default:
		advice = "the file looks like int16 data read as uint16; give -dtype int16"
	}
	msg := fmt.Sprintf("%s: %s: %s", rec.Name(), c, advice)
	if c.Wrong() && !f.forceDType {
		return fmt.Errorf("%s (or -force-dtype to use the values as they are)", msg)
	}
	f.warnings = append(f.warnings, msg)
	return nil
}

// resolveProbe picks the probe — the -probe flag, else the geometry
// stated by the recording's own files, else Neuropixels 1.0 for a 384- or
// 385-channel file — and fits it to the file: the probe may use fewer
// rows than the file has (the others are ignored), never a row the file
// lacks.
func (f *inputFlags) resolveProbe(rec recording.Recording) (*probe.Probe, error) {
	pr, err := f.findProbe(rec)
	if err != nil {
		return nil, err
	}
	return pr.ForFile(rec.Channels(), rec.Name())
}

func (f *inputFlags) findProbe(rec recording.Recording) (*probe.Probe, error) {
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
	if rec.Channels() == 385 || rec.Channels() == 384 {
		return probe.NP1(), nil
	}
	return nil, fmt.Errorf("%s: %d channels and no geometry in the file; give -probe (np1, np2 or a probe JSON)",
		rec.Name(), rec.Channels())
}
