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
}

// MetaPath returns the .meta file that belongs to a SpikeGLX .bin:
// <base>.meta for <base>.bin.
func MetaPath(binPath string) string {
	return strings.TrimSuffix(binPath, ".bin") + ".meta"
}

// OpenSpikeGLX opens a SpikeGLX .bin and the <base>.meta next to it. It
// checks the .bin's real size against the meta's fileSizeBytes and
// nSavedChans and computes each channel's µV per count (see
// [Meta.MicrovoltsPerCount]); errors name the files. A malformed geometry
// table does not stop the file from opening: [SpikeGLX.Probe] then
// returns nil and [SpikeGLX.ProbeError] says why.
func OpenSpikeGLX(binPath string) (*SpikeGLX, error) {
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
	if meta.FileSizeBytes >= 0 && st.Size() != meta.FileSizeBytes {
		return nil, fmt.Errorf("recording: %s is %d bytes but %s states fileSizeBytes=%d (truncated or mismatched files)",
			binPath, st.Size(), metaPath, meta.FileSizeBytes)
	}
	uv, err := meta.MicrovoltsPerCount()
	if err != nil {
		return nil, err
	}
	bin, err := openBinFile(binPath, meta.NSavedChans, 0)
	if err != nil {
		return nil, fmt.Errorf("%w (nSavedChans=%d from %s)", err, meta.NSavedChans, metaPath)
	}
	s := &SpikeGLX{Meta: meta, bin: bin, uv: uv}
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
