package recording

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dspk/probe"
)

// Input says how to open a recording for processing: the layout of its
// files and the probe it was recorded with.
type Input struct {
	OpenOptions
	// Probe names the probe geometry: np1, np2, a probe file
	// ([probe.Load]; FILE.json:N for probe N of several). "" takes the
	// geometry the recording's own files state, else Neuropixels 1.0 for
	// a 384- or 385-channel file.
	Probe string
	// ForceDType uses 16-bit data that look read as the wrong integer
	// type as they are, instead of refusing them.
	ForceDType bool
}

// OptionError is an option of an [Input] that does not apply to the
// recording it opens (a command reports it as a misuse of its flags).
type OptionError struct{ Msg string }

// Error returns the message.
func (e *OptionError) Error() string { return e.Msg }

// Open opens the recording of paths (one path, or the files of one
// SpikeGLX run) for processing: an LF band is refused, the probe is
// found and fitted to the file, and 16-bit data read as the wrong type
// beyond doubt are refused, and so is the channel count of a raw file
// that the data contradict ([CheckChannels]). It returns what opening
// the recording and resolving the probe found suspicious.
func (in Input) Open(paths ...string) (Recording, *probe.Probe, []string, error) {
	rec, err := OpenFiles(paths, in.OpenOptions)
	if err != nil {
		return nil, nil, nil, err
	}
	var warnings []string
	if w, ok := rec.(Warner); ok {
		warnings = append(warnings, w.Warnings()...)
	}
	fail := func(err error) (Recording, *probe.Probe, []string, error) {
		rec.Close()
		return nil, nil, nil, err
	}
	if err := CheckSpikeBand(rec); err != nil {
		return fail(err)
	}
	pr, pw, err := in.ResolveProbe(rec)
	if err != nil {
		return fail(err)
	}
	warnings = append(warnings, pw...)
	dw, err := in.checkDType(rec, pr)
	if err != nil {
		return fail(err)
	}
	cw, err := in.checkChannels(rec, pr)
	if err != nil {
		return fail(err)
	}
	warnings = append(warnings, dw...)
	return rec, pr, append(warnings, cw...), nil
}

// checkDType refuses 16-bit data that are read as the wrong integer type
// beyond doubt (see [DTypeCheck]), naming the dtype that reads them
// right, unless ForceDType; it warns of data that only look so. float32
// files are not checked.
func (in Input) checkDType(rec Recording, pr *probe.Probe) ([]string, error) {
	dt := Int16
	if r, ok := rec.(interface{ DType() DType }); ok {
		dt = r.DType()
	}
	if dt == Float32 {
		if in.ForceDType {
			return nil, &OptionError{fmt.Sprintf("-force-dtype does not apply: it overrides the check of 16-bit data, and %s holds float32; leave it out", rec.Name())}
		}
		return nil, nil
	}
	c, err := CheckDType(rec, pr.ChanMap)
	if err != nil {
		return nil, err
	}
	if !c.Wrong() && !c.Suspect() {
		return nil, nil
	}
	var advice string
	switch {
	case rec.Format() != "raw":
		advice = fmt.Sprintf("the %s files state int16 samples, so the file may be damaged or not what it claims", rec.Format())
	case dt == Int16:
		advice = "the file looks like uint16 data (centred on 32768, as Intan stores them) read as int16; give -dtype uint16"
	default:
		advice = "the file looks like int16 data read as uint16; give -dtype int16"
	}
	msg := fmt.Sprintf("%s: %s: %s", rec.Name(), c, advice)
	if c.Wrong() && !in.ForceDType {
		return nil, fmt.Errorf("%s (or -force-dtype to use the values as they are)", msg)
	}
	return []string{msg}, nil
}

// ResolveProbe picks the probe — Probe, else the geometry stated by the
// recording's own files, else Neuropixels 1.0 for a 384- or 385-channel
// file — and fits it to the file: the probe may use fewer rows than the
// file has (the others are ignored), never a row the file lacks. It
// returns how a Probe given contradicts what the files state.
func (in Input) ResolveProbe(rec Recording) (*probe.Probe, []string, error) {
	pr, warnings, err := in.findProbe(rec)
	if err != nil {
		return nil, nil, err
	}
	pr, err = pr.ForFile(rec.Channels(), rec.Name())
	return pr, warnings, err
}

func (in Input) findProbe(rec Recording) (*probe.Probe, []string, error) {
	if in.Probe != "" {
		pr, err := probe.Load(in.Probe)
		if err != nil {
			return nil, nil, err
		}
		return pr, probeWarnings(rec, pr, in.Probe), nil
	}
	if p, ok := rec.(Prober); ok {
		if pr := p.Probe(); pr != nil {
			return pr, nil, nil
		}
	}
	if err := geometryError(rec); err != nil {
		return nil, nil, err
	}
	if rec.Channels() == 385 || rec.Channels() == 384 {
		return probe.NP1(), nil, nil
	}
	return nil, nil, fmt.Errorf("%s: %d channels and no geometry in the file; give -probe (np1, np2 or a probe JSON)",
		rec.Name(), rec.Channels())
}

// probeWarnings describes how a probe given (arg as given) contradicts
// the geometry or probe type the recording's own files state (a SpikeGLX
// .meta, an Open Ephys settings.xml).
func probeWarnings(rec Recording, pr *probe.Probe, arg string) []string {
	var out []string
	if n := pr.StatedChannels; n != 0 && n < rec.Channels()-1 {
		out = append(out, fmt.Sprintf("-probe %s states n_chan = %d but %s has %d channels per sample (more than one extra row, such as a sync channel); "+
			"check that the probe file was made for this file layout", arg, n, rec.Name(), rec.Channels()))
	}
	if c, ok := rec.(*Concat); ok {
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
// if it has one that is malformed: it is refused rather than replaced by
// a default layout.
func geometryError(rec Recording) error {
	if p, ok := rec.(interface{ ProbeError() error }); ok {
		if err := p.ProbeError(); err != nil {
			return fmt.Errorf("%w; fix the table or give -probe", err)
		}
	}
	return nil
}

// DatPath is the raw data file Phy should read for rec.
func DatPath(rec Recording) string {
	if oe, ok := rec.(*OpenEphys); ok {
		return filepath.Join(filepath.Dir(oe.Oebin()), "continuous", oe.Stream().Folder(), "continuous.dat")
	}
	return rec.Name()
}

// Files lists the files a recording opened from path is read from: the
// path, and the SpikeGLX .meta or the raw data file behind it.
func Files(path string, rec Recording) []string {
	files := []string{path, rec.Name(), DatPath(rec)}
	if _, ok := rec.(*SpikeGLX); ok {
		files = append(files, MetaPath(rec.Name()))
	}
	if f, ok := rec.(Filer); ok {
		for _, n := range f.Files() {
			files = append(files, n)
			if strings.HasSuffix(n, ".bin") {
				files = append(files, MetaPath(n))
			}
		}
	}
	return files
}

// ProbeFiles lists every file a run with this input reads besides the
// recording: the probe file, if Probe names one, and extra (templates,
// truth).
func (in Input) ProbeFiles(extra ...string) []string {
	var files []string
	if in.Probe != "" {
		if _, err := os.Stat(in.Probe); err == nil {
			files = append(files, in.Probe)
		} else if i := strings.LastIndexByte(in.Probe, ':'); i > 0 {
			files = append(files, in.Probe[:i]) // FILE.json:N
		}
	}
	for _, e := range extra {
		if e != "" {
			files = append(files, e)
		}
	}
	return files
}

// RunFiles lists every file a run reads: the files of the recording rec
// opened from paths, the probe file, if Probe names one, and extra. The
// run's output folder may not replace any of them.
func (in Input) RunFiles(paths []string, rec Recording, extra ...string) []string {
	var files []string
	for _, p := range paths {
		files = append(files, Files(p, rec)...)
	}
	return append(files, in.ProbeFiles(extra...)...)
}
