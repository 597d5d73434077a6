package recording

import "dspk/probe"

// Recording is a multichannel int16 recording stored interleaved by time
// point: every channel of sample 0, then every channel of sample 1, and
// so on. Implementations read on demand and never load the whole file.
type Recording interface {
	// Name identifies the recording in messages (usually its path).
	Name() string
	// Format names the reader ("spikeglx", "openephys", "raw", "memory").
	Format() string
	// Channels is the number of channels stored per time point,
	// including non-neural channels such as a sync word.
	Channels() int
	// SampleRate is the sampling rate in Hz.
	SampleRate() float64
	// Samples is the number of time points.
	Samples() int64
	// MicrovoltsPerCount gives the scale of each stored channel (0 where
	// no scale is known, for example a sync channel).
	MicrovoltsPerCount() []float64
	// ReadInt16 reads samples [start, start+n) into dst, interleaved as
	// stored: dst[t*Channels()+c]. dst must hold n*Channels() values.
	// Reading past the end is an error that names the file and sample.
	ReadInt16(dst []int16, start int64, n int) error
	// Close releases the file.
	Close() error
}

// Prober is implemented by recordings whose files carry probe geometry
// (SpikeGLX metas with snsGeomMap or snsShankMap).
type Prober interface {
	// Probe returns the geometry the file states, or nil if it states none.
	Probe() *probe.Probe
}
