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
	bin    *binFile
	oebin  string
	stream OebinStream
	uv     []float64
}

// OpenOpenEphys opens the first continuous stream of an Open Ephys binary
// recording. path is a structure.oebin file or the folder that holds one.
func OpenOpenEphys(path string) (Recording, error) {
	return OpenOpenEphysStream(path, "")
}

// OpenOpenEphysStream opens the continuous stream whose folder_name
// (without slashes) or stream_name is stream; "" picks the first. path is
// a structure.oebin file or the folder that holds one. The
// continuous.dat must be a whole number of num_channels-channel int16
// time points; errors name the file.
func OpenOpenEphysStream(path, stream string) (Recording, error) {
	r, err := openOpenEphys(path, stream)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func openOpenEphys(path, stream string) (*OpenEphys, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "structure.oebin")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	o, err := ParseOebin(f, path)
	f.Close()
	if err != nil {
		return nil, err
	}
	if len(o.Continuous) == 0 {
		return nil, fmt.Errorf("recording: %s: no continuous streams", path)
	}
	k := -1
	var names []string
	for i, s := range o.Continuous {
		names = append(names, s.Folder())
		if stream == "" || s.Folder() == strings.Trim(stream, "/") || (s.StreamName != "" && s.StreamName == stream) {
			k = i
			break
		}
	}
	if k < 0 {
		return nil, fmt.Errorf("recording: %s: no continuous stream %q (streams: %s)", path, stream, strings.Join(names, ", "))
	}
	s := o.Continuous[k]
	dat := filepath.Join(filepath.Dir(path), "continuous", filepath.FromSlash(s.Folder()), "continuous.dat")
	if _, err := os.Stat(dat); err != nil {
		return nil, fmt.Errorf("recording: %s: stream %q: %w", path, s.Folder(), err)
	}
	bin, err := openBinFile(dat, s.NumChannels, 0)
	if err != nil {
		return nil, fmt.Errorf("%w (num_channels=%d from %s)", err, s.NumChannels, path)
	}
	return &OpenEphys{bin: bin, oebin: path, stream: s, uv: s.MicrovoltsPerCount()}, nil
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
