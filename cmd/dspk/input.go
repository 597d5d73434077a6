package main

import (
	"errors"
	"flag"
	"os"

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

// paths are the recording paths of the command's arguments: args, or for
// "-" a list of paths on standard input, one per line.
func paths(args []string) ([]string, error) {
	if len(args) != 1 || args[0] != "-" {
		return args, nil
	}
	args, err := recording.ReadPaths(os.Stdin)
	if err == nil && len(args) == 0 {
		return nil, usagef("no paths on standard input")
	}
	return args, err
}

// openRecording opens the recording of the command's arguments: one path,
// several SpikeGLX files of one run (or a quoted glob of them), or "-"
// for a list of paths on standard input, one per line. The recording's
// warnings (a truncated file, a bad sample_numbers.npy) join f.warnings,
// which the command prints and writes into its dspk.json.
func (f *inputFlags) openRecording(args []string) (recording.Recording, error) {
	args, err := paths(args)
	if err != nil {
		return nil, err
	}
	rec, err := recording.OpenFiles(args, f.options())
	if err != nil {
		return nil, optionUsage(err)
	}
	if w, ok := rec.(recording.Warner); ok {
		f.warnings = append(f.warnings, w.Warnings()...)
	}
	return rec, nil
}

// input is the [recording.Input] of the flags.
func (f *inputFlags) input() recording.Input {
	return recording.Input{OpenOptions: f.options(), Probe: f.probe, ForceDType: f.forceDType}
}

// open opens the recording of args for processing (an LF band is
// refused) and finds its probe ([recording.Input.Open]); its warnings
// join f.warnings.
func (f *inputFlags) open(args ...string) (recording.Recording, *probe.Probe, error) {
	args, err := paths(args)
	if err != nil {
		return nil, nil, err
	}
	rec, pr, warnings, err := f.input().Open(args...)
	if err != nil {
		return nil, nil, optionUsage(err)
	}
	f.warnings = append(f.warnings, warnings...)
	return rec, pr, nil
}

// resolveProbe picks and fits the probe of rec
// ([recording.Input.ResolveProbe]); its warnings join f.warnings.
func (f *inputFlags) resolveProbe(rec recording.Recording) (*probe.Probe, error) {
	pr, warnings, err := f.input().ResolveProbe(rec)
	f.warnings = append(f.warnings, warnings...)
	return pr, err
}

// optionUsage is err as a usage error (exit status 2) if it is a
// [recording.OptionError], a flag that does not fit the recording.
func optionUsage(err error) error {
	var oe *recording.OptionError
	if errors.As(err, &oe) {
		return usagef("%s", oe.Msg)
	}
	return err
}
