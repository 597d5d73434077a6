package recording

import (
	"fmt"
	"os"
	"strings"

	"dspk/probe"
)

// SpikeGLX is a SpikeGLX .bin recording with its parsed .meta.
type SpikeGLX struct {
	// Meta is the parsed .meta file.
	Meta *Meta

	bin      *binFile
	uv       []float64
	probe    *probe.Probe
	probeErr error
	warnings []string
}

// MetaPath returns the .meta file that belongs to a SpikeGLX .bin:
// <base>.meta for <base>.bin.
func MetaPath(binPath string) string {
	return strings.TrimSuffix(binPath, ".bin") + ".meta"
}

// OpenSpikeGLX opens a SpikeGLX .bin and the <base>.meta next to it. It
// checks the .bin's real size against the meta's fileSizeBytes and
// nSavedChans and computes each channel's µV per count (see
// [Meta.MicrovoltsPerCount]); errors name the files. A size that
// disagrees with fileSizeBytes is an error; [OpenSpikeGLXLenient] opens
// such a file with a warning. A malformed geometry table does not stop
// the file from opening: [SpikeGLX.Probe] then returns nil and
// [SpikeGLX.ProbeError] says why.
func OpenSpikeGLX(binPath string) (*SpikeGLX, error) { return openSpikeGLX(binPath, true) }

// OpenSpikeGLXLenient is [OpenSpikeGLX] for a crashed or trimmed
// recording: a .bin whose size disagrees with fileSizeBytes is opened
// with its real size (whole time points; a partial one at the end is
// ignored) and [SpikeGLX.Warnings] says so, as SpikeInterface and
// Kilosort4 use the real size.
func OpenSpikeGLXLenient(binPath string) (*SpikeGLX, error) { return openSpikeGLX(binPath, false) }

func openSpikeGLX(binPath string, strict bool) (*SpikeGLX, error) {
	if !strings.HasSuffix(binPath, ".bin") {
		return nil, fmt.Errorf("recording: %s: a SpikeGLX data file ends in .bin", binPath)
	}
	metaPath := MetaPath(binPath)
	mf, err := os.Open(metaPath)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("recording: %s: no SpikeGLX meta file %s next to it", binPath, metaPath)
		}
		return nil, fmt.Errorf("recording: %w", err)
	}
	meta, err := ParseMeta(mf, metaPath)
	mf.Close()
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(binPath)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	var warn []string
	mismatch := meta.FileSizeBytes >= 0 && st.Size() != meta.FileSizeBytes
	if mismatch {
		msg := fmt.Sprintf("%s is %d bytes but %s states fileSizeBytes=%d (truncated or mismatched files)",
			binPath, st.Size(), metaPath, meta.FileSizeBytes)
		if strict {
			return nil, fmt.Errorf("recording: %s", msg)
		}
		row := int64(2 * meta.NSavedChans)
		warn = append(warn, fmt.Sprintf("%s; using the real size, %d whole time points (%.3f s)",
			msg, st.Size()/row, float64(st.Size()/row)/meta.SampleRate))
	}
	uv, err := meta.MicrovoltsPerCount()
	if err != nil {
		return nil, err
	}
	warn = append(warn, meta.ScaleWarnings(uv)...)
	bin, err := openBinFileType(binPath, meta.NSavedChans, 0, Int16, 1, mismatch)
	if err != nil {
		return nil, fmt.Errorf("%w (nSavedChans=%d from %s)", err, meta.NSavedChans, metaPath)
	}
	s := &SpikeGLX{Meta: meta, bin: bin, uv: uv, warnings: warn}
	s.probe, s.probeErr = meta.Probe()
	return s, nil
}

// Name returns the .bin path.
func (s *SpikeGLX) Name() string { return s.bin.name }

// Format returns "spikeglx".
func (s *SpikeGLX) Format() string { return "spikeglx" }

// Channels returns nSavedChans, sync channel included.
func (s *SpikeGLX) Channels() int { return s.bin.channels }

// SampleRate returns imSampRate (niSampRate, obSampRate) as float64.
func (s *SpikeGLX) SampleRate() float64 { return s.Meta.SampleRate }

// Samples returns the number of time points in the .bin.
func (s *SpikeGLX) Samples() int64 { return s.bin.samples }

// MicrovoltsPerCount returns a copy of each saved channel's µV per count
// (0 for the sync channel).
func (s *SpikeGLX) MicrovoltsPerCount() []float64 { return append([]float64(nil), s.uv...) }

// ReadInt16 reads samples [start, start+n) into dst (see [Recording]).
func (s *SpikeGLX) ReadInt16(dst []int16, start int64, n int) error {
	return s.bin.readInt16(dst, start, n)
}

// Close closes the .bin.
func (s *SpikeGLX) Close() error { return s.bin.close() }

// Probe returns the geometry the meta states (see [Meta.Probe]), or nil
// if it states none or its tables are malformed.
func (s *SpikeGLX) Probe() *probe.Probe { return s.probe }

// ProbeError returns why Probe is nil when the meta's geometry tables
// could not be used, or nil.
func (s *SpikeGLX) ProbeError() error { return s.probeErr }

// ProbeContradictions is the meta's [Meta.ProbeContradictions].
func (s *SpikeGLX) ProbeContradictions(p *probe.Probe, preset string) []string {
	return s.Meta.ProbeContradictions(p, preset)
}

// Warnings returns what was wrong with the files but did not stop them
// from opening (a size that disagrees with fileSizeBytes).
func (s *SpikeGLX) Warnings() []string { return append([]string(nil), s.warnings...) }

// IsLFP reports whether the file is a SpikeGLX LF-band stream (a
// Neuropixels 1.0 .lf.bin: LF channels saved and no AP channels), which
// holds no spikes.
func (s *SpikeGLX) IsLFP() bool {
	if _, ok := s.Meta.Fields["snsApLfSy"]; ok {
		return s.Meta.SavedAPLFSY[0] == 0 && s.Meta.SavedAPLFSY[1] > 0
	}
	return strings.HasSuffix(s.bin.name, ".lf.bin")
}
