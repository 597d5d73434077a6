package recording

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// OpenOptions holds what [Open] cannot learn from the files themselves.
type OpenOptions struct {
	// Channels is the number of interleaved channels of a raw file. For
	// other formats a non-zero value must match the file's own count.
	Channels int
	// Rate is the sample rate of a raw file in Hz. For other formats a
	// non-zero value must match the file's own rate.
	Rate float64
	// Stream picks the Open Ephys continuous stream: a part of its name
	// that matches one stream only (see [FindOpenEphysStreams]); "" picks
	// the only stream at a spike-band rate.
	Stream string
	// DType is the sample type of a raw file ("int16", "uint16" or
	// "float32"; "" means int16 or the info.json's).
	DType string
	// Scale is the counts per stored unit of a float32 raw file (see
	// [RawOptions]); 0 takes the info.json's.
	Scale float64
	// StrictSize refuses a SpikeGLX .bin whose size disagrees with its
	// meta's fileSizeBytes instead of opening it with a warning.
	StrictSize bool
}

// Open opens the recording at path, choosing the reader from the path:
//
//   - a .bin with a sibling .meta (e.g. run_g0_t0.imec0.ap.bin and
//     run_g0_t0.imec0.ap.meta): SpikeGLX;
//   - a SpikeGLX run folder, holding the .ap.bin of one probe in it or
//     in a folder below (run_g0/run_g0_imec0): that probe's AP band,
//     its trigger files read as one ([FindSpikeGLXRun]);
//   - a structure.oebin (or any .oebin), a folder holding one or up to
//     three levels above one (an Open Ephys session, Record Node or
//     experiment folder; see [FindOpenEphysStreams]), or a
//     continuous/<stream>/continuous.dat below one: Open Ephys binary,
//     the stream chosen by opts.Stream ([SelectOpenEphysStream]);
//   - a SpikeInterface binary folder (binary.json, traces_cached_seg<N>.raw,
//     probegroup.json), or its binary.json: [OpenSIFolder], its segments
//     read as one recording, opts.Scale the scale of float32 samples;
//   - another .bin, .dat or .raw: headerless int16 (or opts.DType),
//     which needs opts.Channels and opts.Rate, or an info.json next to it
//     ({"sample_rate": 15000.0, "shape": [-1, 4], "dtype": "int16"}).
//
// The file size is validated before Open returns.
func Open(path string, opts OpenOptions) (Recording, error) {
	rec, err := open(path, opts)
	if err != nil {
		return nil, err
	}
	if opts.Channels != 0 && rec.Format() != "raw" && opts.Channels != rec.Channels() {
		rec.Close()
		return nil, fmt.Errorf("recording: %s: %d channels were given but the %s files state %d", path, opts.Channels, rec.Format(), rec.Channels())
	}
	if opts.Rate != 0 && rec.Format() != "raw" && opts.Rate != rec.SampleRate() {
		rec.Close()
		return nil, fmt.Errorf("recording: %s: a rate of %g Hz was given but the %s files state %g Hz", path, opts.Rate, rec.Format(), rec.SampleRate())
	}
	if err := optionsApply(path, rec.Format(), opts); err != nil {
		rec.Close()
		return nil, err
	}
	return rec, nil
}

// optionsApply refuses the options that do not apply to a recording of
// the given format, rather than ignore them: a sample type or scale
// (SpikeGLX and Open Ephys files are int16, as their own files state), a
// stream (only Open Ephys has several) and a strict size check (only a
// SpikeGLX .meta states a size).
func optionsApply(path, format string, opts OpenOptions) error {
	var what string
	switch format {
	case "spikeglx":
		what = "a SpikeGLX file, whose .meta states int16 samples and µV scales"
	case "openephys":
		what = "an Open Ephys stream, whose structure.oebin states int16 samples and µV scales"
	case "spikeinterface":
		what = "a SpikeInterface folder, whose binary.json states the sample type"
	default:
		what = "a raw file"
	}
	switch {
	case opts.DType != "" && format != "raw":
		return fmt.Errorf("recording: %s: a sample type (dtype %s) applies only to raw files, and this is %s; leave -dtype out", path, opts.DType, what)
	case opts.Scale != 0 && format != "raw" && format != "spikeinterface":
		return fmt.Errorf("recording: %s: a scale (%g) applies only to float32 raw files and SpikeInterface folders, and this is %s; leave -scale out", path, opts.Scale, what)
	case opts.Stream != "" && format != "openephys":
		return fmt.Errorf("recording: %s: a stream (%q) applies only to Open Ephys recordings, and this is %s; leave -stream out", path, opts.Stream, what)
	case opts.StrictSize && format != "spikeglx":
		return fmt.Errorf("recording: %s: the strict size check applies only to SpikeGLX files (against the .meta's fileSizeBytes), and this is %s; leave -strict-size out", path, what)
	}
	return nil
}

// MinRate is the lowest sample rate, in Hz, that [OpenFiles] takes as
// given (OpenOptions.Rate): extracellular recordings for spike sorting
// are sampled at 10 kHz or more, and a rate under 1 kHz is a rate typed
// in kHz, whose run would put the 300-Hz high-pass above the Nyquist
// frequency and every time off by a factor of 1000.
const MinRate = 1000

// CheckRate refuses a sample rate given in opts that no extracellular
// recording has, with an [OptionError] that suggests the rate in Hz: a
// rate under [MinRate] ("a rate of 30 Hz … did you mean -rate 30000?")
// or one below zero.
func (opts OpenOptions) CheckRate() error {
	switch r := opts.Rate; {
	case r < 0 || math.IsNaN(r):
		return &OptionError{Msg: fmt.Sprintf("-rate %g: a sample rate must be a positive number of Hz", r)}
	case r > 0 && r < MinRate:
		return &OptionError{Msg: fmt.Sprintf("-rate %g: the sample rate is in Hz and extracellular recordings are sampled at 10000 Hz or more "+
			"(dspk takes none under %d Hz); did you mean -rate %g (%g kHz)?", r, MinRate, r*1000, r)}
	}
	return nil
}

// OpenFiles opens one recording from several paths: one path is
// [Open]'s, with a glob pattern (run_g0_t*.imec0.ap.bin, quoted from the
// shell) expanded first; several (or a pattern matching several) must be
// SpikeGLX .bin files of one run, which are sorted by gate and trigger
// ([SortRunFiles]) and read as one recording ([Concat]). A sample rate
// that no extracellular recording has is refused first ([OpenOptions.CheckRate]).
func OpenFiles(paths []string, opts OpenOptions) (Recording, error) {
	if err := opts.CheckRate(); err != nil {
		return nil, err
	}
	var all []string
	for _, p := range paths {
		if strings.ContainsAny(p, "*?[") && !exists(p) {
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, fmt.Errorf("recording: pattern %s: %w", p, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("recording: no file matches %s", p)
			}
			all = append(all, m...)
			continue
		}
		all = append(all, p)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("recording: no recording given")
	}
	if len(all) == 1 {
		return Open(all[0], opts)
	}
	sorted, err := SortRunFiles(all)
	if err != nil {
		return nil, err
	}
	var parts []Recording
	fail := func(err error) (Recording, error) {
		for _, p := range parts {
			p.Close()
		}
		return nil, err
	}
	for _, p := range sorted {
		if strings.ToLower(filepath.Ext(p)) != ".bin" || !exists(MetaPath(p)) {
			return fail(fmt.Errorf("recording: %s: several files are read as one only for SpikeGLX .bin files with their .meta", p))
		}
		r, err := Open(p, opts)
		if err != nil {
			return fail(err)
		}
		parts = append(parts, r)
	}
	c, err := NewConcat(parts)
	if err != nil {
		return fail(err)
	}
	return c, nil
}

func open(path string, opts OpenOptions) (Recording, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	if st.IsDir() || filepath.Base(path) == "binary.json" || filepath.Base(path) == "si_folder.json" {
		if IsSIFolder(path) || !st.IsDir() {
			s, err := OpenSIFolder(path, opts.Scale)
			if err != nil {
				return nil, err
			}
			return s, nil
		}
		if !exists(filepath.Join(path, "structure.oebin")) {
			bins, err := FindSpikeGLXRun(path)
			if err != nil {
				return nil, err
			}
			if len(bins) > 0 {
				return OpenFiles(bins, opts)
			}
		}
		return OpenOpenEphysStream(path, opts.Stream)
	}
	base := filepath.Base(path)
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case ext == ".oebin":
		return OpenOpenEphysStream(path, opts.Stream)
	case ext == ".meta":
		return nil, fmt.Errorf("recording: %s is a SpikeGLX meta file; give the .bin next to it", path)
	case ext == ".bin" && exists(MetaPath(path)):
		return openSpikeGLX(path, opts.StrictSize)
	case base == "continuous.dat":
		oebin := filepath.Join(filepath.Dir(path), "..", "..", "structure.oebin")
		if exists(oebin) {
			stream := opts.Stream
			if stream == "" {
				stream = filepath.Base(filepath.Dir(path))
			}
			return OpenOpenEphysStream(oebin, stream)
		}
	}
	switch ext {
	case ".bin", ".dat", ".raw":
	default:
		return nil, fmt.Errorf("recording: %s: unknown format (want a SpikeGLX .bin with its .meta, an Open Ephys structure.oebin, or a raw .bin/.dat/.raw)", path)
	}
	ch, rate := opts.Channels, opts.Rate
	ro := RawOptions{Scale: opts.Scale}
	if opts.DType != "" {
		dt, err := ParseDType(opts.DType)
		if err != nil {
			return nil, err
		}
		ro.DType = dt
	}
	info := rawInfoPath(path)
	if exists(info) {
		io, err := readRawInfo(info)
		if err != nil {
			return nil, err
		}
		if ch != 0 && ch != io.Channels {
			return nil, fmt.Errorf("recording: %s: %d channels were given but %s states %d", path, ch, info, io.Channels)
		}
		if rate != 0 && rate != io.Rate {
			return nil, fmt.Errorf("recording: %s: a rate of %g Hz was given but %s states %g Hz", path, rate, info, io.Rate)
		}
		if opts.DType != "" && ro.DType != io.DType {
			return nil, fmt.Errorf("recording: %s: dtype %s was given but %s states %s", path, ro.DType, info, io.DType)
		}
		ch, rate, ro.DType = io.Channels, io.Rate, io.DType
		if ro.Scale == 0 {
			ro.Scale = io.Scale
		}
		if ro.DType == Float32 && ro.Scale == 0 {
			return nil, fmt.Errorf("recording: %s: %s states float32 data but no \"scale\" (int16 counts per stored unit); add one or give -scale", path, info)
		}
	}
	if ch == 0 || rate == 0 {
		var missing []string
		if ch == 0 {
			missing = append(missing, "--channels")
		}
		if rate == 0 {
			missing = append(missing, "--rate")
		}
		return nil, fmt.Errorf("recording: %s is a raw file without a SpikeGLX .meta or info.json: give %s", path, strings.Join(missing, " and "))
	}
	ro.Channels, ro.Rate = ch, rate
	return OpenRawType(path, ro)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// CheckSpikeBand returns an error naming the file if rec holds a
// low-pass band, which has no spikes to detect: a SpikeGLX LF stream
// (.lf.bin) or an Open Ephys stream below [MinSpikeRate].
func CheckSpikeBand(rec Recording) error {
	r := rec
	if c, ok := rec.(*Concat); ok {
		r = c.parts[0]
	}
	switch v := r.(type) {
	case *SpikeGLX:
		if v.IsLFP() {
			return fmt.Errorf("recording: %s is a SpikeGLX LF-band file (%g Hz, low-passed below about 1 kHz) and holds no spikes; give the .ap.bin of the same run", rec.Name(), rec.SampleRate())
		}
	case *OpenEphys:
		if v.IsLFP() {
			return fmt.Errorf("recording: %s: stream %s is at %g Hz, an LFP rate, and holds no spikes; choose the spike-band stream with -stream", rec.Name(), v.id.FullName(), rec.SampleRate())
		}
	}
	return nil
}
