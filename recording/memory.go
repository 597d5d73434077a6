package recording

import (
	"fmt"
)

// memory is a Recording held in a slice.
type memory struct {
	name     string
	data     []int16
	channels int
	rate     float64
	uv       []float64
}

// NewMemory returns a Recording that reads from data, interleaved as
// data[t*channels+c]. uvPerCount gives each channel's scale; nil means
// unknown (zeros). The slice is not copied. NewMemory panics if channels
// is not positive, len(data) is not a multiple of channels, or
// uvPerCount is neither nil nor of length channels.
func NewMemory(name string, data []int16, channels int, rate float64, uvPerCount []float64) Recording {
	if channels <= 0 {
		panic(fmt.Sprintf("recording: NewMemory with %d channels", channels))
	}
	if len(data)%channels != 0 {
		panic(fmt.Sprintf("recording: NewMemory with %d values, not a multiple of %d channels", len(data), channels))
	}
	if uvPerCount == nil {
		uvPerCount = make([]float64, channels)
	}
	if len(uvPerCount) != channels {
		panic(fmt.Sprintf("recording: NewMemory with %d scales for %d channels", len(uvPerCount), channels))
	}
	return &memory{name: name, data: data, channels: channels, rate: rate, uv: append([]float64(nil), uvPerCount...)}
}

func (m *memory) Name() string                  { return m.name }
func (m *memory) Format() string                { return "memory" }
func (m *memory) Channels() int                 { return m.channels }
func (m *memory) SampleRate() float64           { return m.rate }
func (m *memory) Samples() int64                { return int64(len(m.data) / m.channels) }
func (m *memory) MicrovoltsPerCount() []float64 { return append([]float64(nil), m.uv...) }
func (m *memory) Close() error                  { return nil }

func (m *memory) ReadInt16(dst []int16, start int64, n int) error {
	if err := checkRead(m.name, m.channels, m.Samples(), dst, start, n); err != nil {
		return err
	}
	copy(dst[:n*m.channels], m.data[start*int64(m.channels):])
	return nil
}
