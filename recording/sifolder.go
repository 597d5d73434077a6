package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"dspk/probe"
)

// SIFloatMicrovoltsPerCount is the µV per int16 count that a float32
// SpikeInterface folder is read at when no scale is given: its samples
// (in units of gain_to_uV µV) become counts of 0.1 µV, far below the
// noise of any extracellular recording, with a range of ±3.3 mV.
const SIFloatMicrovoltsPerCount = 0.1

// SIFolder is a recording that SpikeInterface saved as a binary folder
// (recording.save(format="binary")): binary.json describes the
// traces_cached_seg<N>.raw files (one per segment), and probegroup.json
// (probe.json before SpikeInterface 0.105) holds the probe. Several
// segments are read one after the other as one recording, as
// SpikeInterface's concatenate_recordings does before Kilosort4 sorts
// them; spike times count from the first sample of segment 0.
type SIFolder struct {
	dir      string
	rec      Recording // the one segment's Raw, or a Concat of them
	files    []string
	dtype    DType
	uv       []float64
	probe    *probe.Probe
	probeErr error
}

// siBinary is the part of binary.json (a dumped BinaryRecordingExtractor)
// that dspk reads.
type siBinary struct {
	Class         string `json:"class"`
	RelativePaths bool   `json:"relative_paths"`
	Kwargs        struct {
		FilePaths   []string   `json:"file_paths"`
		Rate        *float64   `json:"sampling_frequency"`
		NumChannels *int       `json:"num_channels"`
		NumChan     *int       `json:"num_chan"` // SpikeInterface before 0.100
		DType       *string    `json:"dtype"`
		TimeAxis    int        `json:"time_axis"`
		FileOffset  int64      `json:"file_offset"`
		GainToUV    []*float64 `json:"gain_to_uV"`
	} `json:"kwargs"`
}

// IsSIFolder reports whether dir looks like a SpikeInterface folder: it
// holds binary.json, or si_folder.json (which [OpenSIFolder] reads to say
// what is missing or what other kind of folder it is).
func IsSIFolder(dir string) bool {
	for _, name := range []string{"binary.json", "si_folder.json"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// OpenSIFolder opens a SpikeInterface binary folder, dir, or the folder
// of a binary.json or si_folder.json path. It reads from binary.json the
// segment files, sampling_frequency, num_channels, dtype (int16, uint16
// or float32, little-endian), file_offset and gain_to_uV (µV per stored
// unit; offset_to_uV is not needed, as processing is on counts after a
// high-pass filter), and the probe from probegroup.json or probe.json (a
// probeinterface file; several probes are read as one, each probe's
// shanks numbered after the previous probe's). Samples must be stored
// time point by time point (time_axis 0). A float32 folder is read as
// counts of scale per stored unit, by default [SIFloatMicrovoltsPerCount]
// µV when every channel has one gain. Errors name the file at fault.
func OpenSIFolder(dir string, scale float64) (*SIFolder, error) {
	switch filepath.Base(dir) {
	case "binary.json", "si_folder.json":
		dir = filepath.Dir(dir)
	}
	bj := filepath.Join(dir, "binary.json")
	data, err := os.ReadFile(bj)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, siMissingBinary(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	var b siBinary
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("recording: %s: not a SpikeInterface binary.json: %w", bj, jsonPosError(data, err))
	}
	k := &b.Kwargs
	if !strings.HasSuffix(b.Class, ".BinaryRecordingExtractor") {
		return nil, fmt.Errorf("recording: %s: class %q: want SpikeInterface's BinaryRecordingExtractor", bj, b.Class)
	}
	if k.NumChannels == nil {
		k.NumChannels = k.NumChan
	}
	switch {
	case len(k.FilePaths) == 0:
		return nil, fmt.Errorf("recording: %s: kwargs.file_paths lists no segment file", bj)
	case k.Rate == nil || !(*k.Rate > 0) || math.IsInf(*k.Rate, 0):
		return nil, fmt.Errorf("recording: %s: kwargs.sampling_frequency %s: want a positive rate in Hz", bj, ptrString(k.Rate))
	case k.NumChannels == nil || *k.NumChannels <= 0:
		return nil, fmt.Errorf("recording: %s: kwargs.num_channels %s: want a positive channel count", bj, ptrString(k.NumChannels))
	case k.DType == nil:
		return nil, fmt.Errorf("recording: %s: no kwargs.dtype", bj)
	case k.TimeAxis != 0:
		return nil, fmt.Errorf("recording: %s: time_axis %d: dspk reads samples stored time point by time point (time_axis 0); "+
			"save the recording again with SpikeInterface (recording.save(format=\"binary\"))", bj, k.TimeAxis)
	case k.FileOffset < 0:
		return nil, fmt.Errorf("recording: %s: file_offset %d is negative", bj, k.FileOffset)
	}
	ch := *k.NumChannels
	dt, err := ParseDType(*k.DType)
	if err != nil {
		return nil, fmt.Errorf("recording: %s: dtype %q: dspk reads int16, uint16 and float32 (little-endian) samples; "+
			"save the recording with dtype=\"int16\" or \"float32\"", bj, *k.DType)
	}
	gains, err := siGains(bj, k.GainToUV, ch)
	if err != nil {
		return nil, err
	}
	uv := slices.Clone(gains)
	switch {
	case dt != Float32 && scale != 0:
		return nil, fmt.Errorf("recording: %s: a scale (%g) applies only to float32 data, and binary.json states %s; leave -scale out", bj, scale, dt)
	case dt == Float32 && scale == 0:
		if gains[0] == 0 || slices.ContainsFunc(gains, func(g float64) bool { return g != gains[0] }) {
			return nil, fmt.Errorf("recording: %s: float32 samples without one gain_to_uV for every channel: "+
				"give -scale (int16 counts per stored unit)", bj)
		}
		scale = gains[0] / SIFloatMicrovoltsPerCount
	}
	if dt == Float32 {
		for i := range uv {
			uv[i] /= scale
		}
	}
	s := &SIFolder{dir: dir, dtype: dt, uv: uv}
	var parts []Recording
	fail := func(err error) (*SIFolder, error) {
		for _, p := range parts {
			p.Close()
		}
		return nil, err
	}
	for i, f := range k.FilePaths {
		if b.RelativePaths || !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		if !exists(f) {
			return fail(fmt.Errorf("recording: %s: segment %d's file %s is missing", bj, i, f))
		}
		bf, err := openBinFileType(f, ch, k.FileOffset, dt, scale, false)
		if err != nil {
			return fail(fmt.Errorf("%w (as %s states)", err, bj))
		}
		r := &Raw{bin: bf, rate: *k.Rate, uv: make([]float64, ch)}
		parts = append(parts, r)
		if dt == Float32 {
			if err := bf.checkFinite(); err != nil {
				return fail(err)
			}
		}
		s.files = append(s.files, f)
	}
	if len(parts) == 1 {
		s.rec = parts[0]
	} else {
		c, err := NewConcat(parts)
		if err != nil {
			return fail(err)
		}
		s.rec = c
	}
	s.probe, s.probeErr = siProbe(dir, ch)
	return s, nil
}

// siMissingBinary is the error for a folder without binary.json: what
// its si_folder.json says it is, if it has one.
func siMissingBinary(dir string) error {
	sj := filepath.Join(dir, "si_folder.json")
	data, err := os.ReadFile(sj)
	if err != nil {
		return fmt.Errorf("recording: %s: no binary.json: not a SpikeInterface binary folder (save one with recording.save(format=\"binary\"))", dir)
	}
	var d struct {
		Class string `json:"class"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return fmt.Errorf("recording: %s: %w", sj, jsonPosError(data, err))
	}
	return fmt.Errorf("recording: %s: no binary.json next to si_folder.json (class %s): dspk reads SpikeInterface binary folders "+
		"of recordings, written by recording.save(format=\"binary\")", dir, d.Class)
}

// siGains reads gain_to_uV: null or absent is no known scale (zeros).
func siGains(bj string, g []*float64, ch int) ([]float64, error) {
	out := make([]float64, ch)
	if g == nil {
		return out, nil
	}
	if len(g) != ch {
		return nil, fmt.Errorf("recording: %s: %d gain_to_uV values for %d channels", bj, len(g), ch)
	}
	for i, v := range g {
		if v == nil {
			continue
		}
		if math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 {
			return nil, fmt.Errorf("recording: %s: gain_to_uV[%d] = %g: want a finite gain ≥ 0", bj, i, *v)
		}
		out[i] = *v
	}
	return out, nil
}

// siProbe reads the probe of a SpikeInterface folder: probegroup.json,
// else probe.json; nil if there is neither. The probe's rows are the
// recording's channel indices, which are the file's rows.
func siProbe(dir string, ch int) (*probe.Probe, error) {
	for _, name := range []string{"probegroup.json", "probe.json"} {
		p := filepath.Join(dir, name)
		if !exists(p) {
			continue
		}
		pr, err := probe.ReadProbeGroup(p)
		if err != nil {
			return nil, fmt.Errorf("recording: %w", err)
		}
		if pr.NChanFile > ch {
			return nil, fmt.Errorf("recording: %s: a contact is wired to channel %d but binary.json states %d channels", p, pr.NChanFile-1, ch)
		}
		return pr, nil
	}
	return nil, nil
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "missing"
	}
	return fmt.Sprint(*p)
}

// jsonPosError adds the line and column of a JSON syntax or type error.
func jsonPosError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// Name returns the folder's path.
func (s *SIFolder) Name() string { return s.dir }

// Format returns "spikeinterface".
func (s *SIFolder) Format() string { return "spikeinterface" }

// Channels returns num_channels.
func (s *SIFolder) Channels() int { return s.rec.Channels() }

// SampleRate returns sampling_frequency.
func (s *SIFolder) SampleRate() float64 { return s.rec.SampleRate() }

// Samples returns the number of time points of all segments.
func (s *SIFolder) Samples() int64 { return s.rec.Samples() }

// MicrovoltsPerCount returns gain_to_uV per channel (divided by the scale
// of float32 data); zeros where binary.json states none.
func (s *SIFolder) MicrovoltsPerCount() []float64 { return slices.Clone(s.uv) }

// ReadInt16 reads samples [start, start+n) across segments (see
// [Recording]).
func (s *SIFolder) ReadInt16(dst []int16, start int64, n int) error {
	return s.rec.ReadInt16(dst, start, n)
}

// Close closes the segment files.
func (s *SIFolder) Close() error { return s.rec.Close() }

// DType returns the stored sample type.
func (s *SIFolder) DType() DType { return s.dtype }

// Files returns the segment files in reading order.
func (s *SIFolder) Files() []string { return slices.Clone(s.files) }

// SegmentStarts returns the first sample of each segment in the whole.
func (s *SIFolder) SegmentStarts() []int64 {
	if c, ok := s.rec.(*Concat); ok {
		return c.PartStarts()
	}
	return []int64{0}
}

// Probe returns the geometry of the folder's probe file, or nil.
func (s *SIFolder) Probe() *probe.Probe { return s.probe }

// ProbeError returns why the folder's probe file could not be used.
func (s *SIFolder) ProbeError() error { return s.probeErr }
