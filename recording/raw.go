package recording

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Raw is a headerless little-endian recording (.bin, .dat, .raw) of
// int16, uint16 or float32 samples opened by [OpenRaw] or [OpenRawType].
type Raw struct {
	bin  *binFile
	rate float64
	uv   []float64
}

// RawOptions describes a headerless file for [OpenRawType].
type RawOptions struct {
	// Channels is the number of interleaved channels.
	Channels int
	// Rate is the sample rate in Hz.
	Rate float64
	// DType is the sample type (Int16 by default).
	DType DType
	// Scale is the number of int16 counts per stored unit of a float32
	// file: count = round(value·Scale), clipped to the int16 range. It
	// is required for float32 (pick it so that the noise spans tens of
	// counts: 1 for data in µV of a 0.1–1 µV/bit system) and must be 0
	// or 1 otherwise.
	Scale float64
}

// OpenRawType opens a headerless little-endian file described by o.
// uint16 samples (Intan's amplifier .dat) are centred by subtracting
// 32768, exactly; float32 samples are scaled by o.Scale and rounded.
func OpenRawType(path string, o RawOptions) (Recording, error) {
	switch {
	case o.DType == Float32 && !(o.Scale > 0 && o.Scale < 1e12):
		return nil, fmt.Errorf("recording: %s: float32 data need a scale (counts per stored unit, e.g. -scale 1 for µV), got %g", path, o.Scale)
	case o.DType != Float32 && o.Scale != 0 && o.Scale != 1:
		return nil, fmt.Errorf("recording: %s: a scale (%g) applies only to float32 data, not %s", path, o.Scale, o.DType)
	}
	if !(o.Rate > 0) || math.IsInf(o.Rate, 0) {
		return nil, fmt.Errorf("recording: %s: sample rate %g Hz: must be positive", path, o.Rate)
	}
	b, err := openBinFileType(path, o.Channels, 0, o.DType, o.Scale, false)
	if err != nil {
		return nil, err
	}
	if o.DType == Float32 {
		if err := b.checkFinite(); err != nil {
			b.close()
			return nil, err
		}
	}
	return &Raw{bin: b, rate: o.Rate, uv: make([]float64, o.Channels)}, nil
}

// DType returns the stored sample type.
func (r *Raw) DType() DType { return r.bin.dtype }

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
// "dtype": "int16"}; dspk also reads "scale" (counts per stored unit of
// float32 data).
type rawInfo struct {
	SampleRate float64 `json:"sample_rate"`
	Shape      []int64 `json:"shape"`
	Dtype      string  `json:"dtype"`
	Scale      float64 `json:"scale"`
}

// readRawInfo reads and checks an info.json.
func readRawInfo(path string) (RawOptions, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return RawOptions{}, fmt.Errorf("recording: %w", err)
	}
	var info rawInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return RawOptions{}, fmt.Errorf("recording: %s: %v", path, err)
	}
	if info.Dtype == "" {
		return RawOptions{}, fmt.Errorf("recording: %s: no dtype (int16, uint16 or float32)", path)
	}
	dt, err := ParseDType(info.Dtype)
	if err != nil {
		return RawOptions{}, fmt.Errorf("recording: %s: %w", path, err)
	}
	if len(info.Shape) != 2 || info.Shape[1] <= 0 || info.Shape[1] > 1<<20 {
		return RawOptions{}, fmt.Errorf("recording: %s: shape %v: want [samples, channels] with channels > 0", path, info.Shape)
	}
	if !(info.SampleRate > 0) || math.IsInf(info.SampleRate, 0) {
		return RawOptions{}, fmt.Errorf("recording: %s: sample_rate %g: must be positive", path, info.SampleRate)
	}
	if !(info.Scale >= 0) || math.IsInf(info.Scale, 0) {
		return RawOptions{}, fmt.Errorf("recording: %s: scale %g: must be positive", path, info.Scale)
	}
	return RawOptions{Channels: int(info.Shape[1]), Rate: info.SampleRate, DType: dt, Scale: info.Scale}, nil
}

// rawInfoPath is the info.json next to a raw file.
func rawInfoPath(path string) string { return filepath.Join(filepath.Dir(path), "info.json") }
