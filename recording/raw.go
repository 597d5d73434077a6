package recording

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Raw is a headerless little-endian int16 recording (.bin, .dat, .raw)
// opened by [OpenRaw].
type Raw struct {
	bin  *binFile
	rate float64
	uv   []float64
}

// OpenRaw opens a headerless little-endian int16 file with channels
// interleaved channels sampled at rate Hz. It returns an error naming
// the file if the file size is not a multiple of 2·channels bytes. No
// µV scale is known: [Raw.MicrovoltsPerCount] is all zeros.
func OpenRaw(path string, channels int, rate float64) (Recording, error) {
	r, err := openRaw(path, channels, rate)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func openRaw(path string, channels int, rate float64) (*Raw, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("recording: %s: sample rate %g Hz: must be positive", path, rate)
	}
	b, err := openBinFile(path, channels, 0)
	if err != nil {
		return nil, err
	}
	return &Raw{bin: b, rate: rate, uv: make([]float64, channels)}, nil
}

// Name returns the file path.
func (r *Raw) Name() string { return r.bin.name }

// Format returns "raw".
func (r *Raw) Format() string { return "raw" }

// Channels returns the number of interleaved channels.
func (r *Raw) Channels() int { return r.bin.channels }

// SampleRate returns the rate given to OpenRaw.
func (r *Raw) SampleRate() float64 { return r.rate }

// Samples returns the number of time points in the file.
func (r *Raw) Samples() int64 { return r.bin.samples }

// MicrovoltsPerCount returns zeros: a raw file carries no scale.
func (r *Raw) MicrovoltsPerCount() []float64 { return append([]float64(nil), r.uv...) }

// ReadInt16 reads samples [start, start+n) into dst (see [Recording]).
func (r *Raw) ReadInt16(dst []int16, start int64, n int) error { return r.bin.readInt16(dst, start, n) }

// Close closes the file.
func (r *Raw) Close() error { return r.bin.close() }

// rawInfo is the info.json that sits next to some raw data sets
// (tridesclous_datasets): {"sample_rate": 15000.0, "shape": [-1, 4],
// "dtype": "int16"}.
type rawInfo struct {
	SampleRate float64 `json:"sample_rate"`
	Shape      []int64 `json:"shape"`
	Dtype      string  `json:"dtype"`
}

// readRawInfo reads and checks an info.json; it returns the channel count
// and rate.
func readRawInfo(path string) (channels int, rate float64, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("recording: %w", err)
	}
	var info rawInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return 0, 0, fmt.Errorf("recording: %s: %v", path, err)
	}
	if info.Dtype != "int16" {
		return 0, 0, fmt.Errorf("recording: %s: dtype %q: only int16 is supported", path, info.Dtype)
	}
	if len(info.Shape) != 2 || info.Shape[1] <= 0 || info.Shape[1] > 1<<20 {
		return 0, 0, fmt.Errorf("recording: %s: shape %v: want [samples, channels] with channels > 0", path, info.Shape)
	}
	if !(info.SampleRate > 0) || math.IsInf(info.SampleRate, 0) {
		return 0, 0, fmt.Errorf("recording: %s: sample_rate %g: must be positive", path, info.SampleRate)
	}
	return int(info.Shape[1]), info.SampleRate, nil
}

// rawInfoPath is the info.json next to a raw file.
func rawInfoPath(path string) string { return filepath.Join(filepath.Dir(path), "info.json") }
