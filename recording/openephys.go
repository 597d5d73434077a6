package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"dspk/probe"
)

// Oebin is the part of an Open Ephys binary structure.oebin that dspk
// reads.
type Oebin struct {
	// GUIVersion is the "GUI version" string.
	GUIVersion string `json:"GUI version"`
	// Continuous lists the continuous streams.
	Continuous []OebinStream `json:"continuous"`
}

// OebinStream is one continuous stream of a structure.oebin.
type OebinStream struct {
	// FolderName is the stream's folder under continuous/ (often with a
	// trailing '/').
	FolderName string `json:"folder_name"`
	// SampleRate is the rate in Hz.
	SampleRate float64 `json:"sample_rate"`
	// SourceProcessorName names the processor that made the stream.
	SourceProcessorName string `json:"source_processor_name"`
	// StreamName names the stream (GUI 0.6 on).
	StreamName string `json:"stream_name"`
	// NumChannels is the number of interleaved channels.
	NumChannels int `json:"num_channels"`
	// Channels describes each channel.
	Channels []OebinChannel `json:"channels"`
}

// OebinChannel describes one channel of a stream.
type OebinChannel struct {
	// ChannelName is e.g. "CH1" or "AP1".
	ChannelName string `json:"channel_name"`
	// Description is free text.
	Description string `json:"description"`
	// Identifier is e.g. "genericdata.continuous".
	Identifier string `json:"identifier"`
	// BitVolts is the value of one count in Units.
	BitVolts float64 `json:"bit_volts"`
	// Units is "uV" for headstage channels and "V" for ADC channels.
	Units string `json:"units"`
}

// Folder is the stream's folder name without surrounding slashes.
func (s OebinStream) Folder() string { return strings.Trim(s.FolderName, `/\`) }

// MicrovoltsPerCount returns bit_volts converted to µV per count for
// each channel: as is for "uV"/"µV" (or no unit), ×1e3 for "mV" and ×1e6
// for "V".
func (s OebinStream) MicrovoltsPerCount() []float64 {
	uv := make([]float64, len(s.Channels))
	for i, c := range s.Channels {
		switch strings.TrimSpace(c.Units) {
		case "V":
			uv[i] = c.BitVolts * 1e6
		case "mV":
			uv[i] = c.BitVolts * 1e3
		default:
			uv[i] = c.BitVolts
		}
	}
	return uv
}

// ParseOebin parses a structure.oebin from r; name is used in errors. It
// checks every continuous stream: a folder name that stays inside
// continuous/, a positive sample rate, a positive channel count that
// matches the channel list, and finite non-negative bit_volts.
func ParseOebin(r io.Reader, name string) (*Oebin, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("recording: %s: %w", name, err)
	}
	var o Oebin
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("recording: %s: not a valid structure.oebin: %v", name, err)
	}
	for i, s := range o.Continuous {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("recording: %s: continuous stream %d (%q): %s", name, i, s.FolderName, fmt.Sprintf(format, a...))
		}
		f := s.Folder()
		if f == "" || f == "." || !filepath.IsLocal(filepath.FromSlash(f)) || filepath.IsAbs(s.FolderName) {
			return nil, bad("folder_name must name a folder under continuous/")
		}
		if !(s.SampleRate > 0) || math.IsInf(s.SampleRate, 0) {
			return nil, bad("sample_rate %g: must be positive", s.SampleRate)
		}
		if s.NumChannels <= 0 || s.NumChannels > maxSavedChans {
			return nil, bad("num_channels %d: want 1…%d", s.NumChannels, maxSavedChans)
		}
		if len(s.Channels) != s.NumChannels {
			return nil, bad("num_channels is %d but %d channels are described", s.NumChannels, len(s.Channels))
		}
		for j, c := range s.Channels {
			if !(c.BitVolts >= 0) || math.IsInf(c.BitVolts, 0) {
				return nil, bad("channel %d (%s): bit_volts %g: must be finite and non-negative", j, c.ChannelName, c.BitVolts)
			}
		}
	}
	return &o, nil
}

// OpenEphys is one continuous stream of an Open Ephys binary recording:
// continuous/<folder_name>/continuous.dat next to structure.oebin.
type OpenEphys struct {
	bin      *binFile
	oebin    string
	stream   OebinStream
	id       OEStream
	uv       []float64
	first    int64
	hasFirst bool
	probe    *probe.Probe
	probeErr error
	settings *NPProbe // the settings.xml's probe of the stream, if any
	warnings []string
}

// OpenOpenEphys opens the spike-band stream of an Open Ephys binary
// recording (see [OpenOpenEphysStream] with stream "").
func OpenOpenEphys(path string) (Recording, error) {
	return OpenOpenEphysStream(path, "")
}

// OpenOpenEphysStream opens one continuous stream found under path: a
// structure.oebin, or a recording, experiment, Record Node or session
// folder (see [FindOpenEphysStreams]). stream picks it as
// [SelectOpenEphysStream] does; "" takes the only stream at a spike-band
// rate. The continuous.dat must be a whole number of num_channels-channel
// int16 time points; errors name the file. The first sample number is
// read from sample_numbers.npy when present, and the Neuropixels
// geometry from the Record Node's settings.xml (see [OpenEphys.Probe]).
func OpenOpenEphysStream(path, stream string) (Recording, error) {
	all, err := FindOpenEphysStreams(path)
	if err != nil {
		return nil, err
	}
	s, err := SelectOpenEphysStream(all, stream, path)
	if err != nil {
		return nil, err
	}
	r, err := openOpenEphys(s)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func openOpenEphys(id OEStream) (*OpenEphys, error) {
	s := id.Stream
	path := id.Oebin
	dat := filepath.Join(filepath.Dir(path), "continuous", filepath.FromSlash(s.Folder()), "continuous.dat")
	if _, err := os.Stat(dat); err != nil {
		return nil, fmt.Errorf("recording: %s: stream %q: %w", path, s.Folder(), err)
	}
	bin, err := openBinFile(dat, s.NumChannels, 0)
	if err != nil {
		return nil, fmt.Errorf("%w (num_channels=%d from %s)", err, s.NumChannels, path)
	}
	r := &OpenEphys{bin: bin, oebin: path, stream: s, id: id, uv: s.MicrovoltsPerCount()}
	sn := filepath.Join(filepath.Dir(dat), "sample_numbers.npy")
	if exists(sn) {
		first, n, err := readFirstInt64(sn)
		switch {
		case err != nil:
			r.warnings = append(r.warnings, err.Error())
		case n != bin.samples:
			r.warnings = append(r.warnings, fmt.Sprintf("%s holds %d sample numbers but %s %d samples; the first sample number is not used", sn, n, dat, bin.samples))
		default:
			r.first, r.hasFirst = first, true
		}
	}
	if set := settingsPath(id); set != "" {
		r.probe, r.settings, r.probeErr = openEphysNPProbe(set, s)
	}
	return r, nil
}

// settingsPath returns the settings.xml of the Record Node above a
// recording (settings_N.xml for experimentN, N > 1), or "" if there is
// none.
func settingsPath(id OEStream) string {
	rec := filepath.Dir(id.Oebin)
	exp := filepath.Dir(rec)
	node := filepath.Dir(exp)
	name := "settings.xml"
	if n := strings.TrimPrefix(filepath.Base(exp), "experiment"); n != "1" && expDir.MatchString(filepath.Base(exp)) {
		name = "settings_" + n + ".xml"
	}
	for _, dir := range []string{node, rec} {
		if p := filepath.Join(dir, name); exists(p) {
			return p
		}
	}
	return ""
}

// Name returns the continuous.dat path.
func (r *OpenEphys) Name() string { return r.bin.name }

// Format returns "openephys".
func (r *OpenEphys) Format() string { return "openephys" }

// Channels returns num_channels.
func (r *OpenEphys) Channels() int { return r.bin.channels }

// SampleRate returns the stream's sample_rate.
func (r *OpenEphys) SampleRate() float64 { return r.stream.SampleRate }

// Samples returns the number of time points in continuous.dat.
func (r *OpenEphys) Samples() int64 { return r.bin.samples }

// MicrovoltsPerCount returns each channel's bit_volts in µV (see
// [OebinStream.MicrovoltsPerCount]).
func (r *OpenEphys) MicrovoltsPerCount() []float64 { return append([]float64(nil), r.uv...) }

// ReadInt16 reads samples [start, start+n) into dst (see [Recording]).
func (r *OpenEphys) ReadInt16(dst []int16, start int64, n int) error {
	return r.bin.readInt16(dst, start, n)
}

// Close closes continuous.dat.
func (r *OpenEphys) Close() error { return r.bin.close() }

// Stream returns the stream's description from structure.oebin.
func (r *OpenEphys) Stream() OebinStream { return r.stream }

// Oebin returns the path of the structure.oebin.
func (r *OpenEphys) Oebin() string { return r.oebin }

// FirstSample returns the number of the file's first sample since
// acquisition start, from sample_numbers.npy, and whether it was read.
// Spike times written by dspk stay relative to the file (sample 0 is the
// file's first), as Kilosort4's are; add this number to align them with
// the Open Ephys clock.
func (r *OpenEphys) FirstSample() (int64, bool) { return r.first, r.hasFirst }

// ID returns where the stream was found and its names.
func (r *OpenEphys) ID() OEStream { return r.id }

// Probe returns the Neuropixels geometry of settings.xml for this
// stream, or nil (no settings.xml, no matching NP_PROBE, or a table that
// could not be used: see [OpenEphys.ProbeError]).
func (r *OpenEphys) Probe() *probe.Probe { return r.probe }

// ProbeError returns why Probe is nil when settings.xml had a probe for
// the stream that could not be used, or nil.
func (r *OpenEphys) ProbeError() error { return r.probeErr }

// Warnings returns problems that did not stop the stream from opening.
func (r *OpenEphys) Warnings() []string { return append([]string(nil), r.warnings...) }

// IsLFP reports whether the stream is at an LFP rate (below 10 kHz).
func (r *OpenEphys) IsLFP() bool { return r.stream.SampleRate < MinSpikeRate }
